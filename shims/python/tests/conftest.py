"""Shared helpers. The library is found as users find it: run-tests.sh sets
PKG_CONFIG_PATH to the build tree's meson-uninstalled directory."""

from __future__ import annotations

import os
import pty
import select
import sys
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


def tty_host(code: str, timeout: float = 60) -> bytes:
    """Runs code in a Python whose controlling terminal is a new pty (its
    session leader, in the foreground); returns what it wrote there."""
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execv(sys.executable, [sys.executable, "-c", code])
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            break
        try:
            chunk = os.read(master, 1024)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    os.close(master)
    return out
