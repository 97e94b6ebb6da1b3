"""Shared helpers. The library is found as users find it: run-tests.sh sets
PKG_CONFIG_PATH to the build tree's meson-uninstalled directory."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import sup

#: stdout and stderr captured: the keywords for a Popen whose output the test reads.
PIPES: dict[str, Any] = {"stdout": sup.PIPE, "stderr": sup.PIPE}


def cap(args: Any, **kw: Any) -> sup.Result:
    """sup.run with stdout and stderr captured; sup's Result."""
    return sup.run(args, stdout=sup.PIPE, stderr=sup.PIPE, **kw).result


def pid_gone(pid: int) -> bool:
    """True when pid no longer runs (gone, or a zombie waiting for init)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_until(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.fixture(scope="session", autouse=True)
def _library() -> None:
    assert sup.library_version() >= 300, sup.library_path()
