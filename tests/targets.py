#!/usr/bin/env python3
"""Prints the build outputs that the selected tests of a configured meson
build need, one per line, for `ninja -C BUILD $(...)`: a pass that runs a few
suites then builds those and not every target of the project.

  tests/targets.py BUILD [NAME ...] [--suite S ...] [--no-suite S ...]

Selects as `meson test` does for these forms: no names and no --suite means
every test; --no-suite removes. A suite named "sup:lua" also matches "lua".
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", build, what],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def in_suite(test, name):
    return any(s == name or s.split(":")[-1] == name for s in test["suite"])


def main(argv):
    if not argv:
        sys.exit(__doc__)
    build, rest = argv[0], argv[1:]
    names, suites, no_suites = [], [], []
    i = 0
    while i < len(rest):
        if rest[i] in ("--suite", "--no-suite"):
            if i + 1 == len(rest):
                sys.exit(f"targets.py: {rest[i]} needs a suite name")
            (suites if rest[i] == "--suite" else no_suites).append(rest[i + 1])
            i += 2
        else:
            names.append(rest[i])
            i += 1
    tests = introspect(build, "--tests")
    known = {t["name"] for t in tests}
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.exit(f"targets.py: no such test in {build}: {', '.join(unknown)}")
    chosen = []
    for t in tests:
        picked = (not names and not suites) or t["name"] in names or any(in_suite(t, s) for s in suites)
        if picked and not any(in_suite(t, s) for s in no_suites):
            chosen.append(t)
    targets = introspect(build, "--targets")
    by_id = {t["id"]: t for t in targets}
    by_file = {f: t for t in targets for f in t["filename"]}
    wanted = {}
    for t in chosen:
        for dep in t["depends"]:
            if dep in by_id:
                wanted[dep] = by_id[dep]
        for word in t["cmd"]:
            if word in by_file:
                wanted[by_file[word]["id"]] = by_file[word]
    # What `meson install` installs, for the test that installs: few
    # targets, and any pass may select that test.
    for t in targets:
        if t.get("installed"):
            wanted[t["id"]] = t
    root = os.path.abspath(build)
    for t in wanted.values():
        for f in t["filename"]:
            print(os.path.relpath(f, root))


if __name__ == "__main__":
    main(sys.argv[1:])
