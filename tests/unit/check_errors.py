#!/usr/bin/env python3
"""Compares each function's "Errors:" line in include/sup.h with the codes its
implementation can return: a static scan of lib/api.cpp and of what it calls.

For each SUP_API function defined in lib/api.cpp the scan collects
  - every SUP_E* constant in its body;
  - the codes of Call::rc() (SUP_EINVAL, SUP_ECHILD) where it returns
    proc.rc(), plus SUP_EBUSY where it uses SUP_FINAL_OR_RETURN;
  - recursively, the codes of every function of lib/ whose value it returns:
    called in a return statement, or assigned to a variable that a return
    statement names;
  - a raw "-errno" or "-err" in such a returned path, which is an error: the
    header could not name what it returns (sup_spawn and its variants
    excepted: their header documents that exec errnos pass through), and
    "-EXXX" literals, which count as SUP_EXXX (or must appear by name).
The codes every handle call shares by the header's ERRORS section need not be
repeated: SUP_EINTERNAL (a bug in sup) and SUP_ECANCELED from a call begun
after sup_release (misuse, as after free(3)) when that is all the function
returns it for. A listed code the scan cannot find is reported too.

Usage: check_errors.py include/sup.h lib/
"""
import os
import re
import sys

ALWAYS = {"SUP_EINTERNAL"}
CALL_RC = {"SUP_EINVAL", "SUP_ECHILD"}
SPAWN_FAMILY = {"sup_spawn", "sup_spawn_ex", "sup_spawn_v2"}
CODE = re.compile(r"\bSUP_E[A-Z0-9]+\b")


def strip(text):
    """Comments, string and char literals blanked (lengths kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def body_at(text, brace):
    depth = 0
    for j in range(brace, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[brace + 1:j]
    return ""


DEF = re.compile(r"^[A-Za-z_][\w:<>,*& ]*?\b(?:Process::|Engine::|sup::)?(\w+)\(", re.M)


def definitions(paths):
    """name -> list of bodies, for every function defined at column 0."""
    defs = {}
    for path in paths:
        text = strip(open(path, encoding="utf-8").read())
        for m in DEF.finditer(text):
            if m.group(0).startswith(("return", "if", "for", "while", "switch", "#")):
                continue
            brace = text.find("{", m.end())
            semi = text.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue
            defs.setdefault(m.group(1), []).append(body_at(text, brace))
    return defs


def returned_calls(body):
    """Functions whose value a body returns, and whether it returns raw errno."""
    statements = re.split(r"[;{}]", body)
    returns = [s for s in statements if re.search(r"\breturn\b", s)]
    returned_vars = set()
    for s in returns:
        returned_vars.update(re.findall(r"\b([a-z_]\w*)\b", s.split("return", 1)[1]))
    names = set()
    raw = False
    for s in statements:
        m = re.match(r"\s*(?:[\w:<>]+\s+)?(\w+)\s*=\s*(.*)", s, re.S)
        flows = re.search(r"\breturn\b", s) or (m and m.group(1) in returned_vars)
        if not flows:
            continue
        names.update(re.findall(r"(\w+)\s*\(", s))
        if re.search(r"-\s*(errno|err)\b", s):
            raw = True
    return names, raw


def codes_of(name, defs, seen):
    """Codes a function can return, and whether a raw errno reaches them."""
    if name in seen:
        return set(), False
    seen.add(name)
    codes, raw = set(), False
    for body in defs.get(name, []):
        codes |= set(CODE.findall(body))
        for lit in re.findall(r"-E([A-Z0-9]+)\b", body):
            codes.add("SUP_E" + lit)
        if "proc.rc()" in body or "SUP_FINAL_OR_RETURN" in body:
            codes |= CALL_RC
        if "SUP_FINAL_OR_RETURN" in body:
            codes.add("SUP_EBUSY")
        called, raw_here = returned_calls(body)
        raw = raw or raw_here
        for callee in called:
            if callee != name and callee in defs:
                more, more_raw = codes_of(callee, defs, seen)
                codes |= more
                raw = raw or more_raw
    return codes, raw


def header_errors(header):
    """name -> (set of listed codes, whether the function returns codes)."""
    text = open(header, encoding="utf-8").read()
    out = {}
    for m in re.finditer(r"SUP_API\s+([\w\s*]+?)\s*\**\b(sup_\w+)\s*\(", text):
        ret, name = m.group(1).strip(), m.group(2)
        start = text.rfind("/*", 0, m.start())
        comment = text[start:m.start()] if start >= 0 else ""
        listed = set()
        errors = re.search(r"Errors:(.*?)(?:Thread-safety|\*/)", comment, re.S)
        if errors:
            listed = set(CODE.findall(errors.group(1)))
            listed |= {"SUP_E" + e for e in re.findall(r"\bE([A-Z0-9]+)\b", errors.group(1))}
        elif "as sup_spawn" in comment:
            listed = None  # filled from sup_spawn below
        fallible = ret in ("int", "int64_t", "double")
        out[name] = [listed, fallible]
    for name, entry in out.items():
        if entry[0] is None:
            entry[0] = out["sup_spawn"][0]
    return out


def main():
    header, libdir = sys.argv[1], sys.argv[2]
    sources = sorted(os.path.join(libdir, f) for f in os.listdir(libdir) if f.endswith(".cpp"))
    api_text = strip(open(os.path.join(libdir, "api.cpp"), encoding="utf-8").read())
    api_names = re.findall(r"SUP_API\s+[\w\s*]+?\b(sup_\w+)\s*\(", api_text)
    defs = definitions(sources)
    listed = header_errors(header)
    problems = []
    launch_codes = set()
    for src in sources:
        text = strip(open(src, encoding="utf-8").read())
        for arg in re.findall(r"LaunchError\{\s*([^,]+),", text):
            launch_codes |= set(CODE.findall(arg))
            launch_codes |= {"SUP_E" + e for e in re.findall(r"-E([A-Z0-9]+)\b", arg)}
    for name in api_names:
        if name not in listed:
            problems.append(f"{name}: defined in lib/api.cpp but not declared in the header")
            continue
        documented, fallible = listed[name]
        if not fallible:
            continue
        found, raw = codes_of(name, defs, set())
        if name in SPAWN_FAMILY:
            found |= launch_codes
            raw = False  # exec errnos pass through, as the header says
        if raw:
            problems.append(f"{name}: returns a raw -errno the header cannot name")
        missing = sorted(found - documented - ALWAYS)
        if missing:
            problems.append(f"{name}: can return {', '.join(missing)}, not in its Errors line")
        unfounded = sorted(documented - found - {"SUP_ECANCELED"} - ALWAYS)
        if name in SPAWN_FAMILY:
            unfounded = []  # exec and system errnos pass through as -errno
        if "SUP_ECANCELED" in documented and "SUP_ECANCELED" not in found:
            unfounded.append("SUP_ECANCELED")
        if unfounded:
            problems.append(f"{name}: lists {', '.join(unfounded)}, which no path returns")
    for p in problems:
        print(p)
    print(f"{len(api_names)} functions checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
