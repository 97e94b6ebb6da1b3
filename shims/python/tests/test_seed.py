"""The seed scenario: ESC while ripgrep searches a large tree.

The harness in shared/seeds/001 replaced subprocess.run(timeout=20) with a
Popen and a 50 ms polling loop so that an abort ended ripgrep within ~150 ms.
With sup it is abort() from the UI thread and the result, partial output
included, is final within milliseconds.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

import sup
from sup import Outcome

RG = shutil.which("rg")
pytestmark = pytest.mark.skipif(RG is None, reason="ripgrep (Debian: ripgrep) not installed")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20,000 files of 2,000 matching lines each (hard links: made in ~0.2 s).

    rg needs several seconds to print the ~2.5 GB of matches it finds here.
    """
    base = tmp_path_factory.mktemp("rg")
    master = base / "master.txt"
    master.write_bytes(b"".join(b"needle line %d of a file that rg finds\n" % i for i in range(2000)))
    root = base / "tree"
    root.mkdir()
    for d in range(200):
        sub = root / f"pkg{d}"
        sub.mkdir()
        for f in range(100):
            os.link(master, sub / f"mod{f}.py")
    return root


def _first_output(p: sup.Popen) -> bytes:
    for chunk in p.iter_output("stdout"):
        return chunk
    raise AssertionError("rg printed nothing")


@pytest.mark.parametrize("how", ["abort", "interrupt"])
def test_rg_abort_within_150ms_keeps_partial_output(tree: Path, how: str) -> None:
    with sup.Popen([RG or "rg", "needle", str(tree)], idle_timeout=20.0, max_runtime=60.0, grace=2.0,
                   stdout=sup.PIPE, stderr=sup.PIPE) as p:
        first = _first_output(p)
        assert b"needle" in first
        t0 = time.monotonic()
        getattr(p, how)()
        p.wait()
        latency = time.monotonic() - t0
    r = p.result
    assert r is not None
    print(f"rg {how}: final {latency * 1000:.1f} ms after the request, {len(r.stdout)} bytes kept")
    assert r.outcome is (Outcome.ABORTED if how == "abort" else Outcome.INTERRUPTED)
    assert latency < 0.150
    assert r.stdout.startswith(first) and b"needle line" in r.stdout
    assert r.json["stdout"]["bytes"] >= len(r.stdout) > 0


def test_rg_abort_from_the_ui_thread_while_main_waits(tree: Path) -> None:
    with sup.Popen([RG or "rg", "needle", str(tree)], idle_timeout=20.0, stdout=sup.PIPE, stderr=sup.PIPE) as p:
        _first_output(p)
        stamp: list[float] = []

        def esc() -> None:  # the key handler, on another thread
            stamp.append(time.monotonic())
            p.abort()

        threading.Timer(0.05, esc).start()
        p.wait()
        latency = time.monotonic() - stamp[0]
        r = p.result
        assert r is not None
    print(f"rg abort from another thread: final {latency * 1000:.1f} ms after the request")
    assert r.outcome is Outcome.ABORTED
    assert latency < 0.150, latency
    assert b"needle line" in r.stdout


def test_rg_timeout_keeps_partial_output(tree: Path) -> None:
    with pytest.raises(sup.TimeoutExpired) as e:
        sup.run([RG or "rg", "needle", str(tree)], timeout=0.3, capture_output=True)
    r = e.value.result
    assert r is not None and r.outcome is Outcome.MAX_RUNTIME
    assert b"needle line" in r.stdout and e.value.stdout == r.stdout
    assert r.duration < 2.5
