"""A Popen's child that reads the host's terminal without having it ends at
once (the result and a RuntimeWarning say why) instead of stopping forever.
The host is a Python on a pseudo-terminal the test makes: its session
leader, with the terminal as its controlling one and in its foreground."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

_HOST = r"""
import fcntl, math, os, sys, termios, time, warnings
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
assert os.tcgetpgrp(0) == os.getpgrp()  # the host has the foreground
import sup

def report(tag, p, t0):
    r = p.result
    print(tag, p.returncode, r.phase, r.waiting_for_input, round(time.monotonic() - t0, 1),
          flush=True)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    t0 = time.monotonic()
    p = sup.Popen(["sh", "-c", "read x"])
    p.wait(timeout=5)  # subprocess.TimeoutExpired if it stopped for good
    report("inherited", p, t0)
    t0 = time.monotonic()
    with open(os.ttyname(0), "rb") as tty:
        q = sup.Popen(["sh", "-c", "read x"], stdin=tty)
        q.wait(timeout=5)
    report("as-file", q, t0)
print("warned", len(caught), *{w.category.__name__ for w in caught},
      all("stopped on the host's terminal" in str(w.message) for w in caught), flush=True)

# A child that leaves the terminal alone runs on, quiet or not.
t0 = time.monotonic()
s = sup.Popen(["sh", "-c", "sleep 1; echo quiet-done"])
s.wait(timeout=30)
report("quiet", s, t0)

# input_wait_timeout=math.inf: left stopped, as a background job's child.
o = sup.Popen(["sh", "-c", "read x"], input_wait_timeout=math.inf)
time.sleep(1.5)
print("opt-out", o.poll(), o.input_wanted(), flush=True)
o.kill()
print("killed", o.wait(timeout=30), flush=True)

# A host in the background (`prog &`): run() cannot hand it the terminal
# (the library gives it only to a foreground host), so its child is ended too.
import subprocess
bg = ("import sup, warnings; warnings.simplefilter('ignore')\n"
      "r = sup.run(['sh', '-c', 'read x'], timeout=10)\n"
      "print('background', r.returncode, r.result.phase, flush=True)\n")
subprocess.run([sys.executable, "-c", bg], process_group=0, timeout=60)
"""


def _run_on_terminal(code: str, timeout: float = 120) -> bytes:
    master, slave = os.openpty()
    try:
        host = subprocess.Popen([sys.executable, "-c", code], stdin=slave, stdout=slave,
                                stderr=slave, start_new_session=True, env=dict(os.environ))
    finally:
        os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                if host.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every writer has gone
                break
            if not chunk:
                break
            out += chunk
    finally:
        if host.poll() is None:
            host.kill()
        host.wait()
        os.close(master)
    return out


def test_a_popen_child_reading_the_terminal_never_stops_forever() -> None:
    out = _run_on_terminal(_HOST)
    lines = {ln.split(" ", 1)[0]: ln.split()[1:] for ln in out.decode(errors="replace").splitlines() if ln}
    assert "killed" in lines, out
    # Ended within the 5 s wait: the interrupt signal, on the input phase.
    for tag in ("inherited", "as-file"):
        rc, phase, waiting, secs = lines[tag]
        assert (rc, phase, waiting) == ("-15", "input", "True"), out
        assert float(secs) < 5, out
    assert lines["warned"] == ["2", "RuntimeWarning", "True"], out
    assert b"quiet-done" in out and lines["quiet"][:2] == ["0", "None"], out
    assert lines["opt-out"] == ["None", "True"], out  # still stopped after 1.5 s
    assert lines["killed"] == ["-9"], out
    assert lines["background"] == ["-15", "input"], out
