"""The names subprocess uses mean what they mean there: each call is also
made with subprocess and the two compared where they must agree."""

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
from sup import Outcome

from conftest import PIPES, pid_gone, wait_until

SAME: list[Any] = [
    (["sh", "-c", "printf 'out\\r\\nx'; printf err >&2; exit 3"], {"capture_output": True}),
    (["sh", "-c", "printf 'out\\r\\nx'; printf err >&2"], {"capture_output": True, "text": True}),
    (["sh", "-c", "printf '\\351t\\351'"], {"capture_output": True, "encoding": "latin-1"}),
    (["sh", "-c", "printf '\\377ok'"], {"capture_output": True, "text": True, "errors": "replace"}),
    (["cat"], {"input": "é line\n", "capture_output": True, "text": True}),
    (["cat"], {"input": b"\x00\xff", "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}),
    (["cat"], {"stdin": subprocess.DEVNULL, "capture_output": True}),
    (["cat"], {"stdin": subprocess.PIPE, "capture_output": True}),
    ("echo $((6 * 7)) $0", {"shell": True, "capture_output": True, "text": True}),
    (["echo $1-$0", "zero", "one"], {"shell": True, "capture_output": True}),
    ("pwd", {"cwd": "/", "capture_output": True, "universal_newlines": True}),
    (["sh", "-c", "kill -TERM $$"], {"capture_output": True}),
    (["sh", "-c", "echo ok"], {"capture_output": True, "check": True}),
]


@pytest.mark.parametrize("args, kw", SAME)
def test_run_gives_what_subprocess_gives(args: Any, kw: dict[str, Any]) -> None:
    theirs = subprocess.run(args, **kw)
    ours = sup.run(args, **kw)
    assert isinstance(ours, subprocess.CompletedProcess) and isinstance(ours, sup.CompletedProcess)
    assert (ours.args, ours.returncode, ours.stdout, ours.stderr) == (
        theirs.args,
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
    assert ours.result.outcome in (Outcome.EXITED, Outcome.SIGNALED)


def test_wait_and_poll_return_the_int_returncode() -> None:
    p = sup.Popen(["true"], **PIPES)
    assert p.wait() == 0
    assert p.poll() == 0 and p.returncode == 0
    p = sup.Popen(["sh", "-c", "kill -KILL $$"], **PIPES)
    assert p.wait() == -signal.SIGKILL
    assert p.result is not None and p.result.signal == signal.SIGKILL
    assert p.result.returncode == -signal.SIGKILL


def test_check_raises_calledprocesserror_as_subprocess() -> None:
    with pytest.raises(subprocess.CalledProcessError) as e:
        sup.run(["sh", "-c", "echo partial; echo bad >&2; exit 4"], capture_output=True, check=True)
    err = e.value
    assert isinstance(err, sup.CalledProcessError)
    assert (err.returncode, err.cmd, err.stdout, err.stderr) == (
        4,
        ["sh", "-c", "echo partial; echo bad >&2; exit 4"],
        b"partial\n",
        b"bad\n",
    )
    assert err.output == err.stdout
    assert err.result is not None and err.result.outcome is Outcome.EXITED
    r = sup.run(["sh", "-c", "exit 2"], capture_output=True)
    with pytest.raises(subprocess.CalledProcessError):
        r.check_returncode()
    sup.run(["true"], capture_output=True).check_returncode()


def test_timeout_raises_timeoutexpired_with_the_output_so_far(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as e:
        sup.run(["sh", "-c", f"echo $$ > {pidfile}; echo so far; exec sleep 30"],
                capture_output=True, text=True, timeout=0.3)
    assert 0.3 <= time.monotonic() - t0 < 10
    err = e.value
    assert isinstance(err, sup.TimeoutExpired)
    # bytes even with text=True, as subprocess.run gives them
    assert err.timeout == 0.3 and err.stdout == b"so far\n" and err.output == b"so far\n"
    assert err.result is not None and err.result.outcome is Outcome.MAX_RUNTIME
    assert pid_gone(int(pidfile.read_text()))  # ended, as subprocess.run ends it
    # max_runtime (sup's) returns instead
    r = sup.run(["sleep", "30"], capture_output=True, max_runtime=0.2)
    assert r.outcome is Outcome.MAX_RUNTIME and r.returncode == -signal.SIGTERM


def test_capture_output_with_stdout_is_refused() -> None:
    with pytest.raises(ValueError, match="capture_output"):
        sup.run(["true"], capture_output=True, stdout=sup.PIPE)


def test_sup_constants_are_subprocess_constants() -> None:
    assert (sup.PIPE, sup.STDOUT, sup.DEVNULL) == (
        subprocess.PIPE,
        subprocess.STDOUT,
        subprocess.DEVNULL,
    )


def test_stdin_defaults_to_inherit_as_subprocess(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"from the host's stdin\n")
    code = (
        "import sup, sys; r = sup.run(['cat'], capture_output=True); "
        "sys.stdout.buffer.write(r.stdout)"
    )
    with open(src, "rb") as f:
        out = subprocess.run([sys.executable, "-c", code], stdin=f, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"from the host's stdin\n"


def test_popen_pipes_communicate_as_subprocess() -> None:
    args = ["sh", "-c", "tr a-z A-Z; echo done >&2; exit 5"]
    kw: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    theirs = subprocess.Popen(args, **kw)
    t_out = theirs.communicate(b"hello\n")
    with sup.Popen(args, **kw) as p:
        out = p.communicate(b"hello\n")
    assert out == t_out == (b"HELLO\n", b"done\n")
    assert p.returncode == theirs.returncode == 5
    with sup.Popen(args, text=True, **kw) as p:
        assert p.communicate("text\r\n") == ("TEXT\n", "done\n")


def test_env_replaces_the_environment_as_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUP_SECRET", "s3cret")
    clean = {k: v for k, v in os.environ.items() if k != "SUP_SECRET"}
    ours = sup.run(["env"], env=clean, capture_output=True, text=True)
    assert "SUP_SECRET" not in ours.stdout
    assert sorted(ours.stdout.splitlines()) == sorted(f"{k}={v}" for k, v in clean.items())
    r = sup.run(["env"], env={"PATH": "/bin"}, capture_output=True)
    assert r.stdout == subprocess.run(["env"], env={"PATH": "/bin"}, capture_output=True).stdout
    assert r.stdout == b"PATH=/bin\n"
    # env_update adds to the inherited environment; on top of env, to env
    r = sup.run(["env"], env={"A": "1", "B": "2"}, env_update={"B": None, "C": "3"}, capture_output=True)
    assert sorted(r.stdout.splitlines()) == [b"A=1", b"C=3"]
    assert b"SUP_SECRET=s3cret" in sup.run(["env"], env_update={"X": "y"}, capture_output=True).stdout


def _host(code: str) -> subprocess.CompletedProcess[bytes]:
    """Run code in a fresh Python whose stdout/stderr the test captures."""
    return subprocess.run([sys.executable, "-c", "import sup\n" + code], capture_output=True, timeout=60)


def test_stdout_none_shows_the_output_and_an_idle_clock_sees_it() -> None:
    out = _host(
        "r = sup.run(['sh', '-c', 'echo to-out; echo to-err >&2'], idle_timeout=30)\n"
        "assert r.stdout is None and r.stderr is None, r\n"
        "assert r.result.stdout == b'to-out\\n' and r.result.stderr == b'to-err\\n', r.result\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"to-out\n" and out.stderr == b"to-err\n"


def test_devnull_inherit_and_stdout_merge() -> None:
    out = _host(
        "r = sup.run(['sh', '-c', 'echo a; echo b >&2'], stdout=sup.DEVNULL, stderr=sup.INHERIT)\n"
        "assert r.stdout is None and r.result.stdout == b'' and r.result.stderr == b'', r\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"" and out.stderr == b"b\n"
    r = sup.run(["sh", "-c", "echo 1; echo 2 >&2; echo 3; echo 4 >&2"], stdout=sup.PIPE, stderr=sup.STDOUT)
    assert r.stdout == b"1\n2\n3\n4\n" and r.stderr is None
    theirs = subprocess.run(["sh", "-c", "echo 1; echo 2 >&2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert sup.run(["sh", "-c", "echo 1; echo 2 >&2"], stdout=sup.PIPE, stderr=sup.STDOUT).stdout == theirs.stdout


def test_terminate_send_signal_and_kill() -> None:
    script = "trap 'echo usr1' USR1; trap 'echo term; exit 9' TERM; echo ready; while :; do sleep 0.05; done"
    with sup.Popen(["sh", "-c", script], **PIPES) as p:
        assert p.stdout is not None
        assert p.stdout.readline() == b"ready\n"
        p.send_signal(signal.SIGUSR1)
        assert p.stdout.readline() == b"usr1\n"
        p.send_signal(0)  # a liveness probe
        p.terminate()
        assert p.wait(timeout=10) == 9
        assert p.stdout.read() == b"term\n"
    r = p.result
    assert r is not None and r.outcome is Outcome.EXITED  # a signal never changes the outcome
    assert [s["signal"] for s in r.json["signals_sent"]] == ["SIGUSR1", "SIGTERM"]
    p.send_signal(signal.SIGTERM)  # once final: nothing happens, as subprocess
    p.terminate()
    with sup.Popen(["sleep", "30"], **PIPES) as p:
        p.kill()
        assert p.wait(timeout=10) == -signal.SIGKILL
    with pytest.raises(ValueError, match="sig"):
        p.send_signal(65)


def test_leaving_with_closes_stdin_then_waits() -> None:
    with sup.Popen(["cat"], stdin=sup.PIPE, **PIPES) as p:
        assert p.stdin is not None
        p.stdin.write(b"kept\n")  # buffered: flushed and closed on the way out
    assert p.returncode == 0
    assert p.result is not None and p.result.stdout == b"kept\n"
    assert wait_until(lambda: pid_gone(p.pid))
