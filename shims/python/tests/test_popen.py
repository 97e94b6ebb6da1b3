"""Popen: waiting, abort and close from other threads, live output, Ctrl-C."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
import weakref
from pathlib import Path
from typing import Iterator

import pytest

import sup
from sup import Outcome

from conftest import PIPES, open_fds, pid_gone, wait_until


def test_poll_wait_and_timeout_expired() -> None:
    with sup.Popen(["sleep", "30"], **PIPES) as p:
        assert p.poll() is None and p.returncode is None and p.result is None
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired) as e:
            p.wait(timeout=0.2)
        assert 0.2 <= time.monotonic() - t0 < 2
        assert e.value.timeout == 0.2 and e.value.cmd == ["sleep", "30"]
        assert isinstance(e.value, sup.TimeoutExpired)
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(timeout=0)
        assert p.poll() is None  # the child keeps running
        p.abort()
        assert p.wait(timeout=5) == -signal.SIGKILL
        r = p.result
        assert r is not None and r.outcome is Outcome.ABORTED and r.forced_kill
        assert p.poll() == -9 and p.wait() == -9 and p.result is r
        assert p.returncode == -9


def test_interrupt() -> None:
    with sup.Popen(["sh", "-c", "trap 'echo bye; exit 5' TERM; echo up; while :; do sleep 0.05; done"], **PIPES) as p:
        assert next(p.iter_output("stdout")) == b"up\n"
        p.interrupt()
        assert p.wait(timeout=10) == 5
        r = p.result
    assert r is not None and r.outcome is Outcome.INTERRUPTED
    assert r.returncode == 5 and r.stdout == b"up\nbye\n"


def test_abort_from_another_thread_wakes_wait_promptly() -> None:
    with sup.Popen(["sleep", "30"], **PIPES) as p:
        stamps: list[float] = []

        def aborter() -> None:
            time.sleep(0.3)
            stamps.append(time.monotonic())
            p.abort()

        t = threading.Thread(target=aborter)
        t.start()
        p.wait()  # blocks in poll(2) on the library's fd, GIL released
        woke = time.monotonic()
        r = p.result
        t.join()
    latency = woke - stamps[0]
    print(f"abort from another thread -> wait() returned in {latency * 1000:.2f} ms")
    assert r is not None and r.outcome is Outcome.ABORTED
    assert latency < 1.0


def test_close_from_another_thread_wakes_wait() -> None:
    p = sup.Popen(["sleep", "30"], **PIPES)
    threading.Timer(0.2, p.close).start()
    assert p.wait(timeout=10) == -signal.SIGKILL
    r = p.result
    assert r is not None and r.outcome is Outcome.ABORTED
    assert wait_until(lambda: pid_gone(r.pid))


def test_requests_after_final_change_nothing() -> None:
    p = sup.Popen(["sh", "-c", "exit 4"], **PIPES)
    assert p.wait() == 4
    r = p.result
    p.interrupt()
    p.abort()
    p.kill()
    assert p.wait() == 4 and p.result is r
    assert r is not None and r.outcome is Outcome.EXITED and r.returncode == 4
    p.close()
    p.close()  # idempotent
    p.abort()  # no effect after close either
    p.kill()
    assert p.poll() == 4 and p.wait(timeout=0) == 4 and p.result is r


def test_with_block_waits_as_subprocess() -> None:
    t0 = time.monotonic()
    with sup.Popen(["sh", "-c", "sleep 0.3; exit 6"], **PIPES) as p:
        pass
    assert time.monotonic() - t0 >= 0.3
    assert p.returncode == 6
    r = p.result
    assert r is not None and r.outcome is Outcome.EXITED


def test_with_block_kill_on_exit_aborts_and_reaps() -> None:
    with sup.Popen(["sh", "-c", "sleep 30 & exec sleep 30"], kill_on_exit=True, **PIPES) as p:
        pid = p.pid
    r = p.result
    assert r is not None and r.outcome is Outcome.ABORTED
    assert p.returncode == -signal.SIGKILL
    assert wait_until(lambda: pid_gone(pid))


def test_exception_in_with_block_still_reaps() -> None:
    with pytest.raises(RuntimeError):
        with sup.Popen(["sleep", "30"], kill_on_exit=True, **PIPES) as p:
            raise RuntimeError("boom")
    assert wait_until(lambda: pid_gone(p.pid))


def test_collected_popen_is_aborted_with_a_warning() -> None:
    p = sup.Popen(["sleep", "30"], **PIPES)
    pid = p.pid
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del p
        gc.collect()
    assert any(issubclass(w.category, ResourceWarning) for w in caught)
    assert wait_until(lambda: pid_gone(pid))


def test_iter_output_live() -> None:
    script = "for i in 1 2 3 4; do echo $i; echo e$i >&2; sleep 0.15; done"
    with sup.Popen(["sh", "-c", script], **PIPES) as p:
        seen: list[tuple[float, bytes]] = []
        for chunk in p.iter_output("stdout"):
            seen.append((time.monotonic(), chunk))
        p.wait()
        r = p.result
        assert r is not None
        err = b"".join(p.iter_output("stderr"))  # after the end: what was kept
    assert b"".join(c for _, c in seen) == b"1\n2\n3\n4\n"
    assert len(seen) >= 2 and seen[-1][0] - seen[0][0] > 0.2  # live, not at the end
    assert err == b"e1\ne2\ne3\ne4\n" == r.stderr


def test_iter_output_ends_on_abort_and_bad_stream() -> None:
    with sup.Popen(["sh", "-c", "echo one; exec sleep 30"], **PIPES) as p:
        it = p.iter_output("stdout")
        assert next(it) == b"one\n"
        threading.Timer(0.2, p.abort).start()
        assert list(it) == []
        with pytest.raises(ValueError, match="stream"):
            next(p.iter_output("stdin"))  # type: ignore[arg-type]


def test_iter_output_with_backpressure_loses_nothing() -> None:
    # 8 MiB through a 64 KiB capture: a live reader with backpressure gets every byte
    code = "import sys\nfor i in range(8 * 16):\n    sys.stdout.write(str(i % 10) * 65536)\n"
    with sup.Popen(["python3", "-c", code], max_output=65536, backpressure=1 << 20, **PIPES) as p:
        total = 0
        digest = 0
        for chunk in p.iter_output("stdout"):
            total += len(chunk)
            digest += chunk.count(b"7")
        p.wait()
        r = p.result
        assert r is not None
    assert total == 8 << 20
    assert digest == 13 * 65536  # i % 10 == 7 for 13 of the 128 blocks
    assert r.stdout_omitted == (8 << 20) - 65536


def test_no_fd_leak() -> None:
    def rounds(n: int) -> None:
        for _ in range(n):
            with sup.Popen(["sh", "-c", "echo x"], stdin=sup.PIPE, **PIPES) as p:
                assert p.stdout is not None
                list(p.stdout)
                p.wait()
            r = sup.run(["sleep", "5"], max_runtime=0.01, capture_output=True)
            assert r.outcome is Outcome.MAX_RUNTIME
            with pytest.raises(sup.TimeoutExpired):
                sup.run(["sleep", "5"], timeout=0.01, capture_output=True)

    rounds(2)
    gc.collect()
    before = open_fds()
    rounds(50)
    gc.collect()
    # sup_release closes the library's fds on its loop thread, just after
    assert wait_until(lambda: open_fds() <= before), (open_fds(), before)


# ---- Ctrl-C ---------------------------------------------------------------


@pytest.fixture
def default_sigint() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, even where the runner's shell (a
    background job, CI) started Python with SIGINT ignored."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _main_thread_waits() -> bool:
    """The main thread is inside Popen.wait (so the signal lands in the wait)."""
    main = threading.main_thread().ident
    frame = sys._current_frames().get(main or 0)
    while frame is not None:
        if frame.f_code.co_name in ("wait", "_wait_result") and "sup" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _sigint_main_when(cond_path: Path, times: int = 1, gap: float = 0.3) -> threading.Thread:
    main = threading.main_thread().ident
    assert main is not None

    def send() -> None:
        wait_until(lambda: cond_path.exists() and _main_thread_waits(), 20)
        for i in range(times):
            if i:
                time.sleep(gap)
            signal.pthread_kill(main, signal.SIGINT)

    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


@pytest.mark.usefixtures("default_sigint")
def test_keyboard_interrupt_interrupts_child_gracefully(tmp_path: Path) -> None:
    ready, said = tmp_path / "ready", tmp_path / "said"
    script = (
        f"trap 'echo bye > {said}; exit 7' INT; echo $$ > {ready}; "
        "while :; do sleep 0.05; done"
    )
    t = _sigint_main_when(ready)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sup.run(["sh", "-c", script], signal=signal.SIGINT, grace=10.0, capture_output=True)
    elapsed = time.monotonic() - t0
    t.join()
    assert said.read_text() == "bye\n"  # the child ran its handler: graceful
    assert pid_gone(int(ready.read_text()))  # and it is gone when run() raises
    assert elapsed < 10


@pytest.mark.usefixtures("default_sigint")
def test_second_keyboard_interrupt_aborts(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = f"trap '' INT; echo $$ > {ready}; exec sleep 60"
    t = _sigint_main_when(ready, times=2, gap=0.3)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sup.run(["sh", "-c", script], signal=signal.SIGINT, grace=60.0, capture_output=True)
    elapsed = time.monotonic() - t0
    t.join()
    assert elapsed < 10  # not the 60 s grace
    assert pid_gone(int(ready.read_text()))


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_in_a_with_block_interrupts_the_child(tmp_path: Path) -> None:
    said = tmp_path / "said"
    script = f"trap 'echo bye > {said}; exit 7' TERM; echo up; while :; do sleep 0.05; done"
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with sup.Popen(["sh", "-c", script], grace=10.0, **PIPES) as p:
            assert p.stdout is not None and p.stdout.readline() == b"up\n"
            raise KeyboardInterrupt  # as Ctrl-C would, in the block
    assert time.monotonic() - t0 < 10
    assert said.read_text() == "bye\n" and p.returncode == 7
    assert p.result is not None and p.result.outcome is Outcome.INTERRUPTED


def test_json_outlives_the_handle() -> None:
    p = sup.Popen(["sh", "-c", "echo hi; exit 2"], **PIPES)
    p.wait()
    r = p.result
    assert r is not None
    ref = weakref.ref(p)
    del p
    assert ref() is None  # freed by reference counting: the Result does not hold it
    assert r.json["stdout"]["captured"] == "hi\n" and r.json["exit_code"] == 2

    p2 = sup.Popen(["sh", "-c", "echo cycle"], **PIPES)
    p2.me = p2  # type: ignore[attr-defined]  # a reference cycle through the Popen
    p2.wait()
    r1 = p2.result
    assert r1 is not None
    ref2 = weakref.ref(p2)
    del p2
    gc.collect()  # in a cycle, weak references die before __del__ runs
    assert ref2() is None
    assert r1.json["stdout"]["captured"] == "cycle\n"
    with sup.Popen(["sh", "-c", "echo there"], **PIPES) as p:
        p.wait()
    r2 = p.result
    assert r2 is not None and r2.json["stdout"]["captured"] == "there\n"


def test_stdin_inherit() -> None:
    code = (
        "import sup; import sys; "
        "sys.stdout.buffer.write(sup.run(['cat'], capture_output=True).stdout); "
        "sys.stdout.buffer.write(sup.run(['cat'], stdin=sup.INHERIT, capture_output=True).stdout)"
    )
    out = subprocess.run([sys.executable, "-c", code], input=b"from the host\n", capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"from the host\n"


def test_result_json_is_fetched_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    a = sup._lib.api()
    real = a.result
    calls: list[int] = []

    def counting(h: int) -> bytes | None:
        calls.append(h)
        return real(h)

    monkeypatch.setattr(a, "result", counting)
    # 1 MiB of NULs: 6 MiB as JSON text, which nobody here asks for
    with sup.Popen(["head", "-c", "1048576", "/dev/zero"], **PIPES) as p:
        pass
    r = p.result
    assert r is not None and len(r.stdout) == 1 << 20
    del p
    gc.collect()
    assert calls == []
    assert r.json["stdout"]["bytes"] == 1 << 20  # still there after close
    assert len(calls) == 1
