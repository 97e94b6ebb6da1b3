"""asyncio: wait_async and aiter_output on loop.add_reader, no thread per wait."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import sup
from sup import Outcome

from conftest import PIPES, open_fds, os_threads, pid_gone, wait_until


def test_wait_async() -> None:
    async def main() -> tuple[int, sup.Result | None]:
        async with sup.Popen(["sh", "-c", "sleep 0.2; echo done; exit 3"], **PIPES) as p:
            return await p.wait_async(), p.result

    rc, r = asyncio.run(main())
    assert rc == 3
    assert r is not None and r.outcome is Outcome.EXITED and r.stdout == b"done\n"


def test_run_async_as_run() -> None:
    async def main() -> tuple[sup.CompletedProcess, sup.CompletedProcess]:
        ok = await sup.run_async(["sh", "-c", "cat; echo err >&2"], input="in\r\n", text=True,
                                 capture_output=True)
        late = await sup.run_async(["sh", "-c", "echo so far; exec sleep 30"], capture_output=True,
                                   max_runtime=0.3)
        with pytest.raises(sup.TimeoutExpired) as e:
            await sup.run_async(["sleep", "30"], capture_output=True, timeout=0.2)
        assert e.value.result is not None and e.value.result.outcome is Outcome.MAX_RUNTIME
        with pytest.raises(subprocess.CalledProcessError):
            await sup.run_async(["false"], capture_output=True, check=True)
        return ok, late

    ok, late = asyncio.run(main())
    assert ok.returncode == 0 and ok.stdout == "in\n" and ok.stderr == "err\n"
    assert late.outcome is Outcome.MAX_RUNTIME and late.stdout == b"so far\n"
    assert late.returncode == -signal.SIGTERM


def test_async_with_waits_and_kill_on_exit_aborts() -> None:
    async def main() -> tuple[float, sup.Result | None]:
        t0 = time.monotonic()
        async with sup.Popen(["sleep", "0.3"], **PIPES):
            pass
        waited = time.monotonic() - t0
        async with sup.Popen(["sleep", "30"], kill_on_exit=True, **PIPES) as p:
            pass
        return waited, p.result

    waited, r = asyncio.run(main())
    assert waited >= 0.3
    assert r is not None and r.outcome is Outcome.ABORTED


def test_cancelled_run_async_aborts_the_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    async def main() -> None:
        task = asyncio.ensure_future(
            sup.run_async(["sh", "-c", f"echo $$ > {pidfile}; exec sleep 30"], capture_output=True)
        )
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert wait_until(lambda: pid_gone(int(pidfile.read_text())))


def test_500_concurrent_wait_async_on_one_loop() -> None:
    sup.run(["true"], capture_output=True)  # the library's own threads exist from here on
    threads, py_threads, fds = os_threads(), threading.active_count(), open_fds()
    n = 500

    async def main() -> tuple[list[int], int, int, float, float]:
        procs = [sup.Popen(["sleep", "60"], **PIPES) for _ in range(n)]
        try:
            tasks = [asyncio.ensure_future(p.wait_async()) for p in procs]
            await asyncio.sleep(0.3)
            assert not any(t.done() for t in tasks)
            during, py_during = os_threads(), threading.active_count()
            t0 = time.monotonic()
            for p in procs[: n // 2]:
                p.abort()
            for p in procs[n // 2 :]:
                p.interrupt()
            codes = await asyncio.gather(*tasks)
            assert [p.result.outcome for p in procs if p.result] == [Outcome.ABORTED] * (n // 2) + [
                Outcome.INTERRUPTED
            ] * (n - n // 2)
            return codes, during, py_during, t0, time.monotonic()
        finally:
            for p in procs:
                p.close()

    results, during, py_during, t0, t1 = asyncio.run(main())
    print(f"{n} wait_async: OS threads {threads} -> {during}; all final {1000 * (t1 - t0):.1f} ms after the requests")
    assert during == threads and py_during == py_threads
    assert results == [-signal.SIGKILL] * (n // 2) + [-signal.SIGTERM] * (n - n // 2)
    assert t1 - t0 < 20
    # sup_release closes the library's fds on its loop thread, just after
    assert wait_until(lambda: open_fds() <= fds), (open_fds(), fds)


def test_cancelled_wait_async_leaves_the_child_and_no_fd() -> None:
    before = open_fds()

    async def main() -> None:
        with sup.Popen(["sleep", "30"], kill_on_exit=True, **PIPES) as p:
            task = asyncio.ensure_future(p.wait_async())
            await asyncio.sleep(0.1)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            assert p.poll() is None  # still running
            p.abort()
            assert await asyncio.wait_for(p.wait_async(), 10) == -signal.SIGKILL
            assert p.result is not None and p.result.outcome is Outcome.ABORTED

    asyncio.run(main())
    assert wait_until(lambda: open_fds() <= before), (open_fds(), before)


def test_aiter_output_while_the_loop_stays_free() -> None:
    script = "for i in 1 2 3; do echo line$i; sleep 0.1; done; echo err >&2"

    async def main() -> tuple[bytes, int, sup.Result | None]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        tick = asyncio.ensure_future(ticker())
        with sup.Popen(["sh", "-c", script], **PIPES) as p:
            out = b"".join([c async for c in p.aiter_output("stdout")])
            await p.wait_async()
            r = p.result
        tick.cancel()
        return out, ticks, r

    out, ticks, r = asyncio.run(main())
    assert out == b"line1\nline2\nline3\n"
    assert r is not None and r.stderr == b"err\n"
    assert ticks > 5  # the loop ran other work while output was awaited


def test_cancelled_async_with_aborts_the_child() -> None:
    async def main() -> sup.Popen:
        holder: list[sup.Popen] = []

        async def body() -> None:
            async with sup.Popen(["sleep", "30"], **PIPES) as p:
                holder.append(p)
                await asyncio.sleep(30)

        task = asyncio.ensure_future(body())
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)
        return holder[0]

    t0 = time.monotonic()
    p = asyncio.run(main())
    assert time.monotonic() - t0 < 10
    assert p.result is not None and p.result.outcome is Outcome.ABORTED


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_asyncio_streams_hold_a_fast_writer_back_for_a_slow_reader() -> None:
    # 50 MiB written while the reader first reads nothing, then reads slowly:
    # the StreamReader pauses its pump past 2 * limit (as asyncio's pipe
    # transport), sup's backpressure then holds the child back, and the host
    # stays small; every byte still arrives, and the result keeps head and tail.
    size = 50 << 20

    async def main() -> None:
        base = _rss_kib()
        p = await sup.create_subprocess_exec("head", "-c", str(size), "/dev/zero",
                                             stdout=sup.PIPE, max_runtime=120)
        assert p.stdout is not None
        await asyncio.sleep(1.0)  # nobody reads
        buffered = [len(p.stdout._buffer)]  # type: ignore[attr-defined]
        grown = [_rss_kib() - base]
        total = 0
        while True:
            chunk = await p.stdout.read(65536)
            if not chunk:
                break
            assert chunk.count(0) == len(chunk)  # zeros only: no gap mark
            total += len(chunk)
            buffered.append(len(p.stdout._buffer))  # type: ignore[attr-defined]
            if total % (1 << 20) < 65536:
                grown.append(_rss_kib() - base)
                await asyncio.sleep(0.002)  # a slow reader
        assert await p.wait() == 0
        assert total == size
        assert max(buffered) <= 2 * 65536 + 65536, max(buffered)  # 2 * limit + one read
        assert max(grown) < 24 << 10, grown  # KiB: far below the 50 MiB written
        r = p.popen.result
        assert r is not None and len(r.stdout) <= 1 << 20
        assert r.stdout_omitted == size - len(r.stdout)

    asyncio.run(main())


def test_asyncio_stdin_drain_waits_for_room() -> None:
    async def main() -> None:
        p = await sup.create_subprocess_exec("sh", "-c", "sleep 1.5; exec cat", stdin=sup.PIPE,
                                             stdout=sup.PIPE, max_runtime=120)
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(b"y" * (4 << 20))
        t0 = time.monotonic()
        reading = asyncio.ensure_future(p.stdout.read())
        await p.stdin.drain()  # returns only once the child has taken most of it
        assert time.monotonic() - t0 >= 1.0
        p.stdin.close()
        await p.stdin.wait_closed()
        assert len(await reading) == 4 << 20
        assert await p.wait() == 0

    asyncio.run(main())


def test_asyncio_streams_keep_every_byte_when_asked() -> None:
    async def main() -> None:
        p = await sup.create_subprocess_exec("head", "-c", str(3 << 20), "/dev/zero",
                                             stdout=sup.PIPE, max_output=None)
        out, _ = await p.communicate()
        assert out is not None and len(out) == 3 << 20
        assert p.popen.result is not None and len(p.popen.result.stdout) == 3 << 20

    asyncio.run(main())
