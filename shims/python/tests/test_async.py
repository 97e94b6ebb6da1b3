"""asyncio: wait_async and aiter_output on loop.add_reader, no thread per wait."""

from __future__ import annotations

import asyncio
import threading
import time

import sup
from sup import Outcome

from conftest import open_fds, os_threads, wait_until


def test_wait_async() -> None:
    async def main() -> sup.Result:
        with sup.Popen(["sh", "-c", "sleep 0.2; echo done"]) as p:
            return await p.wait_async()

    r = asyncio.run(main())
    assert r.outcome is Outcome.EXITED and r.stdout == b"done\n"


def test_500_concurrent_wait_async_on_one_loop() -> None:
    sup.run(["true"])  # the library's own threads exist from here on
    threads, py_threads, fds = os_threads(), threading.active_count(), open_fds()
    n = 500

    async def main() -> tuple[list[sup.Result], int, int, float, float]:
        procs = [sup.Popen(["sleep", "60"]) for _ in range(n)]
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
            results = await asyncio.gather(*tasks)
            return results, during, py_during, t0, time.monotonic()
        finally:
            for p in procs:
                p.close()

    results, during, py_during, t0, t1 = asyncio.run(main())
    print(f"{n} wait_async: OS threads {threads} -> {during}; all final {1000 * (t1 - t0):.1f} ms after the requests")
    assert during == threads and py_during == py_threads
    assert [r.outcome for r in results] == [Outcome.ABORTED] * (n // 2) + [
        Outcome.INTERRUPTED
    ] * (n - n // 2)
    assert t1 - t0 < 20
    # sup_release closes the library's fds on its loop thread, just after
    assert wait_until(lambda: open_fds() <= fds), (open_fds(), fds)


def test_cancelled_wait_async_leaves_the_child_and_no_fd() -> None:
    before = open_fds()

    async def main() -> None:
        with sup.Popen(["sleep", "30"]) as p:
            task = asyncio.ensure_future(p.wait_async())
            await asyncio.sleep(0.1)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            assert p.poll() is None  # still running
            p.abort()
            r = await asyncio.wait_for(p.wait_async(), 10)
            assert r.outcome is Outcome.ABORTED

    asyncio.run(main())
    assert wait_until(lambda: open_fds() <= before), (open_fds(), before)


def test_aiter_output_while_the_loop_stays_free() -> None:
    script = "for i in 1 2 3; do echo line$i; sleep 0.1; done; echo err >&2"

    async def main() -> tuple[bytes, int, sup.Result]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        tick = asyncio.ensure_future(ticker())
        with sup.Popen(["sh", "-c", script]) as p:
            out = b"".join([c async for c in p.aiter_output("stdout")])
            r = await p.wait_async()
        tick.cancel()
        return out, ticks, r

    out, ticks, r = asyncio.run(main())
    assert out == b"line1\nline2\nline3\n"
    assert r.stderr == b"err\n"
    assert ticks > 5  # the loop ran other work while output was awaited
