"""The Result's typed attributes for libsup 0.4's result fields, each from a
real run and checked against the result JSON they come from."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import sup
from conftest import tty_host


def test_limit_cpu_ends_a_spinner_and_confined_says_how() -> None:
    r = sup.run(["sh", "-c", "while :; do :; done"], limits={"cpu_seconds": 1},
                capture_output=True, max_runtime=60)
    res = r.result
    assert res.outcome is sup.Outcome.SIGNALED, res
    assert res.limit == "cpu" and res.json["limit"] == "cpu"
    assert r.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
    assert res.confined is not None
    cpu = res.confined.limits["cpu_seconds"]
    assert cpu == sup.LimitApplied("cpu_seconds", 1, "rlimit", "process", None)
    assert list(res.confined.limits) == ["cpu_seconds"]
    assert res.confined.sandbox is None and res.confined.user is None
    with pytest.raises(TypeError):
        res.confined.limits["x"] = cpu  # type: ignore[index]  # read-only


def test_limit_file_size_and_core_dump(tmp_path: Path) -> None:
    out = tmp_path / "big"
    r = sup.run(["sh", "-c", f"exec head -c 100000 /dev/zero > {out}"],
                limits=sup.Limits(file_bytes=4096, core_dump=False), capture_output=True)
    assert r.result.limit == "file_size", r.result
    assert r.returncode == -signal.SIGXFSZ and r.result.outcome is sup.Outcome.SIGNALED
    assert os.path.getsize(out) == 4096
    conf = r.result.confined
    assert conf is not None
    assert conf.limits["file_bytes"].value == 4096
    assert conf.limits["core_dump"].value is False
    assert conf.limits["core_dump"].mechanism == "rlimit"


def test_no_limit_no_confined_and_none_for_what_nobody_asked() -> None:
    r = sup.run(["true"], capture_output=True).result
    assert r.limit is None and r.confined is None
    assert r.waiting_for_input is None  # no input_wait_timeout, no input_wanted()
    assert r.tty_foreground is None and r.tty_refused is None  # not asked
    assert r.stdout_tee_error is None and r.stderr_tee_error is None
    assert r.host_death in ("tree", "main_process") and r.host_death == r.json["host_death"]


def test_waiting_for_input_from_input_wait_timeout() -> None:
    rfd, wfd = os.pipe()  # kept open: `read x` waits on it for good
    try:
        r = sup.run(["sh", "-c", "read x"], stdin=rfd, input_wait_timeout=0.3,
                    capture_output=True, max_runtime=60)
    finally:
        os.close(rfd)
        os.close(wfd)
    res = r.result
    assert res.outcome is sup.Outcome.IDLE_TIMEOUT, res
    assert res.phase == "input" and res.json["phase"] == "input"
    assert res.waiting_for_input is True
    # Asked, and the child slept without reading: False.
    q = sup.run(["sleep", "0.5"], stdin=sup.DEVNULL, input_wait_timeout=10,
                capture_output=True).result
    assert q.outcome is sup.Outcome.EXITED and q.phase is None
    assert q.waiting_for_input is False, q.json["waiting_for_input"]


def test_sandbox_and_user_as_typed_entries(tmp_path: Path) -> None:
    r = sup.run(["true"], sandbox=sup.Sandbox(write=[tmp_path], tmp=True),
                capture_output=True).result
    assert r.confined is not None and r.confined.sandbox is not None
    sb, raw = r.confined.sandbox, r.json["confined"]["sandbox"]
    assert sb.landlock_abi == raw["landlock_abi"] >= 0
    assert sb.filesystem is raw["filesystem"] and sb.not_enforced == tuple(raw["not_enforced"])
    assert sb.tmp is not None and sb.tmp == raw["tmp"] and sb.network is None
    assert not r.confined.limits and r.confined.user is None
    if os.geteuid() != 0:
        pytest.skip("user/group need a privileged host")
    u = sup.run(["id", "-u"], user=65534, group=65534, extra_groups=[65534],
                capture_output=True)
    assert u.stdout == b"65534\n"
    conf = u.result.confined
    assert conf is not None and conf.user == sup.UserApplied(65534, 65534, (65534,))


def test_tty_foreground_given_says_so() -> None:
    out = tty_host(
        "import sup\n"
        "r = sup.run(['true']).result\n"
        "print('fg', r.tty_foreground, r.tty_refused, r.json['tty_foreground'])\n"
    )
    assert b"fg True None True" in out, out


def test_tee_error_when_the_hosts_reader_has_gone() -> None:
    # stdout=None with an idle clock: sup copies to the host's stdout, a
    # pipe whose reader is gone; `yes` then dies of SIGPIPE and the result
    # says EPIPE.
    code = (
        "import sys, sup\n"
        "r = sup.run(['yes'], idle_timeout=30, max_runtime=60, max_output=4096)\n"
        "print(r.result.stdout_tee_error, r.result.stderr_tee_error, r.returncode, file=sys.stderr)\n"
    )
    rfd, wfd = os.pipe()
    os.close(rfd)
    try:
        p = subprocess.run([sys.executable, "-c", code], stdout=wfd, stderr=subprocess.PIPE,
                           timeout=120, env=dict(os.environ))
    finally:
        os.close(wfd)
    assert p.stderr.split() == [b"EPIPE", b"None", b"-13"], p.stderr
