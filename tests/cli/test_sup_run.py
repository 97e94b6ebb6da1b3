"""End-to-end tests of sup-run, driving the built binary.

Run through meson (`meson test -C build-cli sup-run`), or directly with
SUP_RUN=/path/to/sup-run python3 tests/cli/test_sup_run.py [-v] [TestName].

Timing assertions use thresholds in the hundreds of milliseconds with wide
margins: they tell "ended by the deadline" from "ended by something else five
seconds later" and from "ended at once", not scheduler jitter.
"""

import errno
import fcntl
import hashlib
import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import tempfile
import termios
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUP_RUN = os.environ.get("SUP_RUN") or os.path.join(
    REPO, "build-cli", "examples", "sup-run", "sup-run")

MiB = 1024 * 1024

# sup-run keeps a SIGINT, SIGTERM or SIGHUP it inherits as ignored ignored
# (as make and the shells do), and its tests send it those signals: a suite
# started under nohup, or from a shell's background job, must not pass that
# on. The test that wants it ignored says so itself.
for _sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.SIG_DFL)

# A shell loop that stays alive, silent, and reacts to signals at once: a
# trapped signal runs its trap when the current short sleep ends (the sleep is
# in the same process group and gets the signal too).
SILENT_LOOP = "while :; do sleep 0.05; done"


def run(*args, input=None, timeout=20, env=None, stdin=subprocess.DEVNULL):
    """Runs sup-run to completion; the result has .elapsed in seconds."""
    start = time.monotonic()
    cp = subprocess.run([SUP_RUN, *args], input=input,
                        stdin=None if input is not None else stdin,
                        capture_output=True, timeout=timeout, env=env)
    cp.elapsed = time.monotonic() - start
    return cp


def pid_gone(pid):
    """True when pid no longer runs: absent, or a zombie nobody reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def wait_pid_gone(pid, timeout=2.0):
    deadline = time.monotonic() + timeout
    while not pid_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def kill_quietly(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def sha256(data):
    return hashlib.sha256(data).hexdigest()


class Running:
    """sup-run in the background, its stdout and stderr collected as they come."""

    def __init__(self, testcase, args, **popen_args):
        self.proc = subprocess.Popen(
            [SUP_RUN, *args], stdin=popen_args.pop("stdin", subprocess.DEVNULL),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen_args)
        testcase.addCleanup(self._cleanup)
        self.cond = threading.Condition()
        self.buffers = {"out": bytearray(), "err": bytearray()}
        self.threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, "out"), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, "err"), daemon=True),
        ]
        for t in self.threads:
            t.start()
        self.testcase = testcase

    def _pump(self, pipe, name):
        while True:
            chunk = os.read(pipe.fileno(), 65536)
            if not chunk:
                break
            with self.cond:
                self.buffers[name] += chunk
                self.cond.notify_all()

    def _cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for t in self.threads:
            t.join(5)
        self.proc.stdout.close()
        self.proc.stderr.close()

    def wait_for(self, name, token, timeout=5.0):
        with self.cond:
            if not self.cond.wait_for(lambda: token in self.buffers[name], timeout):
                self.testcase.fail(f"{token!r} not on std{name} within {timeout}s; "
                                   f"got {bytes(self.buffers[name])!r}")

    def finish(self, timeout=10.0):
        rc = self.proc.wait(timeout)
        for t in self.threads:
            t.join(5)
        return rc

    @property
    def out(self):
        with self.cond:
            return bytes(self.buffers["out"])


class TempDirTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="sup-run-test-")
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name

    def path(self, name):
        return os.path.join(self.tmp, name)

    def read_pid(self, name, timeout=5.0):
        """The pid a child wrote to a file; killed at cleanup should a test fail."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with open(self.path(name)) as f:
                    text = f.read()
                if text.endswith("\n"):
                    pid = int(text)
                    self.addCleanup(kill_quietly, pid)
                    return pid
            except FileNotFoundError:
                pass
            if time.monotonic() > deadline:
                self.fail(f"no pid in {name} within {timeout}s")
            time.sleep(0.01)

    def read_json(self, name):
        with open(self.path(name)) as f:
            text = f.read()
        self.assertTrue(text.endswith("\n"), "the JSON result ends with a newline")
        return json.loads(text)


class HelpAndVersion(unittest.TestCase):
    def test_help(self):
        for flag in ("--help", "-h"):
            with self.subTest(flag=flag):
                r = run(flag)
                self.assertEqual(r.returncode, 0)
                self.assertEqual(r.stderr, b"")
                text = r.stdout.decode()
                self.assertTrue(text.startswith("Usage: sup-run "), text[:80])
                for needle in ("--idle-timeout", "--max-runtime", "--grace", "--signal",
                               "--on-timeout", "--max-output", "--contain", "--json", "-q, --quiet",
                               "--help", "--version", "DURATION", "EXIT STATUS", "SIGNALS",
                               "EXAMPLES", "K, M, G", "ms", "EPIPE", "Ctrl-C", "SIGKILL",
                               "--pty", "TERMINAL (--pty)"):
                    self.assertIn(needle, text)
                for code in ("124", "125", "126", "127", "128+N", "141"):
                    self.assertRegex(text, rf"\n  {re.escape(code)} ")

    def test_version_is_the_librarys(self):
        with open(os.path.join(REPO, "include", "sup.h")) as f:
            header = f.read()
        parts = [re.search(rf"#define SUP_VERSION_{p} (\d+)", header).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        r = run("--version")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, f"sup-run {'.'.join(parts)}\n".encode())

    def test_options_after_command_are_the_commands(self):
        r = run("printf", "%s\n", "--help", "-q")
        self.assertEqual((r.returncode, r.stdout), (0, b"--help\n-q\n"))
        r = run("--", "printf", "%s\n", "--version")
        self.assertEqual((r.returncode, r.stdout), (0, b"--version\n"))


class OptionValues(TempDirTest):
    BAD = {
        "--idle-timeout": ["-1", "abc", "1x", "", "1e3", "inf", "nan", "0x10", " 1", "1 ",
                           "1.2.3", "1s5", ".", "s", "-0.5s", "5 s", "1S", "1d",
                           "99999999999999999999", "9999999999999h"],
        "--max-runtime": ["-5s", "10d", "+1", "1,5"],
        "--grace": ["junk", "-1", "2 s"],
        "--signal": ["NOPE", "0", "65", "-2", "SIG", "", "TERM2", "2x"],
        "--on-timeout": ["later", "", "KILL"],
        "--contain": ["jail", "", "CGROUP"],
        "--max-output": ["-1", "1T", "1.5M", "abc", "", "1k", "99999999999999999999",
                         "9999999999999G"],
    }

    def test_bad_values_exit_125_naming_the_option(self):
        marker = self.path("ran")
        for option, values in self.BAD.items():
            for value in values:
                for args in ([option, value], [f"{option}={value}"]):
                    with self.subTest(args=args):
                        r = run(*args, "--", "touch", marker)
                        self.assertEqual(r.returncode, 125, r.stderr)
                        self.assertIn(option.encode(), r.stderr)
                        self.assertFalse(os.path.exists(marker), "the command must not run")

    def test_usage_errors_exit_125(self):
        cases = [
            ([], b"COMMAND"),
            (["-q"], b"COMMAND"),
            (["--idle-timeout", "1s"], b"COMMAND"),
            (["--"], b"COMMAND"),
            (["--grace"], b"--grace"),
            (["--json"], b"--json"),
            (["--bogus", "true"], b"unrecognized option '--bogus'"),
            (["--max", "1", "true"], b"ambiguous option '--max'"),
            (["-x", "true"], b"-x"),
            (["--quiet=yes", "true"], b"--quiet"),
            (["--json=", "true"], b"--json"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertIn(needle, r.stderr)
                self.assertEqual(r.stdout, b"")

    def test_good_values_in_both_forms(self):
        good = [("--idle-timeout", "0"), ("--idle-timeout", "1.5"), ("--idle-timeout", "250ms"),
                ("--idle-timeout", "10s"), ("--max-runtime", "2m"), ("--max-runtime", "1h"),
                ("--max-runtime", ".5"), ("--max-runtime", "1."), ("--max-runtime", "100000h"),
                ("--grace", "0"), ("--grace", "0.25s"), ("--signal", "TERM"),
                ("--signal", "sigint"), ("--signal", "SIGHUP"), ("--signal", "9"),
                ("--on-timeout", "kill"), ("--on-timeout", "interrupt"),
                ("--max-output", "0"), ("--max-output", "100"), ("--max-output", "1K"),
                ("--max-output", "2MiB"), ("--max-output", "1G")]
        for option, value in good:
            for args in ([option, value], [f"{option}={value}"]):
                with self.subTest(args=args):
                    r = run(*args, "--", "sh", "-c", "echo ok; exit 3")
                    self.assertEqual((r.returncode, r.stdout, r.stderr), (3, b"ok\n", b""))

    def test_unambiguous_abbreviation(self):
        r = run("--idle=0.2", "--", "sleep", "10")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertLess(r.elapsed, 3)

    def test_sub_millisecond_duration_rounds_up_not_to_off(self):
        for value in ("0.0001", "0.4ms", "0.000000000001h"):
            with self.subTest(value=value):
                r = run("--max-runtime", value, "--", "sleep", "10")
                self.assertEqual(r.returncode, 124, r.stderr)
                self.assertLess(r.elapsed, 3)
                self.assertIn(b"still running after 1ms;", r.stderr)

    def test_fractions_convert_exactly(self):
        # 10.1 ms rounds up to 11 ms; a binary float would not make 0.3 s
        # 300 ms exactly either way, the digit-wise conversion does.
        for value, shown in (("0.0101", b"11ms"), ("0.3s", b"300ms"), ("0.0003m", b"18ms"),
                             ("250ms", b"250ms")):
            with self.subTest(value=value):
                r = run("--max-runtime", value, "--", "sleep", "10")
                self.assertEqual(r.returncode, 124)
                self.assertIn(b"max runtime: still running after " + shown + b";", r.stderr)


class ExitStatus(TempDirTest):
    def test_zero(self):
        r = run("true")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))

    def test_own_code(self):
        for code in (1, 7, 42, 255):
            with self.subTest(code=code):
                self.assertEqual(run("sh", "-c", f"exit {code}").returncode, code)

    def test_idle_timeout_124(self):
        r = run("--idle-timeout", "200ms", "--", "sleep", "10")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertGreater(r.elapsed, 0.15)
        self.assertLess(r.elapsed, 3)

    def test_output_keeps_idle_timeout_away(self):
        script = "for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.1; done"
        r = run("--idle-timeout", "0.4", "--", "sh", "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"1\n2\n3\n4\n5\n6\n7\n8\n")
        self.assertGreater(r.elapsed, 0.7)

    def test_max_runtime_124_even_with_output(self):
        script = "while :; do echo tick; sleep 0.05; done"
        r = run("--idle-timeout", "1", "--max-runtime", "0.3", "--", "sh", "-c", script)
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertGreater(r.elapsed, 0.25)
        self.assertLess(r.elapsed, 3)
        self.assertIn(b"tick\n", r.stdout)
        self.assertIn(b"max runtime", r.stderr)

    def test_signal_it_did_not_send(self):
        self.assertEqual(run("sh", "-c", "kill -9 $$").returncode, 137)
        self.assertEqual(run("sh", "-c", "kill -TERM $$").returncode, 143)
        self.assertEqual(run("sh", "-c", "kill -USR1 $$").returncode, 128 + signal.SIGUSR1)

    def test_own_signals(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(sig=sig.name):
                r = Running(self, ["--json", self.path("r.json"), "--",
                                   "sh", "-c", "echo ready; exec sleep 30"])
                r.wait_for("out", b"ready\n")
                start = time.monotonic()
                r.proc.send_signal(sig)
                self.assertEqual(r.finish(), 128 + sig)
                self.assertLess(time.monotonic() - start, 3)
                result = self.read_json("r.json")
                self.assertEqual(result["outcome"], "interrupted")
                self.assertEqual(result["term_signal"], "SIGTERM")

    def test_signal_pending_before_start_means_no_command(self):
        marker = self.path("ran")

        def term_pending_at_exec():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            os.kill(os.getpid(), signal.SIGTERM)

        # Deaf to SIGTERM, the command would leave its mark if it were started.
        p = subprocess.Popen([SUP_RUN, "--", "sh", "-c", f'trap "" TERM; touch {marker}'],
                             stdin=subprocess.DEVNULL, preexec_fn=term_pending_at_exec)
        self.assertEqual(p.wait(10), 143)
        self.assertFalse(os.path.exists(marker))

    def test_ignored_sighup_stays_ignored(self):
        r = Running(self, ["--", "sh", "-c", "echo ready; exec sleep 30"],
                    preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        r.wait_for("out", b"ready\n")
        r.proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        self.assertIsNone(r.proc.poll(), "SIGHUP was ignored by whoever started sup-run")
        r.proc.send_signal(signal.SIGTERM)
        self.assertEqual(r.finish(), 143)

    def test_not_executable_126(self):
        plain = self.path("plain-file")
        with open(plain, "w") as f:
            f.write("echo hi\n")
        garbage = self.path("garbage")
        with open(garbage, "wb") as f:
            f.write(b"\x7fELF\x02\x01\x01" + bytes(64))
        os.chmod(garbage, 0o755)
        for cmd in (plain, self.tmp, garbage, plain + "/below-a-file"):
            with self.subTest(cmd=cmd):
                r = run("--", cmd)
                self.assertEqual(r.returncode, 126, r.stderr)
                self.assertIn(cmd.encode(), r.stderr)
                self.assertTrue(r.stderr.startswith(b"sup-run: "))

    # A name found on PATH only as a directory is found but cannot be run,
    # as execvp, env and GNU timeout say (126); the search goes past it.
    def test_directory_on_path_126(self):
        os.mkdir(self.path("tool"))
        env = dict(os.environ, PATH=self.tmp + ":" + os.environ.get("PATH", "/bin:/usr/bin"))
        for cmd in (".", "tool"):
            with self.subTest(cmd=cmd):
                r = run("--", cmd, env=env)
                self.assertEqual(r.returncode, 126, r.stderr)
                self.assertIn(b"directory", r.stderr)
        r = run("--", "true", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_not_found_127(self):
        for cmd in ("sup-run-no-such-command", self.path("absent"), "./absent/x"):
            with self.subTest(cmd=cmd):
                r = run("--", cmd, "arg")
                self.assertEqual(r.returncode, 127, r.stderr)
                self.assertIn(cmd.encode(), r.stderr)

    def test_found_in_path(self):
        bindir = self.path("bin")
        os.mkdir(bindir)
        tool = os.path.join(bindir, "sup-run-test-tool")
        with open(tool, "w") as f:
            f.write("#!/bin/sh\necho tool:$1\n")
        os.chmod(tool, 0o755)
        env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        r = run("sup-run-test-tool", "x", env=env)
        self.assertEqual((r.returncode, r.stdout), (0, b"tool:x\n"))


class PassThrough(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.big = os.urandom(40 * MiB)
        cls.small = os.urandom(4 * MiB)

    def write_file(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def test_streams_separate_and_exact(self):
        r = run("sh", "-c", "echo out; echo err >&2; echo out2")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"out\nout2\n", b"err\n"))

    def test_binary_bytes(self):
        script = ("import sys\n"
                  "sys.stdout.buffer.write(bytes(range(256)) * 16)\n"
                  "sys.stdout.flush()\n"
                  "sys.stderr.buffer.write(bytes(range(255, -1, -1)) * 16)\n")
        r = run(sys.executable, "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, bytes(range(256)) * 16)
        self.assertEqual(r.stderr, bytes(range(255, -1, -1)) * 16)

    def test_large_output_nothing_lost(self):
        big = self.write_file("big", self.big)
        small = self.write_file("small", self.small)
        r = run("--max-output", "1M", "--json", self.path("r.json"), "--",
                "sh", "-c", 'cat "$1" & cat "$2" >&2; wait', "sh", big, small, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr[-300:])
        self.assertEqual(len(r.stdout), len(self.big))
        self.assertEqual(sha256(r.stdout), sha256(self.big))
        self.assertEqual(sha256(r.stderr), sha256(self.small))
        result = self.read_json("r.json")
        self.assertEqual(result["stdout"]["bytes"], len(self.big))
        self.assertEqual(result["stderr"]["bytes"], len(self.small))
        self.assertTrue(result["stdout"]["truncated"])
        self.assertLess(len(result["stdout"]["captured"]), 2 * MiB)

    def test_slow_reader_loses_nothing(self):
        data = self.big[:8 * MiB]
        path = self.write_file("eight", data)
        p = subprocess.Popen([SUP_RUN, "--max-output", "64K", "--", "cat", path],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        self.addCleanup(p.kill)
        time.sleep(0.5)  # everything sup-run cannot hand on must wait, not vanish
        out, _ = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0)
        self.assertEqual(sha256(out), sha256(data))

    def test_arguments_reach_the_command_byte_for_byte(self):
        args = [b'a"b', b"back\\slash", b"\\u0041", bytes(range(1, 32)) + b"\x7f",
                b"\xff\xfe invalid utf-8", "é ✓ 😀".encode(), b"", b"{\"argv\": []}"]
        script = ("import os, sys\n"
                  "sys.stdout.buffer.write(b'\\0'.join(os.fsencode(a) for a in sys.argv[1:]))\n")
        r = run(sys.executable, "-c", script, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"\0".join(args))

    def test_stdin_inherited(self):
        r = run("cat", input=b"x\n")
        self.assertEqual((r.returncode, r.stdout), (0, b"x\n"))
        data = self.small[:MiB]
        r = run("sh", "-c", "cat; echo done >&2", input=data)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(sha256(r.stdout), sha256(data))
        self.assertEqual(r.stderr, b"done\n")

    def test_environment_inherited(self):
        env = dict(os.environ, SUP_RUN_TEST_VAR="value 1")
        r = run("sh", "-c", 'echo "$SUP_RUN_TEST_VAR"', env=env)
        self.assertEqual(r.stdout, b"value 1\n")

    def test_output_is_live(self):
        r = Running(self, ["--", "sh", "-c", "echo first; echo second >&2; sleep 30"])
        r.wait_for("out", b"first\n", timeout=3)
        r.wait_for("err", b"second\n", timeout=3)
        self.assertIsNone(r.proc.poll())
        r.proc.send_signal(signal.SIGTERM)
        self.assertEqual(r.finish(), 143)

    def test_broken_stdout_141(self):
        script = f"echo $$ > {self.path('pid')}; exec yes"
        p = subprocess.Popen([SUP_RUN, "--", "sh", "-c", script], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(p.kill)
        self.assertEqual(p.stdout.read(4), b"y\ny\n")
        pid = self.read_pid("pid")
        p.stdout.close()
        _, err = p.communicate(timeout=5)
        self.assertEqual(p.returncode, 141, err)
        self.assertTrue(wait_pid_gone(pid))

    def test_broken_stdout_keeps_stderr_for_last_words(self):
        script = 'trap "echo bye >&2; exit 0" TERM; while :; do echo y; done'
        p = subprocess.Popen([SUP_RUN, "--grace", "20", "--", "sh", "-c", script],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.addCleanup(p.kill)
        self.assertEqual(p.stdout.read(2), b"y\n")
        p.stdout.close()
        start = time.monotonic()
        _, err = p.communicate(timeout=5)
        self.assertEqual(p.returncode, 141, err)
        self.assertLess(time.monotonic() - start, 3)
        self.assertIn(b"bye\n", err)


class Signals(TempDirTest):
    def test_first_interrupts_second_aborts(self):
        script = ('trap "echo last words; sleep 30; echo never" TERM; echo ready; '
                  + SILENT_LOOP)
        r = Running(self, ["--grace", "20", "--json", self.path("r.json"), "--",
                           "sh", "-c", script])
        r.wait_for("out", b"ready\n")
        r.proc.send_signal(signal.SIGINT)
        r.wait_for("out", b"last words\n", timeout=3)
        self.assertIsNone(r.proc.poll(), "the trap keeps the command running")
        start = time.monotonic()
        r.proc.send_signal(signal.SIGINT)
        self.assertEqual(r.finish(), 130)
        self.assertLess(time.monotonic() - start, 3)
        self.assertNotIn(b"never", r.out)
        result = self.read_json("r.json")
        self.assertEqual(result["outcome"], "aborted")
        self.assertEqual(result["term_signal"], "SIGKILL")
        self.assertTrue(result["forced_kill"])

    def test_grace_escalates_to_kill(self):
        script = 'trap "" TERM; echo ready; exec sleep 30'
        r = run("--max-runtime", "0.2", "--grace", "0.3", "--json", self.path("r.json"), "--",
                "sh", "-c", script)
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertGreater(r.elapsed, 0.45)
        self.assertLess(r.elapsed, 3)
        result = self.read_json("r.json")
        self.assertTrue(result["forced_kill"])
        self.assertEqual(result["term_signal"], "SIGKILL")
        sent = {s["signal"]: s["at_ms"] for s in result["signals_sent"]}
        self.assertEqual(result["signals_sent"][0]["signal"], "SIGTERM")
        self.assertEqual(result["signals_sent"][-1]["signal"], "SIGKILL")
        self.assertGreater(sent["SIGKILL"] - sent["SIGTERM"], 250)
        self.assertLess(sent["SIGKILL"] - sent["SIGTERM"], 2000)
        self.assertRegex(r.stderr, rb"sent SIGTERM at 0\.\ds, .*SIGKILL at \d\.\ds; exit 124\n$")

    def test_grace_gives_time_to_finish(self):
        script = 'trap "sleep 0.3; echo cleaned up; exit 0" TERM; echo ready; ' + SILENT_LOOP
        r = run("--max-runtime", "0.2", "--grace", "5", "--", "sh", "-c", script)
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertEqual(r.stdout, b"ready\ncleaned up\n")
        self.assertGreater(r.elapsed, 0.45)
        self.assertLess(r.elapsed, 3)

    def test_on_timeout_kill(self):
        script = 'trap "echo got TERM" TERM; echo ready; ' + SILENT_LOOP
        r = run("--idle-timeout", "0.2", "--on-timeout", "kill", "--grace", "20",
                "--json", self.path("r.json"), "--", "sh", "-c", script)
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertLess(r.elapsed, 3)
        self.assertEqual(r.stdout, b"ready\n")
        result = self.read_json("r.json")
        self.assertEqual(result["outcome"], "idle_timeout")
        self.assertEqual(result["signals_sent"][0]["signal"], "SIGKILL")
        self.assertIn(b"sent SIGKILL at", r.stderr)

    def test_interrupt_signal_choice(self):
        script = ('trap "echo got INT; exit 3" INT; trap "echo got TERM; exit 4" TERM; '
                  'trap "echo got HUP; exit 5" HUP; echo ready; ' + SILENT_LOOP)
        cases = [([], b"got TERM", 4, "SIGTERM"),
                 (["--signal", "INT"], b"got INT", 3, "SIGINT"),
                 (["--signal=2"], b"got INT", 3, "SIGINT"),
                 (["--signal", "SIGINT"], b"got INT", 3, "SIGINT"),
                 (["--signal=sighup"], b"got HUP", 5, "SIGHUP")]
        for args, words, code, name in cases:
            with self.subTest(args=args):
                r = run("--max-runtime", "0.2", "--grace", "20", "--json", self.path("r.json"),
                        *args, "--", "sh", "-c", script)
                self.assertEqual(r.returncode, 124, r.stderr)
                self.assertLess(r.elapsed, 3)
                self.assertEqual(r.stdout, b"ready\n" + words + b"\n")
                result = self.read_json("r.json")
                self.assertEqual(result["exit_code"], code)
                self.assertEqual(result["signals_sent"][0]["signal"], name)
                self.assertIn(f"sent {name} at".encode(), r.stderr)

    def test_own_sigint_uses_configured_signal_and_grace(self):
        script = 'trap "" TERM; echo ready; exec sleep 30'
        r = Running(self, ["--grace", "0.3", "--json", self.path("r.json"), "--",
                           "sh", "-c", script])
        r.wait_for("out", b"ready\n")
        start = time.monotonic()
        r.proc.send_signal(signal.SIGINT)
        self.assertEqual(r.finish(), 130)
        elapsed = time.monotonic() - start
        self.assertGreater(elapsed, 0.25)
        self.assertLess(elapsed, 3)
        result = self.read_json("r.json")
        self.assertEqual(result["outcome"], "interrupted")
        self.assertEqual(result["signals_sent"][0]["signal"], "SIGTERM")
        self.assertTrue(result["forced_kill"])


class Summary(TempDirTest):
    def test_idle_summary_line(self):
        r = run("--idle-timeout", "300ms", "--", "sleep", "10")
        self.assertEqual(r.returncode, 124)
        self.assertRegex(r.stderr, rb"\Asup-run: idle timeout: no output for 300ms; "
                                   rb"sent SIGTERM at 0\.\ds; exit 124\n\Z")

    def test_max_runtime_summary_line(self):
        r = run("--max-runtime", "0.3", "--", "sleep", "10")
        self.assertEqual(r.returncode, 124)
        self.assertRegex(r.stderr, rb"\Asup-run: max runtime: still running after 300ms; "
                                   rb"sent SIGTERM at 0\.\ds; exit 124\n\Z")

    def test_summary_follows_the_commands_stderr(self):
        r = run("--idle-timeout", "0.2", "--", "sh", "-c", "echo last >&2; exec sleep 10")
        self.assertEqual(r.returncode, 124)
        self.assertTrue(r.stderr.startswith(b"last\nsup-run: idle timeout:"), r.stderr)

    def test_quiet(self):
        for flag in ("-q", "--quiet"):
            with self.subTest(flag=flag):
                r = run(flag, "--idle-timeout", "0.2", "--", "sleep", "10")
                self.assertEqual((r.returncode, r.stderr), (124, b""))

    def test_no_summary_without_timeout(self):
        r = run("--idle-timeout", "5", "--", "sh", "-c", "exit 9")
        self.assertEqual((r.returncode, r.stderr), (9, b""))


class JsonResult(TempDirTest):
    def test_exited(self):
        r = run("--json", self.path("r.json"), "--", "sh", "-c",
                "echo hello; echo oops >&2; exit 3")
        self.assertEqual(r.returncode, 3)
        result = self.read_json("r.json")
        self.assertEqual(result["outcome"], "exited")
        self.assertEqual(result["exit_code"], 3)
        self.assertIsNone(result["term_signal"])
        self.assertFalse(result["forced_kill"])
        self.assertEqual(result["signals_sent"], [])
        for name, text in (("stdout", "hello\n"), ("stderr", "oops\n")):
            stream = result[name]
            self.assertEqual((stream["bytes"], stream["captured"], stream["truncated"]),
                             (len(text), text, False))
        self.assertGreater(result["pid"], 0)

    def test_replaces_existing_file(self):
        with open(self.path("r.json"), "w") as f:
            f.write("x" * 100000)
        run("--json=" + self.path("r.json"), "true")
        self.assertEqual(self.read_json("r.json")["outcome"], "exited")

    def test_timeout(self):
        r = run("--idle-timeout", "0.2", "--json", self.path("r.json"), "--", "sleep", "10")
        self.assertEqual(r.returncode, 124)
        result = self.read_json("r.json")
        self.assertEqual(result["outcome"], "idle_timeout")
        self.assertIsNone(result["exit_code"])
        self.assertEqual(result["term_signal"], "SIGTERM")
        self.assertEqual(result["signals_sent"][0]["signal"], "SIGTERM")
        self.assertGreater(result["duration_ms"], 150)

    def test_max_output_limits_capture_not_pass_through(self):
        script = "head -c 5000 /dev/zero | tr '\\0' a"
        for limit, kept in (("1K", 1024), ("0", 0)):
            with self.subTest(limit=limit):
                r = run("--max-output", limit, "--json", self.path("r.json"), "--",
                        "sh", "-c", script)
                self.assertEqual((r.returncode, r.stdout), (0, b"a" * 5000))
                out = self.read_json("r.json")["stdout"]
                self.assertEqual(out["bytes"], 5000)
                self.assertTrue(out["truncated"])
                self.assertEqual(out["captured"].count("a"), kept)

    def test_unwritable_file_is_an_error_before_running(self):
        marker = self.path("ran")
        for target in (self.path("no-such-dir/r.json"), self.tmp):
            with self.subTest(target=target):
                r = run("--json", target, "--", "touch", marker)
                self.assertEqual(r.returncode, 125)
                self.assertIn(b"--json", r.stderr)
                self.assertIn(target.encode(), r.stderr)
                self.assertFalse(os.path.exists(marker))


class NothingSurvives(TempDirTest):
    def test_background_grandchild_after_normal_exit(self):
        r = run("sh", "-c", f"sleep 30 & echo $! > {self.path('pid')}; echo started")
        self.assertEqual((r.returncode, r.stdout), (0, b"started\n"))
        self.assertTrue(wait_pid_gone(self.read_pid("pid")))

    def test_grandchild_ignoring_term_after_timeout(self):
        script = (f'(trap "" TERM; exec sleep 30) & echo $! > {self.path("pid")}; '
                  "exec sleep 30")
        r = run("--idle-timeout", "0.2", "--", "sh", "-c", script)
        self.assertEqual(r.returncode, 124)
        self.assertTrue(wait_pid_gone(self.read_pid("pid")))

    def test_grandchild_after_signal(self):
        script = f"sleep 30 & echo $! > {self.path('pid')}; echo ready; wait"
        r = Running(self, ["--", "sh", "-c", script])
        r.wait_for("out", b"ready\n")
        pid = self.read_pid("pid")
        r.proc.send_signal(signal.SIGTERM)
        self.assertEqual(r.finish(), 143)
        self.assertTrue(wait_pid_gone(pid))

    def test_command_dies_with_sup_run(self):
        r = Running(self, ["--", "sh", "-c", f"echo $$ > {self.path('pid')}; exec sleep 30"])
        pid = self.read_pid("pid")
        self.assertFalse(pid_gone(pid))
        r.proc.kill()
        self.assertEqual(r.finish(), -signal.SIGKILL)
        self.assertTrue(wait_pid_gone(pid))


class Contain(TempDirTest):
    def setUp(self):
        super().setUp()
        probe = run("--contain", "cgroup", "--", "true")
        if probe.returncode != 0:
            self.skipTest("no writable cgroup v2 hierarchy: " + probe.stderr.decode(errors="replace"))

    def test_cgroup_ends_a_daemon_outside_the_group(self):
        pid_file = self.path("pid")
        script = (f"(setsid sh -c 'echo $$ > {pid_file}; exec sleep 30' </dev/null >/dev/null 2>&1 &); "
                  f"while [ ! -s {pid_file} ]; do sleep 0.01; done; echo started")
        r = run("--contain", "cgroup", "--json", self.path("r.json"), "--", "sh", "-c", script)
        self.assertEqual((r.returncode, r.stdout), (0, b"started\n"), r.stderr)
        self.assertTrue(wait_pid_gone(self.read_pid("pid"), timeout=0.5))
        result = self.read_json("r.json")
        self.assertEqual(result["contained"], "cgroup")
        self.assertEqual(result["leftovers_ended"], 1)
        self.assertFalse(result["forced_kill"])
        self.assertIsNone(result["contain_fallback"])
        self.assertEqual(set(result["tree_cpu"]), {"user_ms", "sys_ms"})

    def test_group_leaves_the_daemon_alone(self):
        pid_file = self.path("pid")
        script = (f"(setsid sh -c 'echo $$ > {pid_file}; exec sleep 30' </dev/null >/dev/null 2>&1 &); "
                  f"while [ ! -s {pid_file} ]; do sleep 0.01; done")
        r = run("--contain=group", "--json", self.path("r.json"), "--", "sh", "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = self.read_pid("pid")
        self.assertFalse(pid_gone(pid))
        result = self.read_json("r.json")
        self.assertEqual(result["contained"], "group")
        self.assertIsNone(result["leftovers_ended"])

    def test_cgroup_parent_that_is_no_cgroup(self):
        env = dict(os.environ, SUP_CGROUP_PARENT=self.tmp)
        r = run("--contain", "cgroup", "--", "true", env=env)
        self.assertEqual(r.returncode, 125)
        self.assertIn(b"not on a cgroup v2 hierarchy", r.stderr)
        r = run("--contain", "auto", "--json", self.path("r.json"), "--", "true", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        result = self.read_json("r.json")
        self.assertEqual(result["contained"], "group")
        self.assertIn("not on a cgroup v2 hierarchy", result["contain_fallback"])


class Terminal(TempDirTest):
    """sup-run as the foreground job of a terminal, as in an interactive shell."""

    def start_on_pty(self, args):
        master, slave = os.openpty()
        self.addCleanup(os.close, master)

        def controlling_terminal():
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        p = subprocess.Popen([SUP_RUN, *args], stdin=slave, stdout=slave, stderr=slave,
                             start_new_session=True, preexec_fn=controlling_terminal)
        os.close(slave)

        def reap():
            p.kill()
            p.wait()

        self.addCleanup(reap)
        return p, master

    def read_until(self, master, token, timeout=5.0):
        data = b""
        deadline = time.monotonic() + timeout
        while token not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([master], [], [], left)[0]:
                self.fail(f"{token!r} not on the terminal within {timeout}s; got {data!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError as e:
                if e.errno != errno.EIO:
                    raise
                chunk = b""
            if not chunk:
                self.fail(f"terminal closed before {token!r}; got {data!r}")
            data += chunk
        return data

    def test_command_reads_the_terminal(self):
        p, master = self.start_on_pty(["--", "sh", "-c", "read x; echo got:$x"])
        os.write(master, b"hello\n")
        self.read_until(master, b"got:hello")
        self.assertEqual(p.wait(15), 0)

    # A command that says "ready" as its last act before it blocks, with
    # SIGINT at its default: a shell script would race (dash holds a SIGINT
    # that lands between its `echo ready` and the fork of `sleep`, and the
    # sleep then runs on).
    READY_THEN_BLOCK = ["perl", "-e", '$| = 1; print "rea" . "dy $$\\n"; sleep 1 while 1']

    def test_ctrl_c_reaches_the_command_directly(self):
        p, master = self.start_on_pty(["--json", self.path("r.json"), "--",
                                       *self.READY_THEN_BLOCK])
        self.read_until(master, b"ready")
        os.write(master, b"\x03")
        self.assertEqual(p.wait(15), 130)
        result = self.read_json("r.json")
        self.assertEqual(result["outcome"], "signaled")
        self.assertEqual(result["term_signal"], "SIGINT")

    # defect 2: after a failed start with the terminal handed to the
    # command's group, the terminal comes back to sup-run's group, so the
    # shell that ran sup-run can still read it.
    def test_terminal_comes_back_after_a_failed_start(self):
        for cmd, code in (("./sup-run-missing", 127), (self.tmp, 126)):
            with self.subTest(cmd=cmd):
                master, slave = os.openpty()
                self.addCleanup(os.close, master)

                def controlling_terminal():
                    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

                script = '"$0" -- "$1"; echo rc=$?; read x; echo got:$x:$?'
                p = subprocess.Popen(["sh", "-c", script, SUP_RUN, cmd],
                                     stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True, preexec_fn=controlling_terminal)
                os.close(slave)
                self.addCleanup(lambda p=p: (p.poll() is None and p.kill(), p.wait()))
                self.read_until(master, f"rc={code}".encode())
                os.write(master, b"hello\n")
                self.read_until(master, b"got:hello:0")
                self.assertEqual(p.wait(15), 0)

    # defect 4: Ctrl-Z in an interactive shell stops the command and sup-run
    # with it, as one job; `fg` continues both and gives the command the
    # terminal again; Ctrl-C then reaches it, and the shell's prompt returns.
    def test_ctrl_z_fg_ctrl_c_in_an_interactive_shell(self):
        master, slave = os.openpty()
        self.addCleanup(os.close, master)

        def controlling_terminal():
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        env = dict(os.environ, PS1="PROMPT> ", TERM="dumb", HISTFILE="/dev/null")
        bash = subprocess.Popen(["bash", "--norc", "--noprofile", "-i"], stdin=slave, stdout=slave,
                                stderr=slave, env=env, start_new_session=True,
                                preexec_fn=controlling_terminal)
        os.close(slave)
        self.addCleanup(lambda: (bash.poll() is None and bash.kill(), bash.wait()))
        pending = [b""]

        def expect(token, timeout=5.0):
            """What the terminal showed up to and including token; the rest
            is kept for the next call (one read can hold several prompts)."""
            data = pending[0]
            deadline = time.monotonic() + timeout
            while token not in data:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([master], [], [], left)[0]:
                    self.fail(f"{token!r} not on the terminal within {timeout}s; got {data!r}")
                chunk = os.read(master, 4096)
                if not chunk:
                    self.fail(f"terminal closed before {token!r}; got {data!r}")
                data += chunk
            cut = data.index(token) + len(token)
            pending[0] = data[cut:]
            return data[:cut]

        expect(b"PROMPT> ", timeout=15)

        line = " ".join(f"'{a}'" if " " in a or "$" in a else a
                        for a in [SUP_RUN, "--", *self.READY_THEN_BLOCK])
        os.write(master, line.encode() + b"\n")
        out = expect(b"ready ", timeout=15) + expect(b"\n")
        pid = int(re.search(rb"ready (\d+)", out).group(1))
        self.addCleanup(kill_quietly, pid)

        def state(pid):
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0]

        os.write(master, b"\x1a")  # ^Z
        expect(b"PROMPT> ", timeout=15)  # the shell has its terminal back
        self.assertEqual(state(pid), "T", "the command is stopped")
        os.write(master, b"jobs -l\n")
        expect(b"Stopped", timeout=15)
        expect(b"PROMPT> ", timeout=15)

        os.write(master, b"fg\n")
        deadline = time.monotonic() + 10
        while state(pid) == "T" and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertNotEqual(state(pid), "T", "fg continued the command")
        # fg gave sup-run's group the terminal; sup-run hands it on to the
        # command's group (whose id is the command's pid).
        while os.tcgetpgrp(master) != pid and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(os.tcgetpgrp(master), pid, "the command has the terminal again")
        os.write(master, b"\x03")  # ^C: to the command, which holds the terminal
        expect(b"PROMPT> ", timeout=15)
        self.assertTrue(wait_pid_gone(pid, 5), "the command ended")
        os.write(master, b"echo rc=$?\n")
        expect(b"rc=130", timeout=15)
        os.write(master, b"exit\n")
        self.assertEqual(bash.wait(15), 0)


class Pty(Terminal):
    """--pty: the command on a terminal of its own; sup-run copies its stdin."""

    def test_command_runs_on_a_new_terminal(self):
        r = run("--pty", "--json", self.path("r.json"), "--", "sh", "-c",
                "tty; test -t 0 -a -t 1 -a -t 2 && echo all-terminals; stty size; echo err >&2")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.split(b"\r\n")
        self.assertTrue(lines[0].startswith(b"/dev/pts/"), r.stdout)
        # Without a terminal of sup-run's own, the default size.
        self.assertEqual(lines[1:], [b"all-terminals", b"24 80", b"err", b""])
        self.assertEqual(r.stderr, b"")
        result = self.read_json("r.json")
        self.assertEqual(result["stdout"]["bytes"], len(r.stdout))
        self.assertEqual(result["stderr"]["bytes"], 0)

    def test_stdin_is_copied_and_its_end_is_the_commands(self):
        r = run("--pty", "--", "sh", "-c", 'read a; echo "got:$a"; cat; echo after-eof',
                input=b"first\nsecond\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        # The terminal echoes what was typed; cat copies the second line;
        # the end of sup-run's stdin ends cat's input.
        self.assertEqual(r.stdout, b"first\r\nsecond\r\ngot:first\r\nsecond\r\nafter-eof\r\n")

    def test_unfinished_last_line_and_no_input(self):
        r = run("--pty", "--", "sh", "-c", "cat; echo; echo after-eof", input=b"no newline")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"no newlineno newline\r\nafter-eof\r\n")
        r = run("--pty", "--", "cat")  # stdin is /dev/null
        self.assertEqual((r.returncode, r.stdout), (0, b""))

    def test_much_input_waits_for_a_slow_reader(self):
        # More than the terminal's queues hold: sup-run waits for room.
        # (Lines that arrive before `stty -echo` are echoed.)
        lines = b"".join(b"line %d\n" % i for i in range(20000))
        r = run("--pty", "--", "sh", "-c", "stty -echo; sleep 0.3; printf count:; wc -l",
                input=lines, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.endswith(b"count:20000\r\n"), r.stdout[-200:])

    def test_idle_timeout_and_exit_status(self):
        r = run("--pty", "--idle-timeout=300ms", "--", "sh", "-c", "echo hi; exec sleep 30")
        self.assertEqual(r.returncode, 124)
        self.assertEqual(r.stdout, b"hi\r\n")
        self.assertIn(b"idle timeout", r.stderr)
        r = run("--pty", "--", "sh", "-c", "exit 3")
        self.assertEqual(r.returncode, 3)

    def test_own_terminal_keeps_its_modes_and_size_follows(self):
        # sup-run on a terminal of the test's: typed lines reach the command,
        # sup-run's terminal is never put in raw mode, and a resize of it
        # reaches the command's terminal.
        p, master = self.start_on_pty([
            "--pty", "--", "sh", "-c",
            "trap 'stty size; exit 5' WINCH; stty size; read x; echo got:$x; "
            "while :; do sleep 0.05; done"])
        # sup-run's terminal has no size set yet: the default.
        self.read_until(master, b"24 80")
        os.write(master, b"typed\n")
        self.read_until(master, b"got:typed")
        modes = termios.tcgetattr(master)
        self.assertTrue(modes[3] & termios.ICANON, "sup-run's terminal is still canonical")
        self.assertTrue(modes[3] & termios.ECHO, "sup-run's terminal still echoes")
        fcntl.ioctl(master, termios.TIOCSWINSZ, b"\x28\x00\x64\x00\x00\x00\x00\x00")  # 40x100
        self.read_until(master, b"40 100")
        self.assertEqual(p.wait(15), 5)

    def test_routing_options_do_not_apply(self):
        for opts in (["--stdout", "null"], ["--stderr", "inherit"], ["--merge"]):
            with self.subTest(opts=opts):
                r = run("--pty", *opts, "--", "true")
                self.assertEqual(r.returncode, 125)
                self.assertIn(b"--pty: the command's stdout and stderr are its terminal", r.stderr)
        r = run("--pty", "--stdout", "pipe", "--env-clear", "--", "/bin/sh", "-c", "echo ${HOME:-none}")
        self.assertEqual((r.returncode, r.stdout), (0, b"none\r\n"))

    def test_output_passes_through_whole_beyond_max_output(self):
        r = run("--pty", "--max-output=1K", "--", "sh", "-c", "head -c 5000 /dev/zero | tr '\\0' z")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, b"z" * 5000)


class Defects(TempDirTest):
    """Regressions: each test failed on sup-run before its fix."""

    # defect 3: started with SIGCHLD ignored, the command's status was lost
    # and a negative library code became the exit status (195).
    def test_sigchld_ignored_by_the_parent(self):
        def ignore_sigchld():
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)

        for script, code in (("exit 3", 3), ("exit 0", 0), ("kill -USR1 $$", 128 + signal.SIGUSR1)):
            with self.subTest(script=script):
                p = subprocess.run([SUP_RUN, "--", "sh", "-c", script], stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=20, preexec_fn=ignore_sigchld)
                self.assertEqual((p.returncode, p.stderr), (code, b""))

    # defect 14: limits of the library checked in option parsing.
    def test_too_large_values_name_the_option(self):
        marker = self.path("ran")
        cases = [("--idle-timeout", "1000000h"), ("--max-runtime", "1000000h"),
                 ("--grace", "300000h"), ("--grace", "1000000001s"),
                 ("--max-output", "2048G"), ("--max-output", "1099511627777")]
        for option, value in cases:
            for args in ([option, value], [f"{option}={value}"]):
                with self.subTest(args=args):
                    r = run(*args, "--", "touch", marker)
                    self.assertEqual(r.returncode, 125, r.stderr)
                    self.assertIn(option.encode(), r.stderr)
                    self.assertIn(b"too large", r.stderr)
                    self.assertNotIn(b"spec", r.stderr)
                    self.assertNotIn(b"cannot run", r.stderr)
                    self.assertFalse(os.path.exists(marker), "the command must not run")

    def test_largest_values_accepted(self):
        for args in (["--idle-timeout", "1000000000s"], ["--grace", "1000000000000ms"],
                     ["--max-output", "1024G"], ["--max-output", "1099511627776"]):
            with self.subTest(args=args):
                r = run(*args, "--", "sh", "-c", "echo ok; exit 3")
                self.assertEqual((r.returncode, r.stdout, r.stderr), (3, b"ok\n", b""))

    # defect 5: a second signal ends sup-run while the reader of its stdout
    # (or stderr), a pipe or a socket, stalls.
    def test_second_signal_ends_a_stalled_writer(self):
        for kind in ("pipe", "socket"):
            for target in (1, 2):
                with self.subTest(kind=kind, target=target):
                    self.stalled_writer(kind, target)

    def stalled_writer(self, kind, target):
        if kind == "pipe":
            rfd, wfd = os.pipe()
        else:
            import socket
            a, b = socket.socketpair()
            rfd, wfd = a.detach(), b.detach()
        self.addCleanup(os.close, rfd)
        pidfile = self.path(f"pid-{kind}-{target}")
        redirect = "" if target == 1 else ">&2"
        p = subprocess.Popen([SUP_RUN, "--grace", "30", "--", "sh", "-c",
                              f"echo $$ > {pidfile}; exec yes {redirect}"],
                             stdin=subprocess.DEVNULL,
                             stdout=wfd if target == 1 else subprocess.DEVNULL,
                             stderr=wfd if target == 2 else subprocess.DEVNULL)
        os.close(wfd)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait()))
        pid = self.read_pid(os.path.basename(pidfile))
        time.sleep(0.5)  # the pipe or socket fills; nobody reads it
        p.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        self.assertIsNone(p.poll(), "the first signal only interrupts")
        start = time.monotonic()
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(10), 143)
        self.assertLess(time.monotonic() - start, 5)
        self.assertTrue(wait_pid_gone(pid))

    # defect 1 (CLI): closed standard descriptors.
    def sup_run_with_closed(self, closed, args):
        fds = {0: subprocess.DEVNULL, 1: subprocess.PIPE, 2: subprocess.PIPE}

        def close_them():
            for fd in closed:
                os.close(fd)

        p = subprocess.run([SUP_RUN, *args], stdin=fds[0], stdout=fds[1], stderr=fds[2],
                           preexec_fn=close_them, timeout=20)
        return p

    def test_closed_standard_descriptors(self):
        json_path = self.path("r.json")
        cmd = ["--json", json_path, "--", "sh", "-c", "cat; echo hi; echo err >&2"]
        for closed, out, err in (((0,), b"hi\n", b"err\n"), ((1,), None, b"err\n"),
                                 ((2,), b"hi\n", None), ((0, 1, 2), None, None)):
            with self.subTest(closed=closed):
                p = self.sup_run_with_closed(closed, cmd)
                self.assertEqual(p.returncode, 0, p.stderr)
                if out is not None:
                    self.assertEqual(p.stdout, out)
                if err is not None:
                    self.assertEqual(p.stderr, err)
                # Nothing of the pass-through lands in the --json file, which
                # would otherwise take the place of the closed descriptor.
                result = self.read_json("r.json")
                self.assertEqual(result["outcome"], "exited")
                self.assertEqual(result["stdout"]["captured"], "hi\n")
                self.assertEqual(result["stderr"]["captured"], "err\n")

    def test_echo_with_a_closed_standard_descriptor(self):
        for closed in ((0,), (1,), (2,)):
            with self.subTest(closed=closed):
                p = self.sup_run_with_closed(closed, ["--", "echo", "hi"])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, b"" if 1 in closed else b"hi\n")


class Routing(TempDirTest):
    SCRIPT = "echo out1; echo err1 >&2; echo out2; echo err2 >&2"

    def test_help_names_the_routing_options(self):
        text = run("--help").stdout.decode()
        for needle in ("--stdout=MODE", "--stderr=MODE", "--merge", "--env-clear",
                       "--first-output-timeout=DURATION", "'inherit'", "'null'"):
            self.assertIn(needle, text)

    def test_merge_keeps_the_write_order_in_stdout_and_the_result(self):
        r = run("--merge", "--json", self.path("r.json"), "--", "sh", "-c", self.SCRIPT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"out1\nerr1\nout2\nerr2\n")
        self.assertEqual(r.stderr, b"")
        result = self.read_json("r.json")
        self.assertEqual(result["stdout"]["captured"], "out1\nerr1\nout2\nerr2\n")
        self.assertEqual(result["stderr"]["routed"], "stdout")

    def test_null_and_inherit(self):
        r = run("--stdout=null", "--stderr", "inherit", "--json", self.path("r.json"), "--",
                "sh", "-c", self.SCRIPT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"")
        # Written by the command itself to sup-run's own stderr.
        self.assertEqual(r.stderr, b"err1\nerr2\n")
        result = self.read_json("r.json")
        self.assertEqual((result["stdout"]["routed"], result["stderr"]["routed"]), ("null", "inherit"))
        self.assertEqual(result["stderr"]["bytes"], 0)

    def test_inherit_is_not_output_for_the_idle_timeout(self):
        # stdout ticks straight to sup-run's stdout; stderr, read, is silent.
        r = run("--stdout=inherit", "--idle-timeout=300ms", "--grace=100ms", "--",
                "sh", "-c", "while :; do echo tick; sleep 0.05; done")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertIn(b"tick\n", r.stdout)
        self.assertIn(b"idle timeout", r.stderr)

    def test_bad_routing_options(self):
        for args, message in (
                (["--stdout=tee"], b"--stdout: invalid mode 'tee'"),
                (["--stderr=stdout"], b"--stderr: invalid mode 'stdout'"),
                (["--merge", "--stderr=null"], b"--merge and --stderr cannot be used together"),
                (["--stdout=null", "--stderr=null", "--idle-timeout=1"], b"--idle-timeout: neither stream"),
                (["--stdout=inherit", "--merge", "--first-output-timeout=1"],
                 b"--first-output-timeout: neither stream")):
            with self.subTest(args=args):
                r = run(*args, "--", "true")
                self.assertEqual(r.returncode, 125)
                self.assertIn(message, r.stderr)

    def test_env_clear(self):
        r = run("--env-clear", "--", "env", env={**os.environ, "SUP_RUN_SECRET": "x"})
        self.assertEqual((r.returncode, r.stdout), (0, b""), r.stderr)
        r = run("--env-clear", "--", "sh", "-c", "echo \"[$HOME]\"")
        self.assertEqual((r.returncode, r.stdout), (0, b"[]\n"), r.stderr)


class FirstOutputTimeout(TempDirTest):
    def test_a_silent_command_exits_124_with_a_summary(self):
        r = run("--first-output-timeout=300ms", "--idle-timeout=100ms", "--grace=100ms",
                "--json", self.path("r.json"), "--", "sleep", "30")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertGreaterEqual(r.elapsed, 0.3)
        self.assertLess(r.elapsed, 10)
        self.assertIn(b"sup-run: first output timeout: no output within 300ms; sent SIGTERM", r.stderr)
        result = self.read_json("r.json")
        self.assertEqual((result["outcome"], result["phase"]), ("idle_timeout", "first_output"))

    def test_the_idle_timeout_counts_from_the_first_output(self):
        r = run("--first-output-timeout=10s", "--idle-timeout=300ms", "--grace=100ms",
                "--json", self.path("r.json"), "--", "sh", "-c", "sleep 1; echo first; exec sleep 30")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertEqual(r.stdout, b"first\n")
        self.assertGreaterEqual(r.elapsed, 1.3)
        self.assertIn(b"sup-run: idle timeout: no output for 300ms", r.stderr)
        self.assertEqual(self.read_json("r.json")["phase"], "idle")

    def test_output_in_time(self):
        r = run("--first-output-timeout=5s", "--", "sh", "-c", "echo hi; sleep 0.3; echo bye")
        self.assertEqual((r.returncode, r.stdout), (0, b"hi\nbye\n"), r.stderr)


if __name__ == "__main__":
    if not os.access(SUP_RUN, os.X_OK) or stat.S_ISDIR(os.stat(SUP_RUN).st_mode):
        sys.exit(f"sup-run not found at {SUP_RUN}: build it or set SUP_RUN")
    unittest.main()
