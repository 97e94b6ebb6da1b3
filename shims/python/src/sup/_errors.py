"""Exceptions: library error codes turned into what a subprocess user expects."""

from __future__ import annotations

import errno as _errno
import os
import re
from typing import Optional

from . import _lib

# The spec's keys, as the Python keywords that set them.
_KEY_NAMES = {
    "argv": "args",
    "cwd": "cwd",
    "env": "env",
    "stdin": "input/stdin",
    "idle_timeout_ms": "idle_timeout",
    "max_runtime_ms": "timeout",
    "grace_ms": "grace",
    "interrupt_signal": "signal",
    "on_timeout": "kill_on_timeout",
    "max_output_bytes": "max_output",
    "backpressure_bytes": "backpressure",
}


class SupError(Exception):
    """An error reported by libsup that no built-in exception describes.

    ``code`` is the library's negative error code (``-errno`` on Linux, or
    ``-4096`` for an internal error), ``detail`` its explanation.
    """

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class SpecError(SupError, ValueError):
    """A bad keyword argument; the message starts with the keyword's name."""

    def __init__(self, detail: str, code: int = _lib.EINVAL) -> None:
        super().__init__(code, detail)


def strerror(code: int) -> str:
    """The library's name for an error code."""
    return _lib.api().strerror(code).decode()


def spec_error_from_detail(detail: str) -> SpecError:
    """Rename the spec key at the head of the library's detail to the keyword."""
    m = re.match(r"spec: ([A-Za-z_]+)(.*)$", detail, re.S)
    if m and m.group(1) in _KEY_NAMES:
        return SpecError(_KEY_NAMES[m.group(1)] + m.group(2) + f" ({detail})")
    return SpecError(detail)


def os_error(code: int, detail: str, filename: Optional[object] = None) -> OSError:
    """An OSError whose class follows the errno, as subprocess raises them."""
    err = -code
    message = os.strerror(err)
    if detail:
        message = f"{message} ({detail})"
    if filename is None:
        return OSError(err, message)
    # OSError(errno, strerror, filename) picks FileNotFoundError, PermissionError,
    # NotADirectoryError, IsADirectoryError ... from errno, as the built-ins do.
    return OSError(err, message, filename)


def check(code: int, what: str) -> int:
    """Raise for a negative return code of a call made on a handle."""
    if code >= 0:
        return code
    if code == _lib.EINVAL:
        raise SupError(code, f"{what}: {strerror(code)}")
    if code <= _lib.EINTERNAL or -code not in _errno.errorcode:
        raise SupError(code, f"{what}: {strerror(code)}")
    raise os_error(code, what)
