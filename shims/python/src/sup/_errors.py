"""Exceptions: library error codes turned into what a subprocess user expects."""

from __future__ import annotations

import errno as _errno
import os
import re
import subprocess
from typing import TYPE_CHECKING, Any, Optional

from . import _lib

if TYPE_CHECKING:
    from ._result import Result

# The spec's keys, as the Python keywords that set them.
_KEY_NAMES = {
    "argv": "args",
    "cwd": "cwd",
    "env": "env",
    "env_clear": "env",
    "stdin": "input/stdin",
    "stdout": "stdout",
    "stderr": "stderr",
    "pty": "pty",
    "contain": "contain",
    "cgroup_parent": "cgroup_parent",
    "require_sentinel": "require_sentinel",
    "idle_timeout_ms": "idle_timeout",
    "first_output_timeout_ms": "first_output_timeout",
    "max_runtime_ms": "max_runtime",
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


class SpecTypeError(SpecError, TypeError):
    """A keyword of the wrong type (``timeout="5"``, ``env={"A": 1}``): a
    TypeError, as subprocess raises it, and a :class:`SpecError` naming the
    keyword."""


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
    """An OSError whose class follows the errno, as subprocess raises them.

    ``strerror`` is ``os.strerror(errno)``, as subprocess's; sup's detail is
    the ``detail`` attribute and a note shown with the traceback.
    """
    err = -code
    message = os.strerror(err)
    # OSError(errno, strerror, filename) picks FileNotFoundError, PermissionError,
    # NotADirectoryError, IsADirectoryError ... from errno, as the built-ins do.
    e = OSError(err, message) if filename is None else OSError(err, message, filename)
    e.detail = detail  # type: ignore[attr-defined]
    if detail and hasattr(e, "add_note"):  # Python 3.11+
        e.add_note(f"sup: {detail}")
    return e


def check(code: int, what: str) -> int:
    """Raise for a negative return code of a call made on a handle."""
    if code >= 0:
        return code
    if code == _lib.EINVAL:
        raise SupError(code, f"{what}: {strerror(code)}")
    if code <= _lib.EINTERNAL or -code not in _errno.errorcode:
        raise SupError(code, f"{what}: {strerror(code)}")
    raise os_error(code, what)


class OutputGap(OSError):
    """A live reader fell behind the kept window: ``skipped`` bytes of the
    stream were dropped (``max_output``) before it read them.

    Raised once, by the read that would have crossed the gap; the next read
    goes on with the first byte kept after it. No read returns bytes from
    both sides of a gap.
    """

    def __init__(self, stream: str, skipped: int) -> None:
        super().__init__(
            f"sup: {skipped} bytes of {stream} were dropped before this reader "
            "got them (the child wrote more than max_output while the reader lagged)"
        )
        self.stream = stream
        self.skipped = skipped


class CalledProcessError(subprocess.CalledProcessError):
    """``check=True`` and the child's returncode was not 0.

    ``subprocess.CalledProcessError`` itself, with sup's :class:`Result` in
    ``result``.
    """

    def __init__(
        self,
        returncode: int,
        cmd: Any,
        output: Any = None,
        stderr: Any = None,
        result: "Optional[Result]" = None,
    ) -> None:
        super().__init__(returncode, cmd, output, stderr)
        self.result = result


class TimeoutExpired(subprocess.TimeoutExpired):
    """``timeout`` seconds passed: from ``run`` once sup ended the child,
    from ``wait``/``communicate`` while it keeps running.

    ``subprocess.TimeoutExpired`` itself; ``result`` holds sup's
    :class:`Result` when the child was ended (from ``run``), else None.
    """

    def __init__(
        self,
        cmd: Any,
        timeout: float,
        output: Any = None,
        stderr: Any = None,
        result: "Optional[Result]" = None,
    ) -> None:
        super().__init__(cmd, timeout, output, stderr)
        self.result = result
