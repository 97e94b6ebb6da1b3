"""sup through its Python shim: peer_sup.py {spawn|capture} COUNT, printing
one BENCH line (see ../README.md). spawn is sup.run of /bin/true, which
captures both streams as peer.py's subprocess.run(capture_output=True) does;
capture streams SUP_BENCH_WRITER's stdout through Popen.iter_output with
backpressure set, so that every byte is read, as peer.py reads Popen's pipe.
The runner puts shims/python/src on PYTHONPATH and names libsup in
SUP_LIBRARY. The protocol (arguments, warm-up, the BENCH line) is peer.py's."""
import sys

import sup

from peer import READ_CHUNK, run_protocol
from peer import fail as fail_as


def fail(msg):
    fail_as(msg, "pysup")


def spawn_true():
    r = sup.run(["/bin/true"])
    if r.returncode != 0:
        fail(f"/bin/true: {r!r}")


def capture(writer, count):
    total = 0
    with sup.Popen([writer, count], stdout=sup.PIPE, backpressure=4 * READ_CHUNK) as p:
        for chunk in p.iter_output("stdout"):
            total += len(chunk)
        p.wait()
    if p.returncode != 0:
        fail(f"writer: {p.returncode!r}")
    return total


def main(argv):
    v = sup.library_version()
    version = f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return run_protocol(argv, "pysup", version, spawn_true, capture)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
