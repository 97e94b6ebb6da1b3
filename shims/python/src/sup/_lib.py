"""Finding and declaring libsup: every C function's argtypes and restype, once.

The library is looked up, in order, at the path in ``SUP_LIBRARY``, next to
this module (the copy a wheel carries), in the ``libdir`` (and ``-L``
directories) pkg-config gives for ``sup``, then through the system loader
(``ctypes.util.find_library``). It is loaded on first use, so that
``import sup`` works (for type checking, documentation) on a machine without
it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
import threading
from ctypes import (
    POINTER,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint64,
    c_void_p,
)
from typing import Any, Callable, List, Optional

# enum sup_error (values are -errno on Linux, fixed forever)
OK = 0
EINVAL = -22
EBUSY = -16
ENODATA = -61
ESRCH = -3
EPIPE = -32
EBADF = -9
ENOTSUP = -95
ECANCELED = -125
ECHILD = -10
EAGAIN = -11
EINTERNAL = -4096

# enum sup_stream
STDOUT = 1
STDERR = 2

# enum sup_part
PART_NONE = 0
PART_SPEC = 1
PART_EXEC = 2
PART_CWD = 3
PART_SYSTEM = 4

ERRBUF_SIZE = 4096
POS_IGNORE = (1 << 64) - 1
SONAME = "libsup.so.0"
MIN_VERSION = 300  # 0.3.0: routing, env_clear, sup_signal, first_output_timeout_ms

_SizeP = Any  # ctypes pointer objects (byref / POINTER instances)


class LibraryNotFoundError(ImportError):
    """libsup could not be found or loaded, or is older than 0.3."""


class Api:
    """The C functions of sup.h, typed for the rest of the package."""

    def __init__(self, cdll: ctypes.CDLL, path: str) -> None:
        self.path = path

        def fn(name: str, restype: Any, argtypes: List[Any]) -> Any:
            f = getattr(cdll, name)
            f.restype = restype
            f.argtypes = argtypes
            return f

        P = c_void_p  # sup_proc *
        self.version: Callable[[], int] = fn("sup_version", c_int, [])
        self.strerror: Callable[[int], bytes] = fn("sup_strerror", c_char_p, [c_int])
        self.outcome_name: Callable[[int], Optional[bytes]] = fn(
            "sup_outcome_name", c_char_p, [c_int]
        )
        self.signal_parse: Callable[[bytes], int] = fn(
            "sup_signal_parse", c_int, [c_char_p]
        )
        self.spawn: Callable[[bytes, _SizeP], int] = fn(
            "sup_spawn", c_int, [c_char_p, POINTER(c_void_p)]
        )
        self.spawn_ex: Callable[[bytes, _SizeP, Any, int], int] = fn(
            "sup_spawn_ex", c_int, [c_char_p, POINTER(c_void_p), c_char_p, c_size_t]
        )
        self.spawn_v2: Callable[[bytes, _SizeP, Any, int, _SizeP], int] = fn(
            "sup_spawn_v2",
            c_int,
            [c_char_p, POINTER(c_void_p), c_char_p, c_size_t, POINTER(c_int)],
        )
        self.poll: Callable[[int, int], int] = fn("sup_poll", c_int, [P, c_int])
        self.interrupt: Callable[[int], int] = fn("sup_interrupt", c_int, [P])
        self.abort: Callable[[int], int] = fn("sup_abort", c_int, [P])
        self.result: Callable[[int], Optional[bytes]] = fn("sup_result", c_char_p, [P])
        self.release: Callable[[int], None] = fn("sup_release", None, [P])
        self.fd: Callable[[int], int] = fn("sup_fd", c_int, [P])
        self.pid: Callable[[int], int] = fn("sup_pid", c_int, [P])
        self.output_read: Callable[[int, int, _SizeP, Any, int, _SizeP], int] = fn(
            "sup_output_read",
            c_int,
            [P, c_int, POINTER(c_uint64), c_void_p, c_size_t, POINTER(c_size_t)],
        )
        self.output_wait: Callable[[int, int, int, int], int] = fn(
            "sup_output_wait", c_int, [P, c_uint64, c_uint64, c_int]
        )
        self.output_total: Callable[[int, int], int] = fn(
            "sup_output_total", c_int64, [P, c_int]
        )
        self.output_fd: Callable[[int, int], int] = fn(
            "sup_output_fd", c_int, [P, c_int]
        )
        self.input_write: Callable[[int, bytes, int, _SizeP], int] = fn(
            "sup_input_write", c_int, [P, c_char_p, c_size_t, POINTER(c_size_t)]
        )
        self.input_wait: Callable[[int, int], int] = fn(
            "sup_input_wait", c_int, [P, c_int]
        )
        self.input_fd: Callable[[int], int] = fn("sup_input_fd", c_int, [P])
        self.input_close: Callable[[int], int] = fn("sup_input_close", c_int, [P])
        self.input_wanted: Callable[[int], int] = fn("sup_input_wanted", c_int, [P])
        self.result_outcome: Callable[[int], int] = fn(
            "sup_result_outcome", c_int, [P]
        )
        self.result_exit_code: Callable[[int], int] = fn(
            "sup_result_exit_code", c_int, [P]
        )
        self.result_term_signal: Callable[[int], int] = fn(
            "sup_result_term_signal", c_int, [P]
        )
        self.result_forced_kill: Callable[[int], int] = fn(
            "sup_result_forced_kill", c_int, [P]
        )
        self.result_duration_ms: Callable[[int], float] = fn(
            "sup_result_duration_ms", c_double, [P]
        )
        # const char * that may hold NUL bytes: c_void_p, then string_at(ptr, len)
        self.result_output: Callable[[int, int, _SizeP], Optional[int]] = fn(
            "sup_result_output", c_void_p, [P, c_int, POINTER(c_size_t)]
        )
        self.result_omitted_bytes: Callable[[int, int], int] = fn(
            "sup_result_omitted_bytes", c_int64, [P, c_int]
        )
        self.result_status_lost: Callable[[int], int] = fn(
            "sup_result_status_lost", c_int, [P]
        )
        self.result_rusage: Callable[[int, _SizeP, _SizeP, _SizeP], int] = fn(
            "sup_result_rusage",
            c_int,
            [P, POINTER(c_double), POINTER(c_double), POINTER(c_int64)],
        )
        self.signal: Callable[[int, int], int] = fn("sup_signal", c_int, [P, c_int])
        self.result_phase: Callable[[int], int] = fn("sup_result_phase", c_int, [P])
        self.pty_resize: Callable[[int, int, int], int] = fn(
            "sup_pty_resize", c_int, [P, c_int, c_int]
        )

        self.result_signals: Callable[[int, _SizeP, _SizeP, int], int] = fn(
            "sup_result_signals",
            c_int,
            [P, POINTER(c_int), POINTER(c_double), c_size_t],
        )


class Handle:
    """One sup_proc *, released when the last Python reference goes.

    A Popen and the Results read from it share it: a Result can fetch the
    result JSON after its Popen is closed, and no C call can be under way on
    a handle nobody references, so sup_release never races one.
    """

    __slots__ = ("api", "ptr")

    def __init__(self, api: Api, ptr: int) -> None:
        self.api = api
        self.ptr = ptr

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, 0
        if ptr:
            try:
                self.api.release(ptr)  # aborts and reaps a child still running
            except Exception:  # interpreter shutdown: the library reaps at exit
                pass


_api: Optional[Api] = None
_api_lock = threading.Lock()


def _pkg_config_dirs() -> List[str]:
    """Directories where pkg-config says libsup lives: libdir, then -L flags.

    The -L flags matter for a build tree's sup-uninstalled.pc, whose libdir
    names the install location rather than where the library was built.
    """
    exe = shutil.which("pkg-config") or shutil.which("pkgconf")
    if exe is None:
        return []
    dirs: List[str] = []
    for args in (["--variable=libdir", "sup"], ["--libs-only-L", "sup"]):
        try:
            out = subprocess.run(
                [exe, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode != 0:
            continue
        for word in out.stdout.decode(errors="surrogateescape").split():
            d = word[2:] if word.startswith("-L") else word
            if d and d not in dirs:
                dirs.append(d)
    return dirs


def _candidates() -> List[str]:
    env = os.environ.get("SUP_LIBRARY")
    if env:
        return [env]  # an explicit choice is not second-guessed
    found: List[str] = []
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libsup.so")
    if os.path.exists(bundled):
        found.append(bundled)  # the wheel's own copy, built with this package
    for d in _pkg_config_dirs():
        for name in (SONAME, "libsup.so"):
            path = os.path.join(d, name)
            if os.path.exists(path):
                found.append(path)
                break
    system = ctypes.util.find_library("sup")
    if system:
        found.append(system)
    return found


def _load() -> Api:
    tried: List[str] = []
    for cand in _candidates():
        try:
            cdll = ctypes.CDLL(cand)
        except OSError as e:
            tried.append(f"{cand}: {e}")
            continue
        try:
            version = int(cdll.sup_version())
        except AttributeError:
            tried.append(f"{cand}: no sup_version symbol (not libsup)")
            continue
        if version < MIN_VERSION:
            tried.append(
                f"{cand}: libsup {version // 10000}.{version // 100 % 100}"
                f".{version % 100} is too old (0.3 or newer is needed)"
            )
            continue
        try:
            return Api(cdll, cand)
        except AttributeError as e:
            tried.append(f"{cand}: {e}")
    detail = "; ".join(tried) if tried else "nothing found"
    raise LibraryNotFoundError(
        "sup: cannot load libsup (" + SONAME + ", version 0.3 or newer): "
        + detail
        + ". Install the package from a wheel (pip install ./shims/python builds "
        "one that carries libsup), or install the sup C library (from its checkout: "
        "meson setup build && meson install -C build; then ldconfig), or point SUP_LIBRARY at "
        "libsup.so.0, or PKG_CONFIG_PATH at the directory of its sup.pc "
        "(a build tree's <build>/meson-uninstalled)."
    )


def api() -> Api:
    """The loaded library, loading it on first use."""
    global _api
    a = _api
    if a is not None:
        return a
    with _api_lock:
        if _api is None:
            _api = _load()
        return _api
