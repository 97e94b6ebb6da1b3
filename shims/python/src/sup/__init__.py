"""sup: run child processes under supervision, through libsup.

A subprocess user's ``run`` and ``Popen`` with an idle timeout reset by any
output byte, a maximum runtime, an interrupt signal followed by SIGKILL after a
grace period, the whole process group ended, head-and-tail bounded capture,
and one immutable :class:`Result` whose :class:`Outcome` says what ended the
child. ``interrupt()`` and ``abort()`` work from any thread at any time.

    r = sup.run(["rg", "unsafe", "."], idle_timeout=30.0, timeout=600.0)
    if r.outcome is sup.Outcome.IDLE_TIMEOUT:
        print("rg went silent; it had printed:", r.stdout)

Pure Python over ctypes; needs libsup.so.0 (0.2 or newer): see
:func:`library_path` for how it is found.
"""

from __future__ import annotations

from ._errors import SpecError, SupError
from ._lib import LibraryNotFoundError
from ._lib import api as _api
from ._popen import Popen, run
from ._result import Outcome, Result
from ._spec import DEVNULL, INHERIT, Stdin

__version__ = "0.2.0"

for _cls in (SpecError, SupError, LibraryNotFoundError, Popen, Outcome, Result, Stdin):
    _cls.__module__ = "sup"  # tracebacks and reprs name the public module
del _cls


def library_path() -> str:
    """The path of the libsup loaded (loading it if needed).

    Looked up, in order: the path in ``SUP_LIBRARY``; ``libsup.so.0`` in the
    directories ``pkg-config`` gives for ``sup`` (``libdir``, then ``-L``; so
    ``PKG_CONFIG_PATH=<build>/meson-uninstalled`` finds a build tree); the
    system loader (``ctypes.util.find_library("sup")``). Raises
    :class:`LibraryNotFoundError` saying what to install otherwise.
    """
    return _api().path


def library_version() -> int:
    """sup_version() of the loaded library: MAJOR*10000 + MINOR*100 + PATCH."""
    return _api().version()


__all__ = [
    "DEVNULL",
    "INHERIT",
    "LibraryNotFoundError",
    "Outcome",
    "Popen",
    "Result",
    "SpecError",
    "Stdin",
    "SupError",
    "library_path",
    "library_version",
    "run",
]
