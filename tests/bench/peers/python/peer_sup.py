"""sup through its Python shim: peer_sup.py {spawn|capture} COUNT, printing
one BENCH line (see ../README.md). spawn is sup.run of /bin/true, which
captures both streams as peer.py's subprocess.run(capture_output=True) does;
capture streams SUP_BENCH_WRITER's stdout through Popen.iter_output with
backpressure set, so that every byte is read, as peer.py reads Popen's pipe.
The runner puts shims/python/src on PYTHONPATH and names libsup in
SUP_LIBRARY."""
import os
import sys
import time

import sup

WARMUP = 5
READ_CHUNK = 64 * 1024


def fail(msg):
    print(f"peer_pysup: {msg}", file=sys.stderr)
    sys.exit(1)


def spawn_true():
    r = sup.run(["/bin/true"])
    if r.returncode != 0:
        fail(f"/bin/true: {r!r}")


def capture(writer, count):
    total = 0
    with sup.Popen([writer, count], backpressure=4 * READ_CHUNK) as p:
        for chunk in p.iter_output("stdout"):
            total += len(chunk)
        r = p.wait()
    if r.returncode != 0:
        fail(f"writer: {r!r}")
    return total


def main(argv):
    if len(argv) != 3:
        print(f"usage: {argv[0]} {{spawn|capture}} COUNT", file=sys.stderr)
        return 2
    try:
        count = int(argv[2])
    except ValueError:
        count = 0
    if count <= 0:
        print(f"peer_pysup: bad count {argv[2]!r}", file=sys.stderr)
        return 2
    v = sup.library_version()
    version = f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    if argv[1] == "spawn":
        samples = []
        for i in range(count + WARMUP):
            t0 = time.perf_counter_ns()
            spawn_true()
            us = (time.perf_counter_ns() - t0) / 1e3
            if i >= WARMUP:
                samples.append(f"{us:.2f}")
        print(f"BENCH impl=pysup version={version} mode=spawn count={count} "
              f"samples_us={','.join(samples)}")
    elif argv[1] == "capture":
        writer = os.environ.get("SUP_BENCH_WRITER")
        if not writer:
            print("peer_pysup: SUP_BENCH_WRITER is not set", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        got = capture(writer, argv[2])
        secs = time.perf_counter() - t0
        if got != count:
            fail(f"read {got} of {count} bytes")
        print(f"BENCH impl=pysup version={version} mode=capture count={count} bytes={got} "
              f"seconds={secs:.6f}")
    else:
        print(f"peer_pysup: unknown mode {argv[1]!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
