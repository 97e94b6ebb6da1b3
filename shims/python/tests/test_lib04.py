"""libsup 0.4 through subprocess's keywords: files and descriptors as stdio,
pass_fds and close_fds=False, restore_signals, user/group/extra_groups,
every byte kept by default, input_wait_timeout and Popen.input_wanted,
limits= and sandbox=."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import sup

from conftest import wait_until


def test_file_objects_and_descriptors_as_stdio(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open(out, "wb") as f:
        r = sup.run(["sh", "-c", "echo to-out; echo to-err >&2"], stdout=f, stderr=sup.STDOUT)
    assert r.returncode == 0 and r.stdout is None
    assert out.read_bytes() == b"to-out\nto-err\n"
    assert r.result is not None and r.result.json["stdout"]["routed"] == "fd"

    src = tmp_path / "in"
    src.write_bytes(b"from a file\n")
    fd = os.open(src, os.O_RDONLY)
    try:
        r = sup.run(["cat"], stdin=fd, capture_output=True)
    finally:
        os.close(fd)
    assert r.stdout == b"from a file\n"

    err = tmp_path / "err"
    with open(err, "wb") as f:
        r = sup.run(["sh", "-c", "echo oops >&2"], stderr=f.fileno(), stdout=sup.PIPE)
    assert err.read_bytes() == b"oops\n" and r.stdout == b""
    # the same as subprocess, side by side
    with open(out, "w+b") as f:
        subprocess.run(["echo", "same"], stdout=f)
        sup.run(["echo", "same"], stdout=f)
        f.seek(0)
        assert f.read() == b"same\nsame\n"


def test_a_closed_descriptor_names_the_key() -> None:
    r, w = os.pipe()
    os.close(r)
    os.close(w)
    with pytest.raises(OSError) as e:
        sup.run(["true"], stdout=w)
    assert "stdout" in getattr(e.value, "detail", str(e.value))


def test_pass_fds_same_numbers_and_others_closed() -> None:
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    os.set_inheritable(w2, True)  # inheritable, but not passed: closed in the child
    try:
        code = f"import os; os.write({w1}, b'passed\\n'); print(*os.listdir('/proc/self/fd'))"
        res = sup.run([sys.executable, "-c", code], pass_fds=[w1], capture_output=True)
        os.close(w1)
        assert os.read(r1, 100) == b"passed\n"
        seen = {int(x) for x in res.stdout.split()}
        assert w1 in seen and w2 not in seen
    finally:
        for fd in (r1, r2, w2):
            os.close(fd)
    with pytest.raises(TypeError, match="^pass_fds: "):
        sup.run(["true"], pass_fds=["3"])


def test_close_fds_false_passes_inheritable_descriptors() -> None:
    r, w = os.pipe()
    r2, w2 = os.pipe()  # not inheritable (Python's default): not passed
    os.set_inheritable(w, True)
    try:
        res = sup.run(["ls", "/proc/self/fd"], close_fds=False, capture_output=True)
        seen = {int(x) for x in res.stdout.split()}
        assert w in seen and w2 not in seen
        with pytest.warns(RuntimeWarning, match="pass_fds overriding close_fds"):
            res = sup.run(["ls", "/proc/self/fd"], close_fds=False, pass_fds=[w2], capture_output=True)
        seen = {int(x) for x in res.stdout.split()}
        assert w2 in seen and w not in seen
    finally:
        for fd in (r, w, r2, w2):
            os.close(fd)


def _ignored(status: bytes) -> int:
    for line in status.splitlines():
        if line.startswith(b"SigIgn:"):
            return int(line.split()[1], 16)
    raise AssertionError(status)


def test_restore_signals() -> None:
    # The host ignores SIGUSR1 (and Python ignores SIGPIPE and SIGXFSZ).
    old = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        kept = _ignored(sup.run(["cat", "/proc/self/status"], restore_signals=False, capture_output=True).stdout)
        clean = _ignored(sup.run(["cat", "/proc/self/status"], capture_output=True).stdout)
    finally:
        signal.signal(signal.SIGUSR1, old)
    bit = 1 << (signal.SIGUSR1 - 1)
    assert kept & bit and kept & (1 << (signal.SIGPIPE - 1))
    assert clean == 0  # sup's default: every signal at its default (PIPE and XFSZ too)


def test_user_group_extra_groups() -> None:
    me = os.getuid()
    if me == 0:
        r = sup.run(["id", "-u"], user=65534, group=65534, extra_groups=[65534], capture_output=True)
        assert r.stdout == b"65534\n"
        assert r.result is not None and r.result.json["confined"]["user"]["uid"] == 65534
    else:
        # The library refuses without privilege, naming the key; subprocess
        # refuses too (PermissionError).
        with pytest.raises(PermissionError):
            sup.run(["true"], user=0)
        with pytest.raises(PermissionError):
            sup.run(["true"], extra_groups=[0])
    with pytest.raises(sup.SpecError, match="user"):
        sup.run(["true"], user="no-such-user-sup-test")
    with pytest.raises(TypeError, match="^user: "):
        sup.run(["true"], user=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^extra_groups: "):
        sup.run(["true"], extra_groups="wheel")
    with pytest.raises(ValueError, match="^user: "):
        sup.run(["true"], user=-1)
    with pytest.raises(OverflowError, match="^group: "):
        sup.run(["true"], group=2**64)


def test_a_sup_capture_is_not_passed_on_as_a_pipe() -> None:
    with sup.Popen(["echo", "x"], stdout=sup.PIPE) as p1:
        with pytest.raises(TypeError, match="^stdin: a sup Popen's stdout"):
            sup.Popen(["cat"], stdin=p1.stdout)


def test_every_byte_kept_by_default() -> None:
    size = 40 << 20  # past 0.3's 16 MiB default and any small cap
    r = sup.run([sys.executable, "-c", f"import sys; sys.stdout.buffer.write(b'x' * {size})"], capture_output=True)
    assert len(r.stdout) == size
    assert r.result is not None and r.result.stdout_omitted == 0


def test_input_wanted_and_input_wait_timeout() -> None:
    with sup.Popen(["sh", "-c", "read x; echo got $x"], stdin=sup.PIPE, stdout=sup.PIPE) as p:
        assert wait_until(p.input_wanted, 20.0)
        assert p.stdin is not None
        p.stdin.write(b"line\n")
        p.stdin.flush()
        assert p.stdout is not None
        assert p.stdout.read() == b"got line\n"
        p.wait()
        assert p.input_wanted() is False  # final

    rfd, wfd = os.pipe()  # kept open: the child waits on it for good
    try:
        t0 = time.monotonic()
        r = sup.run(["sh", "-c", "read x"], stdin=rfd, input_wait_timeout=0.3, capture_output=True)
        assert time.monotonic() - t0 < 30
    finally:
        os.close(rfd)
        os.close(wfd)
    assert r.result is not None
    assert r.result.outcome is sup.Outcome.IDLE_TIMEOUT
    assert r.result.json["phase"] == "input"
    assert r.result.json["waiting_for_input"] is True
    with pytest.raises(sup.SpecError, match="^input_wait_timeout"):
        sup.run(["true"], input_wait_timeout=-1)


def test_limits_dict_and_dataclass() -> None:
    for limits in ({"open_files": 64, "core_dump": False}, sup.Limits(open_files=64, core_dump=False)):
        r = sup.run(["sh", "-c", "ulimit -n; ulimit -c"], limits=limits, capture_output=True)
        assert r.stdout == b"64\n0\n", r
        assert r.result is not None and r.result.json["confined"] is not None
    r = sup.run(["sh", "-c", "ulimit -t"], limits=sup.Limits(cpu_seconds=30), capture_output=True)
    assert r.stdout == b"30\n"
    with pytest.raises(sup.SpecError, match="^limits: unknown key 'open_file'"):
        sup.run(["true"], limits={"open_file": 3})
    with pytest.raises(TypeError, match="^limits: "):
        sup.run(["true"], limits=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^limits: "):
        sup.run(["true"], limits=sup.Sandbox())  # type: ignore[arg-type]
    with pytest.raises(sup.SpecError, match="limits"):
        sup.run(["true"], limits={"open_files": -1})


def _landlock() -> bool:
    r = sup.run(["true"], sandbox={"write": []}, capture_output=True)
    conf: Any = r.result.json["confined"] if r.result is not None else None
    return bool(conf and conf.get("sandbox", {}).get("landlock_abi"))


def test_sandbox(tmp_path: Path) -> None:
    r = sup.run(["true"], sandbox=sup.Sandbox(write=[tmp_path], tmp=True), capture_output=True)
    assert r.returncode == 0
    assert r.result is not None and r.result.json["confined"]["sandbox"] is not None
    with pytest.raises(sup.SpecError, match="^sandbox: unknown key"):
        sup.run(["true"], sandbox={"writes": []})
    if not _landlock():
        pytest.skip("no Landlock in this kernel: what it would refuse is not tested")
    allowed = tmp_path / "ok"
    r = sup.run(["sh", "-c", f"echo y > {allowed}; echo n > {tmp_path.parent}/sup-denied-$$ 2>/dev/null; echo $?"],
                sandbox={"write": [os.fspath(tmp_path)]}, capture_output=True)
    assert allowed.read_text() == "y\n"
    assert r.stdout.strip() != b"0"
