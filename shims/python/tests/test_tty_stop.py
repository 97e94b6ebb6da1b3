"""A child that opens the host's terminal itself (/dev/tty, as a password
prompt does) with stdin=PIPE or DEVNULL is stopped by SIGTTIN in its own
process group: it is ended (tty_stop_timeout, 0.2 s) with a RuntimeWarning
instead of stopping forever, while a child waiting on its stdin pipe runs
on. The host is a Python on a pseudo-terminal of its own (conftest.tty_host)."""

from __future__ import annotations

import os
import pty
import select
import sys
import time

from conftest import tty_host

_ENDED = r"""
import math, subprocess, time, warnings
import sup

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    t0 = time.monotonic()
    p = sup.Popen(["sh", "-c", "read x < /dev/tty"], stdin=subprocess.PIPE)
    rc = p.wait(timeout=10)  # subprocess.TimeoutExpired if it stopped for good
    print("piped", rc, p.result.phase, p.result.waiting_for_input,
          round(time.monotonic() - t0, 2), flush=True)
    r = sup.run(["sh", "-c", "read x < /dev/tty"], stdin=subprocess.DEVNULL, timeout=10)
    print("run-devnull", r.returncode, r.result.phase, flush=True)
print("warned", len(caught), *{w.category.__name__ for w in caught},
      all("opened itself" in str(w.message) and "tty_stop_timeout=math.inf" in str(w.message)
          and "tty_foreground=True" in str(w.message) for w in caught), flush=True)

# Waiting on its stdin pipe is not a stop: it runs on until fed.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    q = sup.Popen(["sh", "-c", "read x; echo got:$x"], stdin=subprocess.PIPE,
                  stdout=subprocess.PIPE)
    time.sleep(1.0)
    alive = q.poll()
    out, _ = q.communicate(b"late\n", timeout=10)
    print("pipe-reader", alive, q.returncode, out.decode().strip(), len(caught), flush=True)

# tty_stop_timeout=math.inf: left stopped, as a background job's child.
o = sup.Popen(["sh", "-c", "read x < /dev/tty"], stdin=subprocess.PIPE,
              tty_stop_timeout=math.inf)
time.sleep(1.0)
print("opt-out", o.poll(), flush=True)
o.kill()
print("killed", o.wait(timeout=30), flush=True)
"""


def test_a_child_that_opens_the_terminal_is_ended_not_stopped_forever() -> None:
    out = tty_host(_ENDED, timeout=60)
    lines = {ln.split(" ", 1)[0]: ln.split()[1:] for ln in out.decode(errors="replace").splitlines() if ln}
    assert "killed" in lines, out
    rc, phase, waiting, secs = lines["piped"]
    assert (rc, phase, waiting) == ("-15", "input", "True"), out
    assert 0.2 <= float(secs) < 5, out
    assert lines["run-devnull"] == ["-15", "input"], out
    assert lines["warned"] == ["2", "RuntimeWarning", "True"], out
    assert lines["pipe-reader"] == ["None", "0", "got:late", "0"], out
    assert lines["opt-out"] == ["None"], out  # still stopped after 1 s
    assert lines["killed"] == ["-9"], out


_FOREGROUND = r"""
import subprocess
import sup
print("ready", flush=True)
r = sup.run(["sh", "-c", "read x < /dev/tty; echo got:$x"], stdout=subprocess.PIPE, timeout=20)
print("foreground", r.returncode, r.stdout.decode().strip(), r.result.tty_foreground, flush=True)
"""


def _on_terminal_typing(code: str, line: bytes, timeout: float = 60) -> bytes:
    """Runs code in a Python on a new pty (its controlling terminal, in the
    foreground) and types line on the terminal once it printed "ready"."""
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execv(sys.executable, [sys.executable, "-c", code])
    out = b""
    typed = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(master, 1024)
            except OSError:  # EIO: every writer has gone
                break
            if not chunk:
                break
            out += chunk
            if not typed and b"ready" in out:
                time.sleep(0.3)  # the child is at its read by now, or soon
                os.write(master, line)
                typed = True
    finally:
        os.waitpid(pid, 0)
        os.close(master)
    return out


def test_the_same_child_given_the_terminal_reads_the_line() -> None:
    out = _on_terminal_typing(_FOREGROUND, b"typed\n")
    assert b"foreground 0 got:typed True" in out, out
