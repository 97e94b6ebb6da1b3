"""Runs CPython's own test_subprocess (of the Python running this) with
subprocess's Popen, run and the functions built on them replaced by sup's,
and writes one JSON object to OUT: {test id: ["pass"|"fail"|"error"|"skip", message]}.

Only the classes that test Popen, run, POSIX behaviour and context managers
are run (the issue's scope); Windows-only classes and MiscTests (which tests
subprocess's own getoutput/list2cmdline internals) are left out.
    python run_suite.py OUT [TEST_NAME_PREFIX ...]
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import unittest

import sup

PER_TEST = 60  # seconds; a hang is a failure, not the end of the run
CLASSES = ("ProcessTestCase", "RunFuncTestCase", "POSIXProcessTestCase", "ContextManagerTests")


def main() -> None:
    sup.library_path()  # found (through pkg-config, if so) before subprocess is patched
    from test import test_subprocess as T  # noqa: N812

    for name in ("Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"):
        setattr(subprocess, name, getattr(sup, name))
    outcome: dict[str, list[str]] = {}

    class Hung(Exception):
        pass

    def hung(signum: int, frame: object) -> None:
        raise Hung(f"no end after {PER_TEST} s")

    signal.signal(signal.SIGALRM, hung)

    class Collect(unittest.TestResult):
        def startTest(self, test: unittest.TestCase) -> None:
            sys.stderr.write(f"{test.id()}\n")
            signal.alarm(PER_TEST)
            super().startTest(test)

        def stopTest(self, test: unittest.TestCase) -> None:
            signal.alarm(0)
            super().stopTest(test)

        def addSuccess(self, test: unittest.TestCase) -> None:
            outcome[test.id()] = ["pass", ""]

        def addFailure(self, test: unittest.TestCase, err: object) -> None:
            outcome[test.id()] = ["fail", self._exc_info_to_string(err, test)[-1500:]]  # type: ignore[arg-type]

        def addError(self, test: unittest.TestCase, err: object) -> None:
            outcome[test.id()] = ["error", self._exc_info_to_string(err, test)[-1500:]]  # type: ignore[arg-type]

        def addSkip(self, test: unittest.TestCase, reason: str) -> None:
            outcome[test.id()] = ["skip", reason]

        def addExpectedFailure(self, test: unittest.TestCase, err: object) -> None:
            outcome[test.id()] = ["pass", "expected failure"]

        def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
            outcome[test.id()] = ["fail", "unexpected success"]

    # Listed tests that would wait forever on sup are not started.
    hangs = set()
    with open(os.path.join(os.path.dirname(__file__), "not_applicable.txt")) as f:
        for line in f:
            name, _, why = line.partition(": ")
            if why.startswith("(hangs)"):
                hangs.add(name)
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    out_path, prefixes = sys.argv[1], sys.argv[2:]
    for cls in CLASSES:
        for test in loader.loadTestsFromTestCase(getattr(T, cls)):
            name = test.id().split(".", 2)[-1]
            if name in hangs:
                outcome[test.id()] = ["not run", "listed as hanging on sup"]
            elif not prefixes or any(name.startswith(p) for p in prefixes):
                suite.addTest(test)
    suite.run(Collect())
    with open(out_path, "w") as f:  # a test may close the host's stdout
        json.dump(outcome, f, indent=0)


if __name__ == "__main__":
    main()
