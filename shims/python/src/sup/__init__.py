"""sup: run child processes under supervision, through libsup.

A subprocess user's ``run`` and ``Popen`` with an idle timeout reset by any
output byte, a maximum runtime, an interrupt signal followed by SIGKILL after a
grace period, the whole process group ended, head-and-tail bounded capture,
and one immutable :class:`Result` whose :class:`Outcome` says what ended the
child. ``interrupt()`` and ``abort()`` work from any thread at any time.

    r = sup.run(["rg", "unsafe", "."], capture_output=True, idle_timeout=30.0)
    if r.outcome is sup.Outcome.IDLE_TIMEOUT:
        print("rg went silent; it had printed:", r.stdout)

Pure Python over ctypes; needs libsup (a wheel carries its own): see
:func:`library_path` for how it is found.
"""

from __future__ import annotations

from ._aio import AsyncProcess, StdinStream, create_subprocess_exec, create_subprocess_shell
from ._confined import Confined, LimitApplied, SandboxApplied, UserApplied
from ._calls import call, check_call, check_output, getoutput, getstatusoutput
from ._errors import CalledProcessError, OutputGap, SpecError, SpecTypeError, SupError, TimeoutExpired
from ._lib import LibraryNotFoundError
from ._lib import api as _api
from ._popen import Args, Popen, run, run_async
from ._result import CompletedProcess, Outcome, Result
from ._spec import DEVNULL, INHERIT, PIPE, STDOUT, Env, EnvUpdate, Limits, Sandbox, Stdio, StdioArg

__version__ = "0.3.0"

for _cls in (
    AsyncProcess,
    CalledProcessError,
    CompletedProcess,
    Confined,
    LibraryNotFoundError,
    LimitApplied,
    Outcome,
    OutputGap,
    Popen,
    Result,
    SandboxApplied,
    SpecError,
    SpecTypeError,
    Stdio,
    StdinStream,
    SupError,
    TimeoutExpired,
    UserApplied,
):
    _cls.__module__ = "sup"  # tracebacks and reprs name the public module
del _cls


def library_path() -> str:
    """The path of the libsup loaded (loading it if needed).

    Looked up, in order: the path in ``SUP_LIBRARY``; the ``libsup.so``
    next to this package (a wheel's); ``libsup.so.0`` in the
    directories ``pkg-config`` gives for ``sup`` (``libdir``, then ``-L``; so
    ``PKG_CONFIG_PATH=<build>/meson-uninstalled`` finds a build tree); the
    system loader (``ctypes.util.find_library("sup")``). Raises
    :class:`LibraryNotFoundError` saying what to install otherwise.
    """
    return _api().path


def library_version() -> int:
    """sup_version() of the loaded library: MAJOR*10000 + MINOR*100 + PATCH
    (30000 or more)."""
    return _api().version()


__all__ = [
    "Args",
    "AsyncProcess",
    "CalledProcessError",
    "CompletedProcess",
    "Confined",
    "DEVNULL",
    "Env",
    "EnvUpdate",
    "INHERIT",
    "LibraryNotFoundError",
    "LimitApplied",
    "Limits",
    "Outcome",
    "OutputGap",
    "PIPE",
    "Popen",
    "Result",
    "STDOUT",
    "Sandbox",
    "SandboxApplied",
    "SpecError",
    "SpecTypeError",
    "StdinStream",
    "Stdio",
    "StdioArg",
    "SupError",
    "TimeoutExpired",
    "UserApplied",
    "call",
    "check_call",
    "check_output",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "getoutput",
    "getstatusoutput",
    "library_path",
    "library_version",
    "run",
    "run_async",
]
