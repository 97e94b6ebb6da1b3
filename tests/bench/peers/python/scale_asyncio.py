"""Python asyncio scale peer: scale_asyncio.py scale COUNT, printing one
BENCH line (see ../README.md).

COUNT children of $SUP_BENCH_CHILD ("chatty 100": a 64-byte line every
100 ms), watched the way an asyncio program naively would:
create_subprocess_exec with stdout and stderr piped, a task per child
awaiting readline(), each child in a process group of its own (as sup puts
it), the default child watcher. After $SUP_BENCH_SCALE_SETTLE seconds, the
process's CPU (getrusage RUSAGE_SELF: every thread, none of the children)
and context switches are taken over $SUP_BENCH_SCALE_SECONDS, with the lines
read in that window.

With $SUP_BENCH_SCALE_START_LIMIT (seconds), it stops starting children
when that time is up and measures those it has: its loop, busy reading the
lines of the first ones, starts the later ones ever more slowly (minutes for
2,000 on two busy cores). count= in the BENCH line is how many it started."""
import asyncio
import os
import platform
import resource
import signal
import sys
import time


def usage():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_nvcsw + ru.ru_nivcsw


async def scale(n, child, settle, window, start_limit):
    lines = 0

    async def reader(stream):
        nonlocal lines
        while await stream.readline():
            lines += 1

    procs, tasks = [], []
    t0 = time.monotonic()
    for _ in range(n):
        if start_limit and time.monotonic() - t0 > start_limit:
            break
        p = await asyncio.create_subprocess_exec(
            child, "chatty", "100", stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            process_group=0)
        procs.append(p)
        tasks.append(asyncio.create_task(reader(p.stdout)))
    spawn_s = time.monotonic() - t0
    await asyncio.sleep(settle)
    l0 = lines
    cpu0, csw0 = usage()
    w0 = time.monotonic()
    await asyncio.sleep(window)
    cpu1, csw1 = usage()
    l1 = lines
    secs = time.monotonic() - w0
    for p in procs:
        os.killpg(p.pid, signal.SIGKILL)
    await asyncio.gather(*tasks)
    for p in procs:
        await p.wait()
    print(f"BENCH impl=python-asyncio version={platform.python_version()} "
          f"mode=scale count={len(procs)} requested={n} seconds={secs:.3f} lines={l1 - l0} "
          f"cpu_ms={cpu1 - cpu0:.3f} context_switches={csw1 - csw0} "
          f"spawn_s={spawn_s:.3f}")


def main(argv):
    if len(argv) != 3 or argv[1] != "scale":
        print(f"usage: {argv[0]} scale COUNT", file=sys.stderr)
        return 2
    try:
        n = int(argv[2])
        settle = float(os.environ["SUP_BENCH_SCALE_SETTLE"])
        window = float(os.environ["SUP_BENCH_SCALE_SECONDS"])
        child = os.environ["SUP_BENCH_CHILD"]
        start_limit = float(os.environ.get("SUP_BENCH_SCALE_START_LIMIT", "0"))
    except (KeyError, ValueError) as e:
        print(f"peer_python_asyncio: {e}", file=sys.stderr)
        return 2
    asyncio.run(scale(n, child, settle, window, start_limit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
