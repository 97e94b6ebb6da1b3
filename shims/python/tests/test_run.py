"""sup.run: each outcome, capture, spec encoding, errors (sup's Result)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sup
from sup import Outcome

from conftest import cap, pid_gone, wait_until


def test_exited_with_code_and_exact_output() -> None:
    r = cap(["sh", "-c", r"printf 'a\000\377b'; printf 'err\n' >&2; exit 3"])
    assert r.outcome is Outcome.EXITED
    assert r.returncode == 3
    assert r.signal is None
    assert r.stdout == b"a\x00\xffb"
    assert r.stderr == b"err\n"
    assert r.stdout_omitted == 0 and r.stderr_omitted == 0
    assert not r.forced_kill and not r.status_lost
    assert r.pid > 0 and r.json["pid"] == r.pid
    assert r.json["outcome"] == "exited" and r.json["exit_code"] == 3
    assert 0 <= r.duration < 5
    assert r.args == ["sh", "-c", r"printf 'a\000\377b'; printf 'err\n' >&2; exit 3"]


def test_outcome_values_are_the_library_names() -> None:
    assert [o.value for o in Outcome] == [
        "exited", "signaled", "idle_timeout", "max_runtime", "interrupted", "aborted"
    ]


def test_signaled() -> None:
    r = cap(["sh", "-c", "kill -KILL $$"])
    assert r.outcome is Outcome.SIGNALED
    assert r.returncode == -signal.SIGKILL  # as subprocess
    assert r.signal == signal.SIGKILL and isinstance(r.signal, signal.Signals)
    assert not r.forced_kill


def test_idle_timeout_keeps_partial_output() -> None:
    t0 = time.monotonic()
    r = cap(["sh", "-c", "echo partial; echo warn >&2; exec sleep 30"], idle_timeout=0.3)
    elapsed = time.monotonic() - t0
    assert r.outcome is Outcome.IDLE_TIMEOUT
    assert r.stdout == b"partial\n" and r.stderr == b"warn\n"
    assert r.signal == signal.SIGTERM and not r.forced_kill
    assert 0.3 <= elapsed < 3
    assert r.json["signals_sent"][0]["signal"] == "SIGTERM"


def test_idle_clock_reset_by_stderr_alone() -> None:
    # a line on stderr every 0.1 s for 1.5 s, nothing on stdout: never idle for 0.6 s
    script = "i=0; while [ $i -lt 15 ]; do echo tick >&2; sleep 0.1; i=$((i+1)); done"
    r = cap(["sh", "-c", script], idle_timeout=0.6)
    assert r.outcome is Outcome.EXITED, r
    assert r.returncode == 0
    assert r.stdout == b"" and r.stderr == b"tick\n" * 15


def test_max_runtime_despite_output() -> None:
    script = "while :; do echo busy; sleep 0.02; done"
    r = cap(["sh", "-c", script], idle_timeout=5.0, max_runtime=0.4)
    assert r.outcome is Outcome.MAX_RUNTIME
    assert r.stdout.startswith(b"busy\n")
    assert 0.4 <= r.duration < 3


def test_last_words_on_interrupt_signal() -> None:
    script = "trap 'echo bye; exit 7' INT; echo ready; while :; do sleep 0.05; done"
    r = cap(["sh", "-c", script], idle_timeout=0.3, signal=signal.SIGINT, grace=5.0)
    assert r.outcome is Outcome.IDLE_TIMEOUT
    assert r.stdout == b"ready\nbye\n"
    assert r.returncode == 7 and not r.forced_kill


def test_grace_then_sigkill() -> None:
    script = "trap '' TERM; echo stubborn; exec sleep 30"
    # The idle limit starts at "stubborn", once the shell ignores SIGTERM.
    r = cap(["sh", "-c", script], first_output_timeout=10.0, idle_timeout=0.2, grace=0.2)
    assert r.outcome is Outcome.IDLE_TIMEOUT
    assert r.forced_kill and r.signal == signal.SIGKILL
    assert [s["signal"] for s in r.json["signals_sent"]] == ["SIGTERM", "SIGKILL"]
    assert r.stdout == b"stubborn\n"


def test_kill_on_timeout_skips_grace() -> None:
    r = cap(["sleep", "30"], idle_timeout=0.2, grace=30.0, kill_on_timeout=True)
    assert r.outcome is Outcome.IDLE_TIMEOUT
    assert r.forced_kill and r.signal == signal.SIGKILL
    assert r.duration < 5


def test_signal_by_name() -> None:
    r = cap(["sleep", "30"], max_runtime=0.1, signal="HUP")
    assert r.outcome is Outcome.MAX_RUNTIME and r.signal == signal.SIGHUP


def test_grandchild_holding_the_pipe() -> None:
    # the shell exits at once; the background sleep keeps stdout open
    t0 = time.monotonic()
    r = cap(["sh", "-c", "sleep 30 & echo $!"])
    elapsed = time.monotonic() - t0
    assert r.outcome is Outcome.EXITED and r.returncode == 0
    assert elapsed < 2.0, elapsed
    grandchild = int(r.stdout)
    assert wait_until(lambda: pid_gone(grandchild), 5.0)


def test_input_bytes_and_stdin() -> None:
    data = bytes(range(256)) * 100
    assert cap(["cat"], input=data).stdout == data
    assert cap(["cat"], stdin=sup.DEVNULL).stdout == b""
    assert cap(["cat"], stdin=subprocess.DEVNULL).stdout == b""
    r = cap(["sh", "-c", "exec 0<&-; true"], stdin=sup.INHERIT)
    assert r.returncode == 0
    with pytest.raises(ValueError, match="input"):
        cap(["cat"], input=b"x", stdin=sup.INHERIT)
    with pytest.raises(TypeError, match="input"):  # as subprocess: str needs text mode
        cap(["cat"], input="text")


def test_argv_bytes_pass_through_raw() -> None:
    args = ["é", b"\xff\xfe raw", 'quote " back \\ slash', "tab\tnew\nline", "\x01\x1f"]
    r = cap(["printf", r"%s\000", *args])
    expected = b"".join(os.fsencode(a) + b"\0" for a in args)
    assert r.stdout == expected


def test_env_update_sets_removes_inherits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUP_TEST_KEEP", "kept")
    monkeypatch.setenv("SUP_TEST_DROP", "dropped")
    r = cap(
        ["sh", "-c", 'printf "%s|%s|%s|%s" "$SUP_TEST_KEEP" "${SUP_TEST_DROP-unset}" "$A" "$B"'],
        env_update={"SUP_TEST_DROP": None, "A": "é\"\\", "B": os.fsdecode(b"\xff\x01")},
    )
    assert r.stdout == "kept|unset|é\"\\|".encode() + b"\xff\x01"


def test_cwd(tmp_path: Path) -> None:
    d = tmp_path / "dir with space"
    d.mkdir()
    assert cap(["pwd"], cwd=d).stdout == os.fsencode(d) + b"\n"
    assert cap(["pwd"], cwd=str(d)).stdout == os.fsencode(d) + b"\n"


def test_max_output_keeps_head_and_tail() -> None:
    r = cap(
        ["python3", "-c", "import sys; sys.stdout.write('H' + 'x' * 99998 + 'T')"],
        max_output=1000,
    )
    assert len(r.stdout) == 1000
    assert r.stdout_omitted == 99000
    assert r.stdout[:1] == b"H" and r.stdout[-1:] == b"T"
    assert r.json["stdout"]["bytes"] == 100000 and r.json["stdout"]["truncated"]


def test_status_lost_when_host_ignores_sigchld() -> None:
    code = (
        "import signal, sup; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
        "r = sup.run(['sh', '-c', 'exit 3'], capture_output=True).result; "
        "print(r.outcome.value, r.status_lost, r.returncode, r.signal)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [b"exited", b"True", b"None", b"None"]


# ---- errors ---------------------------------------------------------------


def test_program_not_found() -> None:
    with pytest.raises(FileNotFoundError) as e:
        cap(["sup-no-such-program-xyz", "arg"])
    assert e.value.filename == "sup-no-such-program-xyz"
    assert e.value.strerror == os.strerror(errno.ENOENT)  # as subprocess's
    assert "not found" in e.value.detail  # type: ignore[attr-defined]


def test_not_executable(tmp_path: Path) -> None:
    f = tmp_path / "script"
    f.write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError) as e:
        cap([str(f)])
    assert e.value.filename == str(f)


def test_exec_a_directory(tmp_path: Path) -> None:
    with pytest.raises(OSError) as e:
        cap([str(tmp_path)])
    assert isinstance(e.value, (IsADirectoryError, PermissionError))
    assert e.value.filename == str(tmp_path)


def test_bad_cwd(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as e:
        cap(["true"], cwd=tmp_path / "missing")
    assert e.value.filename == tmp_path / "missing"
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(NotADirectoryError) as e2:
        cap(["true"], cwd=str(f))
    assert e2.value.filename == str(f)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"idle_timeout": -1.0}, "idle_timeout"),
        ({"idle_timeout": 0}, "idle_timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"max_runtime": "10"}, "max_runtime"),
        ({"timeout": 1.0, "max_runtime": 1.0}, "timeout"),
        ({"first_output_timeout": -1}, "first_output_timeout"),
        ({"grace": -0.5}, "grace"),
        ({"signal": "NOSUCHSIG"}, "signal"),
        ({"signal": 0}, "signal"),
        ({"max_output": -1}, "max_output"),
        ({"backpressure": 1.5}, "backpressure"),
        ({"env": {"A": 1}}, "env"),
        ({"env": {"A=B": "x"}}, "env"),
        ({"env": {"A": None}}, "env"),
        ({"env_update": {"A": 1}}, "env_update"),
        ({"env_update": ["A"]}, "env_update"),
        ({"cwd": "a\0b"}, "cwd"),
        ({"stdin": "inherit"}, "stdin"),
        ({"stdin": sup.STDOUT}, "stdin"),
        ({"stdin": -5}, "stdin"),  # 0 and up are descriptors, as in subprocess
        ({"kill_on_timeout": 1}, "kill_on_timeout"),
        ({"pty": (0, 80)}, "pty"),
        ({"pty": "yes"}, "pty"),
        ({"contain": "jail"}, "contain"),
    ],
)
def test_bad_option_names_it(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name}") as e:
        cap(["true"], **kwargs)  # type: ignore[arg-type]
    assert isinstance(e.value, sup.SpecError)


@pytest.mark.parametrize("args", [[], ["a\0b"], None, 5])
def test_bad_args(args: object) -> None:
    with pytest.raises(sup.SpecError, match=r"^args"):
        cap(args)  # type: ignore[arg-type]


def test_a_str_is_one_program_as_in_subprocess() -> None:
    assert cap("pwd", cwd="/").stdout == b"/\n"
    assert cap(b"pwd", cwd="/").stdout == b"/\n"
    with pytest.raises(FileNotFoundError) as e:
        cap("ls -l")  # no shell: the whole string names the program
    assert e.value.filename == "ls -l"


def test_library_spec_error_is_renamed() -> None:
    from sup._errors import spec_error_from_detail

    e = spec_error_from_detail("spec: idle_timeout_ms: must be a non-negative integer")
    assert isinstance(e, ValueError)
    assert str(e).startswith("idle_timeout: must be a non-negative integer")
    assert "idle_timeout_ms" in str(e)


def test_args_from_an_iterator_and_pathlike(tmp_path: Path) -> None:
    r = cap(iter(["echo", "it"]))  # type: ignore[arg-type]
    assert r.stdout == b"it\n" and r.args == ["echo", "it"]
    script = tmp_path / "s.sh"
    script.write_text("#!/bin/sh\necho path\n")
    script.chmod(0o755)
    assert cap([script]).stdout == b"path\n"
    with pytest.raises(FileNotFoundError) as e:
        cap(iter(["sup-no-such-program-xyz"]))  # type: ignore[arg-type]
    assert e.value.filename == "sup-no-such-program-xyz"


def test_first_output_timeout_and_the_phase() -> None:
    t0 = time.monotonic()
    r = cap(["sleep", "30"], first_output_timeout=0.3, idle_timeout=30.0)
    assert r.outcome is Outcome.IDLE_TIMEOUT and r.phase == "first_output"
    assert 0.3 <= time.monotonic() - t0 < 10
    # once the first byte came, the idle clock runs from it
    r = cap(["sh", "-c", "echo hi; exec sleep 30"], first_output_timeout=30.0, idle_timeout=0.3)
    assert r.outcome is Outcome.IDLE_TIMEOUT and r.phase == "idle" and r.stdout == b"hi\n"
    assert cap(["true"], first_output_timeout=5.0).phase is None


def test_routing_shows_in_the_result() -> None:
    r = sup.run(["true"], stdout=sup.DEVNULL, stderr=sup.STDOUT).result
    assert (r.json["stdout"]["routed"], r.json["stderr"]["routed"]) == ("null", "stdout")
    r = sup.run(["true"], capture_output=True).result
    assert (r.json["stdout"]["routed"], r.json["stderr"]["routed"]) == ("pipe", "pipe")
    with pytest.raises(sup.SpecError, match="^idle_timeout"):  # sup reads neither stream
        sup.run(["true"], stdout=sup.DEVNULL, stderr=sup.DEVNULL, idle_timeout=1.0)
