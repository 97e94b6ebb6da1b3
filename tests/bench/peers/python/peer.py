"""Python subprocess peer: peer.py {spawn|capture} COUNT, printing one BENCH
line (see ../README.md). spawn runs /bin/true with subprocess.run and
capture_output=True, as a Python program capturing a command would; capture
reads SUP_BENCH_WRITER's stdout through Popen's unbuffered pipe with
readinto, so no bytes object is allocated per read."""
import os
import platform
import subprocess
import sys
import time

WARMUP = 5
READ_CHUNK = 64 * 1024


def fail(msg, impl="python"):
    print(f"peer_{impl}: {msg}", file=sys.stderr)
    sys.exit(1)


def spawn_true():
    r = subprocess.run(["/bin/true"], stdin=subprocess.DEVNULL,
                       capture_output=True, check=False)
    if r.returncode != 0:
        fail(f"/bin/true exited {r.returncode}")


def capture(writer, count):
    buf = memoryview(bytearray(READ_CHUNK))
    total = 0
    with subprocess.Popen([writer, count], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, bufsize=0) as p:
        while True:
            n = p.stdout.readinto(buf)
            if not n:
                break
            total += n
    if p.returncode != 0:
        fail(f"writer exited {p.returncode}")
    return total


def run_protocol(argv, impl, version, spawn_one, capture_all):
    """The peer protocol, shared with peer_sup.py: checks the arguments, runs
    spawn_one() COUNT times after WARMUP untimed runs, or capture_all(writer,
    COUNT) once, and prints the BENCH line for impl. Returns the exit status."""
    if len(argv) != 3:
        print(f"usage: {argv[0]} {{spawn|capture}} COUNT", file=sys.stderr)
        return 2
    try:
        count = int(argv[2])
    except ValueError:
        count = 0
    if count <= 0:
        print(f"peer_{impl}: bad count {argv[2]!r}", file=sys.stderr)
        return 2
    if argv[1] == "spawn":
        samples = []
        for i in range(count + WARMUP):
            t0 = time.perf_counter_ns()
            spawn_one()
            us = (time.perf_counter_ns() - t0) / 1e3
            if i >= WARMUP:
                samples.append(f"{us:.2f}")
        print(f"BENCH impl={impl} version={version} mode=spawn count={count} "
              f"samples_us={','.join(samples)}")
        return 0
    if argv[1] == "capture":
        writer = os.environ.get("SUP_BENCH_WRITER", "")
        if not writer:
            print(f"peer_{impl}: SUP_BENCH_WRITER is not set", file=sys.stderr)
            return 2
        t0 = time.perf_counter_ns()
        got = capture_all(writer, argv[2])
        secs = (time.perf_counter_ns() - t0) / 1e9
        if got != count:
            fail(f"read {got} of {count} bytes", impl)
        print(f"BENCH impl={impl} version={version} mode=capture count={count} "
              f"bytes={got} seconds={secs:.6f}")
        return 0
    print(f"peer_{impl}: unknown mode {argv[1]!r}", file=sys.stderr)
    return 2


def main(argv):
    return run_protocol(argv, "python", platform.python_version(), spawn_true, capture)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
