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
import enum
import math
import os
import re
import signal as _signal
import sys
from typing import Iterable, List, Mapping, Optional, Sequence, Union

from . import _lib
from ._errors import SpecError

StrOrBytesPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
EnvValue = Union[str, bytes, None]


class Stdin(enum.Enum):
    """Where the child's stdin comes from when ``input`` is not given."""

    DEVNULL = "null"
    INHERIT = "inherit"


DEVNULL = Stdin.DEVNULL
INHERIT = Stdin.INHERIT

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
        raise SpecError(
            f"{key}: must be str, bytes or os.PathLike, not {type(value).__name__}"
        ) from None
    if b"\0" in raw:
        raise SpecError(f"{key}: embedded null byte")
    return raw


def _seconds_ms(value: Optional[float], key: str, allow_zero: bool) -> Optional[int]:
    """Seconds as a float to whole milliseconds; None (or inf) is off."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{key}: must be a number of seconds or None, not {value!r}")
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
        raise SpecError(f"signal: must be a signal number or name, not {value!r}")
    n = int(value)
    if not 1 <= n <= _signal.NSIG - 1:
        raise SpecError(f"signal: no such signal {n}")
    return n


def build(
    args: Sequence[StrOrBytesPath],
    *,
    idle_timeout: Optional[float],
    timeout: Optional[float],
    grace: Optional[float],
    signal: Union[int, str, None],
    kill_on_timeout: bool,
    input: Optional[bytes],
    stdin: Optional[Stdin],
    cwd: Optional[StrOrBytesPath],
    env: Optional[Mapping[Union[str, bytes], EnvValue]],
    max_output: Optional[int],
    backpressure: Optional[int],
) -> bytes:
    """The spec's JSON text, as bytes."""
    if isinstance(args, (str, bytes)) or (
        type(args) is not list and isinstance(args, os.PathLike)
    ):
        raise SpecError(
            "args: must be a sequence of arguments, not a single "
            f"{type(args).__name__} (there is no shell: use ['sh', '-c', command])"
        )
    try:
        items: Iterable[StrOrBytesPath] = list(args)
    except TypeError:
        raise SpecError(f"args: must be a sequence, not {type(args).__name__}") from None
    argv: List[bytes] = [_jstr(_fsbytes(a, f"args[{i}]")) for i, a in enumerate(items)]
    if not argv:
        raise SpecError("args: must not be empty")
    parts: List[bytes] = [b'{"argv":[' + b",".join(argv) + b"]"]

    if cwd is not None:
        parts.append(b'"cwd":' + _jstr(_fsbytes(cwd, "cwd")))

    if env is not None:
        if not isinstance(env, Mapping):
            raise SpecError(f"env: must be a mapping, not {type(env).__name__}")
        items_env: List[bytes] = []
        for name, value in env.items():
            key = _fsbytes(name, "env")
            if not key or b"=" in key:
                raise SpecError(f"env: invalid variable name {name!r}")
            if value is None:
                items_env.append(_jstr(key) + b":null")
            else:
                items_env.append(
                    _jstr(key) + b":" + _jstr(_fsbytes(value, f"env[{name!r}]"))
                )
        parts.append(b'"env":{' + b",".join(items_env) + b"}")

    if input is not None:
        if stdin is not None:
            raise SpecError("input: stdin and input arguments may not both be used")
        if not isinstance(input, (bytes, bytearray, memoryview)):
            raise SpecError(f"input: must be bytes, not {type(input).__name__}")
        parts.append(b'"stdin":{"base64":"' + base64.b64encode(bytes(input)) + b'"}')
    elif stdin is not None:
        if not isinstance(stdin, Stdin):
            raise SpecError(
                f"stdin: must be sup.DEVNULL or sup.INHERIT, not {stdin!r}"
            )
        parts.append(b'"stdin":' + _jstr(stdin.value.encode()))

    for spec_key, ms in (
        (b"idle_timeout_ms", _seconds_ms(idle_timeout, "idle_timeout", False)),
        (b"max_runtime_ms", _seconds_ms(timeout, "timeout", False)),
        (b"grace_ms", _seconds_ms(grace, "grace", True)),
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

    for spec_key, count, kw in (
        (b"max_output_bytes", max_output, "max_output"),
        (b"backpressure_bytes", backpressure, "backpressure"),
    ):
        if count is None:
            continue
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise SpecError(f"{kw}: must be a non-negative int (bytes), not {count!r}")
        parts.append(b'"%s":%d' % (spec_key, count))

    return b",".join(parts) + b"}"
