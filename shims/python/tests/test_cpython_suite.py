"""CPython's own test_subprocess, for the Python running the tests, against
sup: its classes for Popen, run, POSIX and context managers with
subprocess.Popen, run and the functions built on them replaced by sup's
(tests/cpython/run_suite.py). Every test passes, is skipped by CPython itself,
or is listed with the reason it cannot apply in tests/cpython/not_applicable.txt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "cpython"


def _listed() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (HERE / "not_applicable.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, why = line.partition(": ")
            assert why, f"not_applicable.txt: no reason for {name}"
            out[name] = why
    return out


def test_cpython_test_subprocess_passes_or_is_listed(tmp_path: Path) -> None:
    try:
        import test.test_subprocess  # noqa: F401
    except ImportError:
        pytest.skip("this Python ships no test.test_subprocess (Debian: libpython3.X-testsuite)")
    out = tmp_path / "outcome.json"
    env = dict(os.environ)
    r = subprocess.run(
        [sys.executable, str(HERE / "run_suite.py"), str(out)],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600,
    )
    assert out.exists(), r.stderr.decode(errors="replace")[-3000:]
    outcome: dict[str, list[str]] = json.loads(out.read_text())
    listed = _listed()
    counts = {"pass": 0, "skip": 0, "not applicable": 0, "fail": 0}
    failing = []
    for test_id, (state, message) in sorted(outcome.items()):
        name = test_id.split(".", 2)[-1]
        if state in ("pass", "skip"):
            counts[state] += 1
        elif name in listed:
            counts["not applicable"] += 1
        else:
            counts["fail"] += 1
            failing.append(f"{name}: {state}\n{message}")
    print(f"CPython test_subprocess against sup: {counts}")
    assert not failing, "\n\n".join(failing)
    assert sum(counts.values()) > 150  # the classes were found and run
