"""The JSON spec, written by hand so that any byte string reaches the kernel.

Strings are encoded with ``os.fsencode`` (as subprocess does: undecodable
file names round-trip through surrogateescape) and written into the JSON
text raw: only ``"``, ``\\`` and bytes below 0x20 are escaped, and every
other byte, valid UTF-8 or not, passes through unchanged. A JSON library
would turn invalid UTF-8 into U+FFFD; the C library reads it back byte for
byte.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import math
import os
import re
import signal as _signal
import subprocess
import sys
from typing import IO, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from ._errors import SpecError, SpecTypeError
from ._streams import OutputReader, TextOutputReader

StrOrBytesPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
#: ``env=``: the child's whole environment, typed as typeshed types subprocess's.
Env = Union[Mapping[str, StrOrBytesPath], Mapping[bytes, StrOrBytesPath]]
#: ``env_update=``: changes to the inherited environment; None removes a variable.
EnvUpdate = Union[
    Mapping[str, Optional[StrOrBytesPath]], Mapping[bytes, Optional[StrOrBytesPath]]
]

PIPE = subprocess.PIPE
STDOUT = subprocess.STDOUT
DEVNULL = subprocess.DEVNULL


class Stdio(enum.Enum):
    """sup's own routing beside subprocess's PIPE, STDOUT and DEVNULL."""

    #: The host's own descriptor; for stdout/stderr sup neither captures nor
    #: watches it (no idle clock). For stdin it is what None means.
    INHERIT = "inherit"


INHERIT = Stdio.INHERIT

#: What stdin=, stdout= and stderr= accept: PIPE, DEVNULL, STDOUT, None,
#: INHERIT, a descriptor number or a file object with fileno() (the host's
#: descriptor itself, as subprocess passes it).
StdioArg = Union[int, Stdio, None, IO[Any]]


@dataclasses.dataclass(frozen=True)
class Limits:
    """``limits=``: resource limits the child sets on itself before exec
    (rlimits; in cgroup mode memory and processes bound the whole tree).
    None leaves the host's own limit; a plain dict with these keys works too."""

    memory_bytes: Optional[int] = None
    cpu_seconds: Optional[int] = None
    processes: Optional[int] = None
    file_bytes: Optional[int] = None
    open_files: Optional[int] = None
    core_dump: Optional[bool] = None


@dataclasses.dataclass(frozen=True)
class Sandbox:
    """``sandbox=``: a Landlock ruleset (nothing writable but ``write``),
    ``network=False`` a seccomp filter refusing sockets but AF_UNIX,
    ``tmp=True`` a private TMPDIR; ``strict=True`` refuses to start where the
    kernel cannot enforce it all. None leaves the library's default; a plain
    dict with these keys works too."""

    write: Optional[Sequence[StrOrBytesPath]] = None
    read: Optional[Sequence[StrOrBytesPath]] = None
    exec: Optional[Sequence[StrOrBytesPath]] = None
    network: Optional[bool] = None
    strict: Optional[bool] = None
    tmp: Optional[bool] = None


_LIMIT_KEYS = tuple(f.name for f in dataclasses.fields(Limits))
_SANDBOX_KEYS = tuple(f.name for f in dataclasses.fields(Sandbox))


def host_tty_foreground() -> bool:
    """True when the host's stdin is a terminal whose foreground process group
    is the host's own: a child given that stdin must be made the foreground
    (it runs in a group of its own) to read it, as subprocess's child, in the
    host's group, can."""
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


#: How long a child that cannot have the host's terminal may stay stopped
#: on it (SIGTTIN/SIGTTOU) before sup ends it: see terminal_stop_guard.
TERMINAL_STOP_WAIT = 0.2

#: terminal_stop_guard's answers: the child's stdin is the host's terminal
#: (guarded by input_wait_timeout), or another file while the host's session
#: has a terminal the child may open itself (guarded by tty_stop_timeout).
GUARD_STDIN_TERMINAL = "stdin"
GUARD_OPENED_TERMINAL = "opened"


def host_has_terminal() -> bool:
    """True when the host's session has a controlling terminal (tty_nr in
    /proc/self/stat): a child in a group of its own may open it (/dev/tty)
    and be stopped on it."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        return int(stat.rsplit(b")", 1)[1].split()[4]) != 0
    except (OSError, ValueError, IndexError):
        return False


def terminal_stop_guard(
    stdin: object, input: object, pty: object, tty_foreground: object, input_wait_timeout: object,
    tty_stop_timeout: object = None,
) -> Optional[str]:
    """GUARD_STDIN_TERMINAL when the child's stdin is the host's controlling
    terminal but the child will not be its foreground (a Popen, a
    background host, or tty_foreground=False); else GUARD_OPENED_TERMINAL
    when the host's session has a controlling terminal that the child does
    not get; None when the caller set input_wait_timeout or
    tty_stop_timeout itself, with pty, or when there is no terminal to stop
    on.

    GUARD_OPENED_TERMINAL: a child whose stdin is a pipe, /dev/null or a
    file may still open /dev/tty itself (a password prompt: sudo, ssh);
    from its group, not the foreground, that stops it as a background job,
    forever. sup then ends it once its main process has been stopped so
    (tty_stop_timeout, which never counts a reader waiting on its stdin,
    as subprocess code may leave one on purpose).

    Such a child runs in a process group of its own: reading the terminal
    (or setting its modes) stops it with SIGTTIN/SIGTTOU, and nothing ever
    continues it (a shell's `fg` continues the host's group, not the
    child's), so it would stop forever where subprocess's child, in the
    host's group, reads. sup then ends it at once through the library's
    input-wait watch, which counts such a stop as waiting at once; a reader
    asleep on the terminal cannot occur in a background group.
    """
    if input_wait_timeout is not None or tty_stop_timeout is not None or pty is not False:
        return None
    fd = -1
    if input is not None:
        pass  # the library feeds it: a pipe
    elif stdin is None or stdin is INHERIT:
        fd = 0
        if tty_foreground is True and host_tty_foreground():
            return None  # it gets the terminal (build asks the library)
    elif isinstance(stdin, int) and not isinstance(stdin, bool) and stdin >= 0:
        fd = stdin  # subprocess's PIPE/DEVNULL/STDOUT are negative
    elif callable(getattr(stdin, "fileno", None)) and not isinstance(stdin, (OutputReader, TextOutputReader)):
        try:
            n: object = getattr(stdin, "fileno")()
        except (OSError, ValueError):
            return None  # build reports it
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            return None
        fd = n
    try:
        # tcgetpgrp fails (ENOTTY) unless fd is the controlling terminal.
        if fd >= 0 and os.isatty(fd) and os.tcgetpgrp(fd) > 0:
            return GUARD_STDIN_TERMINAL
    except OSError:
        pass
    return GUARD_OPENED_TERMINAL if host_has_terminal() else None


_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\"}
_NEEDS_ESCAPE = re.compile(rb'[\x00-\x1f"\\]')


def _jstr(raw: bytes) -> bytes:
    if _NEEDS_ESCAPE.search(raw) is None:  # the common case
        return b'"' + raw + b'"'
    out = bytearray(b'"')
    for b in raw:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20:
            out += b"\\u%04x" % b
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


_FS_ENCODING = sys.getfilesystemencoding()


def _fsbytes(value: object, key: str) -> bytes:
    if type(value) is str:
        raw = value.encode(_FS_ENCODING, "surrogateescape")  # os.fsencode, inlined
        if b"\0" in raw:
            raise SpecError(f"{key}: embedded null byte")
        return raw
    try:
        raw = os.fsencode(value)  # type: ignore[arg-type]
    except TypeError:
        raise SpecTypeError(
            f"{key}: must be str, bytes or os.PathLike, not {type(value).__name__}"
        ) from None
    if b"\0" in raw:
        raise SpecError(f"{key}: embedded null byte")
    return raw


def seconds_ms(value: Optional[float], key: str, allow_zero: bool) -> Optional[int]:
    """Seconds as a float to whole milliseconds; None (or inf) is off."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecTypeError(f"{key}: must be a number of seconds or None, not {value!r}")
    if math.isnan(value) or value < 0:
        raise SpecError(f"{key}: must be a non-negative number of seconds, not {value!r}")
    if math.isinf(value):
        return None
    if value == 0 and not allow_zero:
        raise SpecError(f"{key}: must be > 0 seconds, or None for no limit")
    ms = math.ceil(value * 1000)
    if ms > (1 << 53):
        raise SpecError(f"{key}: {value!r} seconds is too large")
    return max(ms, 1) if value > 0 else 0


def _signal_number(value: Union[int, str, None]) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, str):
        n = _lib.api().signal_parse(value.encode())
        if n <= 0:
            raise SpecError(f"signal: no such signal {value!r}")
        return n
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecTypeError(f"signal: must be a signal number or name, not {value!r}")
    n = int(value)
    if not 1 <= n <= _signal.NSIG - 1:
        raise SpecError(f"signal: no such signal {n}")
    return n


_ROUTE_NAMES = {PIPE: "PIPE", STDOUT: "STDOUT", DEVNULL: "DEVNULL"}


class Fd(int):
    """A host descriptor given as stdin/stdout/stderr: {"fd": N}."""


def host_fd(value: object, key: str) -> Optional[Fd]:
    """The descriptor of a file object (its fileno()) or a number >= 0, as
    subprocess takes them for stdin/stdout/stderr; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fd(value) if value >= 0 else None
    fileno = getattr(value, "fileno", None)
    if fileno is None:
        return None
    if isinstance(value, (OutputReader, TextOutputReader)):
        # subprocess's p1.stdout is the pipe; sup's is its capture, whose
        # fileno() only signals readiness: never a child's descriptor.
        raise SpecTypeError(
            f"{key}: a sup Popen's stdout/stderr is sup's capture, not a pipe to pass on "
            "(read it and write to a stdin=PIPE, or give both children os.pipe() ends)"
        )
    n = fileno()  # an io.UnsupportedOperation propagates, as in subprocess
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise SpecTypeError(f"{key}: fileno() returned {n!r}, not a descriptor")
    return Fd(n)


def _route(value: StdioArg, key: str, allowed: Tuple[object, ...], fd_ok: bool = False) -> object:
    if fd_ok:
        fd = host_fd(value, key)
        if fd is not None:
            return fd
    if isinstance(value, bool) or value not in allowed:
        names = ", ".join(
            "None" if a is None else "sup.INHERIT" if a is INHERIT else f"sup.{_ROUTE_NAMES[a]}"  # type: ignore[index]
            for a in allowed
        )
        if not fd_ok and (hasattr(value, "fileno") or (type(value) is int and value >= 0)):
            raise SpecError(f"{key}: must be one of {names}, not {value!r} (not a file or descriptor with pty)")
        raise SpecError(f"{key}: must be one of {names} or a file or descriptor, not {value!r}")
    return value


def _jvalue(value: object, key: str) -> bytes:
    """A JSON value of limits=/sandbox=/user=...: bools, ints, None, paths
    and names (raw bytes, as argv), lists, mappings with str keys."""
    if value is None:
        return b"null"
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        return b"%d" % value
    if isinstance(value, (str, bytes, os.PathLike)):
        return _jstr(_fsbytes(value, key))
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise SpecTypeError(f"{key}: keys must be str, not {k!r}")
            items.append(_jstr(k.encode()) + b":" + _jvalue(v, f"{key}.{k}"))
        return b"{" + b",".join(items) + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(_jvalue(v, f"{key}[{i}]") for i, v in enumerate(value)) + b"]"
    raise SpecTypeError(f"{key}: cannot be {type(value).__name__} ({value!r})")


def _typed(value: object, cls: type, keys: Tuple[str, ...], key: str) -> Dict[str, object]:
    """limits=/sandbox= as a dict: the dataclass's set fields, or the dict
    given (its keys checked here, so a typo names the key)."""
    if isinstance(value, (Limits, Sandbox)):
        if not isinstance(value, cls):
            raise SpecTypeError(f"{key}: must be a sup.{cls.__name__} or a dict, not {type(value).__name__}")
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if getattr(value, f.name) is not None}
    if not isinstance(value, Mapping):
        raise SpecTypeError(f"{key}: must be a sup.{cls.__name__} or a dict, not {type(value).__name__}")
    for k in value:
        if k not in keys:
            raise SpecError(f"{key}: unknown key {k!r} (known: {', '.join(keys)})")
    return dict(value)


def _id(value: object, key: str) -> bytes:
    """A user or group: a name (str/bytes) or a number, as subprocess's user=."""
    if isinstance(value, bool) or not isinstance(value, (int, str, bytes)):
        raise SpecTypeError(f"{key}: must be a name or a number, not {value!r}")
    if isinstance(value, int) and value < 0:
        raise SpecError(f"{key}: must be >= 0, not {value}")  # a ValueError, as subprocess's
    if isinstance(value, int) and value > 0xFFFFFFFE:
        # subprocess's own split: OverflowError for user=/group=, ValueError in extra_groups
        raise (SpecError if key.startswith("extra_groups") else OverflowError)(
            f"{key}: {value} is greater than the largest id (4294967294)"
        )
    return _jvalue(value, key)


def fds_of(pass_fds: object, close_fds: object) -> Dict[int, int]:
    """subprocess's pass_fds (and close_fds=False: every inheritable
    descriptor the host has, as fork and exec would pass it) as "fds", each
    descriptor at its own number."""
    if isinstance(pass_fds, (str, bytes)):
        raise SpecTypeError(f"pass_fds: must be a sequence of descriptors, not {pass_fds!r}")
    try:
        numbers = list(pass_fds)  # type: ignore[call-overload]
    except TypeError:
        raise SpecTypeError(f"pass_fds: must be a sequence of descriptors, not {pass_fds!r}") from None
    out: Dict[int, int] = {}
    for n in numbers:
        if isinstance(n, bool) or not isinstance(n, int):
            raise SpecTypeError(f"pass_fds: {n!r} is not a descriptor number")
        if n < 0:
            raise SpecError(f"pass_fds: {n} is not a descriptor number")
        if n > 2:  # 0, 1 and 2 are the child's anyway, as subprocess skips them
            out[n] = n
    if not close_fds:
        for name in os.listdir("/proc/self/fd"):
            n = int(name)
            if n > 2 and n not in out:
                try:
                    if os.get_inheritable(n):
                        out[n] = n
                except OSError:
                    pass  # the listing's own descriptor, now closed
    return out


def _env_items(mapping: object, key: str, allow_none: bool) -> List[Tuple[bytes, Optional[bytes]]]:
    if not isinstance(mapping, Mapping):
        raise SpecTypeError(f"{key}: must be a mapping, not {type(mapping).__name__}")
    out: List[Tuple[bytes, Optional[bytes]]] = []
    for name, value in mapping.items():
        raw = _fsbytes(name, key)
        if not raw or b"=" in raw:
            raise SpecError(f"{key}: invalid variable name {name!r}")
        if value is None:
            if not allow_none:
                raise SpecTypeError(
                    f"{key}: the value of {name!r} is None (env= is the whole environment; "
                    "env_update={name: None} removes a variable)"
                )
            out.append((raw, None))
        else:
            out.append((raw, _fsbytes(value, f"{key}[{name!r}]")))
    return out


def build(
    args: Sequence[StrOrBytesPath],
    *,
    idle_timeout: Optional[float],
    first_output_timeout: Optional[float],
    max_runtime: Optional[float],
    grace: Optional[float],
    signal: Union[int, str, None],
    kill_on_timeout: bool,
    input: Optional[bytes],
    stdin: StdioArg,
    stdout: StdioArg,
    stderr: StdioArg,
    pty: Union[bool, Tuple[int, int]],
    cwd: Optional[StrOrBytesPath],
    env: Optional[Env],
    env_update: Optional[EnvUpdate],
    max_output: Optional[int],
    backpressure: Optional[int],
    contain: Optional[str],
    cgroup_parent: Optional[StrOrBytesPath],
    require_sentinel: bool = False,
    tty_foreground: bool = False,
    input_wait_timeout: Optional[float] = None,
    tty_stop_timeout: Optional[float] = None,
    fds: Optional[Mapping[int, int]] = None,
    keep_ignored_signals: bool = False,
    user: object = None,
    group: object = None,
    groups: object = None,
    limits: object = None,
    sandbox: object = None,
) -> bytes:
    """The spec's JSON text, as bytes. ``args`` is already a list."""
    argv: List[bytes] = [_jstr(_fsbytes(a, f"args[{i}]")) for i, a in enumerate(args)]
    if not argv:
        raise SpecError("args: must not be empty")
    parts: List[bytes] = [b'{"argv":[' + b",".join(argv) + b"]"]

    if cwd is not None:
        parts.append(b'"cwd":' + _jstr(_fsbytes(cwd, "cwd")))

    if env is not None or env_update is not None:
        merged: dict[bytes, Optional[bytes]] = {}
        if env is not None:
            merged.update(_env_items(env, "env", False))
        if env_update is not None:
            for name, value in _env_items(env_update, "env_update", True):
                if env is not None and value is None:
                    merged.pop(name, None)  # a clean environment: removing is leaving out
                else:
                    merged[name] = value
        items_env = [
            _jstr(k) + (b":null" if v is None else b":" + _jstr(v)) for k, v in merged.items()
        ]
        if env is not None:
            parts.append(b'"env_clear":true')
        parts.append(b'"env":{' + b",".join(items_env) + b"}")

    if pty is not False:
        if pty is True:
            parts.append(b'"pty":true')
        elif (
            isinstance(pty, tuple)
            and len(pty) == 2
            and all(type(x) is int and 1 <= x <= 65535 for x in pty)
        ):
            parts.append(b'"pty":{"rows":%d,"cols":%d}' % pty)
        else:
            raise SpecError(f"pty: must be True, False or (rows, cols) from 1 to 65535, not {pty!r}")
        _route(stdin, "stdin", (None, PIPE))
        _route(stdout, "stdout", (None, PIPE))
        _route(stderr, "stderr", (None, STDOUT))
        if input is not None:
            raise SpecError("input: not with pty (write to p.stdin, or communicate(input))")
    else:
        if input is not None:
            if stdin is not None:
                raise SpecError("input: stdin and input arguments may not both be used")
            if not isinstance(input, (bytes, bytearray, memoryview)):
                raise SpecError(
                    f"input: must be bytes (or str with text=True), not {type(input).__name__}"
                )
            parts.append(b'"stdin":{"base64":"' + base64.b64encode(bytes(input)) + b'"}')
        else:
            route = _route(stdin, "stdin", (None, PIPE, DEVNULL, INHERIT), fd_ok=True)
            if isinstance(route, Fd):
                name = b"fd"
                parts.append(b'"stdin":{"fd":%d}' % route)
            else:
                name = {None: b"inherit", INHERIT: b"inherit", PIPE: b"pipe", DEVNULL: b"null"}[route]  # type: ignore[index]
                parts.append(b'"stdin":"' + name + b'"')
            if tty_foreground is not True and tty_foreground is not False:
                raise SpecTypeError(f"tty_foreground: must be True or False, not {tty_foreground!r}")
            if tty_foreground and name == b"inherit" and host_tty_foreground():
                # The child's group gets the terminal while it runs (and the
                # host's group back after): a read neither stops on SIGTTIN
                # nor hangs.
                parts.append(b'"tty_foreground":true')
        # None is the host's descriptor itself, as in subprocess (a terminal
        # stays a terminal, a closed reader gives the child EPIPE), unless an
        # idle clock must see the bytes: then sup's copy ("tee").
        watched = idle_timeout is not None or first_output_timeout is not None
        out_names = {None: b"tee" if watched else b"inherit", PIPE: b"pipe", DEVNULL: b"null", INHERIT: b"inherit"}
        route = _route(stdout, "stdout", (None, PIPE, DEVNULL, INHERIT), fd_ok=True)
        if isinstance(route, Fd):  # the file itself, as subprocess gives it
            parts.append(b'"stdout":{"fd":%d}' % route)
        elif route is not PIPE:  # "pipe" is the library's default
            parts.append(b'"stdout":"' + out_names[route] + b'"')  # type: ignore[index]
        route = _route(stderr, "stderr", (None, PIPE, STDOUT, DEVNULL, INHERIT), fd_ok=True)
        if isinstance(route, Fd):
            parts.append(b'"stderr":{"fd":%d}' % route)
        elif route is not PIPE:
            name = b"stdout" if route == STDOUT else out_names[route]  # type: ignore[index]
            parts.append(b'"stderr":"' + name + b'"')

    for spec_key, ms in (
        (b"idle_timeout_ms", seconds_ms(idle_timeout, "idle_timeout", False)),
        (b"first_output_timeout_ms", seconds_ms(first_output_timeout, "first_output_timeout", False)),
        (b"max_runtime_ms", seconds_ms(max_runtime, "max_runtime", False)),
        (b"grace_ms", seconds_ms(grace, "grace", True)),
        (b"input_wait_timeout_ms", seconds_ms(input_wait_timeout, "input_wait_timeout", False)),
        (b"tty_stop_timeout_ms", seconds_ms(tty_stop_timeout, "tty_stop_timeout", False)),
    ):
        if ms is not None:
            parts.append(b'"%s":%d' % (spec_key, ms))

    sig = _signal_number(signal)
    if sig is not None:
        parts.append(b'"interrupt_signal":%d' % sig)
    if not isinstance(kill_on_timeout, bool):
        raise SpecError(f"kill_on_timeout: must be True or False, not {kill_on_timeout!r}")
    if kill_on_timeout:
        parts.append(b'"on_timeout":"kill"')

    if max_output is None:
        parts.append(b'"max_output_bytes":null')  # every byte, as subprocess keeps them
    for spec_key, count, kw in (
        (b"max_output_bytes", max_output, "max_output"),
        (b"backpressure_bytes", backpressure, "backpressure"),
    ):
        if count is None:
            continue
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise (SpecError if isinstance(count, int) else SpecTypeError)(
                f"{kw}: must be a non-negative int (bytes), not {count!r}"
            )
        parts.append(b'"%s":%d' % (spec_key, count))

    if contain is not None:
        if contain not in ("group", "cgroup", "auto"):
            raise SpecError(f"contain: must be 'group', 'cgroup' or 'auto', not {contain!r}")
        parts.append(b'"contain":"' + contain.encode() + b'"')
    if cgroup_parent is not None:
        parts.append(b'"cgroup_parent":' + _jstr(_fsbytes(cgroup_parent, "cgroup_parent")))
    if require_sentinel:
        parts.append(b'"require_sentinel":true')
    if fds:
        parts.append(b'"fds":{' + b",".join(b'"%d":%d' % (c, h) for c, h in sorted(fds.items())) + b"}")
    if keep_ignored_signals:
        parts.append(b'"keep_ignored_signals":true')
    if user is not None:
        parts.append(b'"user":' + _id(user, "user"))
    if group is not None:
        parts.append(b'"group":' + _id(group, "group"))
    if groups is not None:
        if isinstance(groups, (str, bytes)):
            raise SpecTypeError(f"extra_groups: must be a sequence of names or numbers, not {groups!r}")
        try:
            items = list(groups)  # type: ignore[call-overload]
        except TypeError:
            raise SpecTypeError(f"extra_groups: must be a sequence of names or numbers, not {groups!r}") from None
        parts.append(b'"groups":[' + b",".join(_id(g, f"extra_groups[{i}]") for i, g in enumerate(items)) + b"]")
    if limits is not None:
        parts.append(b'"limits":' + _jvalue(_typed(limits, Limits, _LIMIT_KEYS, "limits"), "limits"))
    if sandbox is not None:
        parts.append(b'"sandbox":' + _jvalue(_typed(sandbox, Sandbox, _SANDBOX_KEYS, "sandbox"), "sandbox"))

    return b",".join(parts) + b"}"


def argv(args: object, shell: object) -> List[StrOrBytesPath]:
    """subprocess's reading of args: a str, bytes or path is one program;
    with shell=True, ``/bin/sh -c`` runs the first item."""
    shell = bool(shell)  # any truthy value, as subprocess reads it
    if shell and isinstance(args, os.PathLike):
        raise SpecTypeError("args: a path-like args is not allowed when shell is true")
    if isinstance(args, (str, bytes, os.PathLike)):
        items: List[StrOrBytesPath] = [args]
    else:
        try:
            items = list(args)  # type: ignore[call-overload]
        except TypeError:
            raise SpecError(
                f"args: must be a sequence of arguments or one str, bytes or path, not {type(args).__name__}"
            ) from None
    if not items:
        raise SpecError("args: must not be empty")
    if shell:
        return ["/bin/sh", "-c", *items]
    return items
