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

import clean_signals

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


def run(*args, input=None, timeout=20, env=None, stdin=subprocess.DEVNULL, pass_fds=()):
    """Runs sup-run to completion; the result has .elapsed in seconds."""
    start = time.monotonic()
    cp = subprocess.run([SUP_RUN, *args], input=input,
                        stdin=None if input is not None else stdin,
                        capture_output=True, timeout=timeout, env=env, pass_fds=pass_fds)
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
        "--idle-timeout": ["-1", "abc", "1x", "", "nan", "1 ", "-0",
                           "1.2.3", "1s5", ".", "s", "-0.5s", "5 s", "1S", "1dd", "1e", "0x"],
        "--max-runtime": ["-5s", "10y", "1,5", "- 1"],
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

    def test_quit_interrupts_too(self):
        script = 'trap "echo got TERM; exit 0" TERM; echo ready; ' + SILENT_LOOP
        r = Running(self, ["--json", self.path("r.json"), "--", "sh", "-c", script])
        r.wait_for("out", b"ready\n")
        r.proc.send_signal(signal.SIGQUIT)
        self.assertEqual(r.finish(), 128 + signal.SIGQUIT)
        self.assertIn(b"got TERM\n", r.out)
        self.assertEqual(self.read_json("r.json")["outcome"], "interrupted")

    def test_usr1_and_usr2_are_relayed_as_they_are(self):
        for sig in (signal.SIGUSR1, signal.SIGUSR2):
            name = signal.Signals(sig).name[3:]
            with self.subTest(signal=name):
                script = f'trap "echo got {name}; exit 9" {name}; echo ready; ' + SILENT_LOOP
                r = Running(self, ["--", "sh", "-c", script])
                r.wait_for("out", b"ready\n")
                r.proc.send_signal(sig)
                self.assertEqual(r.finish(), 9)
                self.assertIn(f"got {name}\n".encode(), r.out)

    def test_alarm_is_the_max_runtime(self):
        # SIGALRM is sup-run's own timer going off (nested timeouts).
        r = run("--json", self.path("r.json"), "--", "sh", "-c", "kill -ALRM $PPID; exec sleep 10")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertLess(r.elapsed, 5)
        self.assertEqual(self.read_json("r.json")["outcome"], "max_runtime")
        self.assertRegex(r.stderr, rb"SIGALRM: ended as at its max runtime; sent SIGTERM at \d\.\ds; exit 124\n$")
        r = run("-q", "--", "sh", "-c", "exec timeout -s ALRM 0.3 " + SUP_RUN + " -- sleep 10")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertLess(r.elapsed, 5)

    def test_keep_ignored_signals(self):
        grep = "grep '^SigIgn' /proc/self/status"
        r = run("--", "sh", "-c", f"trap '' PIPE USR1 XFSZ; {SUP_RUN} -- {grep}")
        self.assertEqual(r.stdout, b"SigIgn:\t0000000000000000\n")
        r = run("--", "sh", "-c", f"trap '' PIPE USR1 XFSZ; {SUP_RUN} --keep-ignored-signals -- {grep}")
        mask = (1 << (signal.SIGPIPE - 1)) | (1 << (signal.SIGUSR1 - 1)) | (1 << (signal.SIGXFSZ - 1))
        self.assertEqual(r.stdout, b"SigIgn:\t%016x\n" % mask)
        # sup-run's own SIG_IGN of SIGPIPE and SIGTTOU is not passed on.
        r = run("--keep-ignored-signals", "--", "sh", "-c", grep)
        self.assertEqual(r.stdout, b"SigIgn:\t0000000000000000\n")

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

    # defect 14: limits of the library checked in option parsing. Durations
    # past the library's clock mean no limit, as in GNU timeout (issue 46).
    def test_too_large_values_name_the_option(self):
        marker = self.path("ran")
        for option, value in (("--max-output", "2048G"), ("--max-output", "1099511627777")):
            for args in ([option, value], [f"{option}={value}"]):
                with self.subTest(args=args):
                    r = run(*args, "--", "touch", marker)
                    self.assertEqual(r.returncode, 125, r.stderr)
                    self.assertIn(option.encode(), r.stderr)
                    self.assertIn(b"too large", r.stderr)
                    self.assertNotIn(b"spec", r.stderr)
                    self.assertNotIn(b"cannot run", r.stderr)
                    self.assertFalse(os.path.exists(marker), "the command must not run")

    def test_gnu_durations_and_too_large_ones_mean_no_limit(self):
        for args in (["--idle-timeout", "1000000h"], ["--max-runtime", "1000000h"],
                     ["--max-runtime", "99999999999999999999"], ["--max-runtime", "inf"],
                     ["--max-runtime", "2.34e+5d"], ["--max-runtime", "999e999"],
                     ["--first-output-timeout", "1e400"], ["--grace", "300000h"],
                     ["--grace", "1000000001s"], ["--idle-timeout", "1d"],
                     ["--max-runtime", "0x10"], ["--max-runtime", " 1e3"], ["--max-runtime", "+1"]):
            with self.subTest(args=args):
                r = run(*args, "--", "sh", "-c", "echo ok; exit 3")
                self.assertEqual((r.returncode, r.stdout, r.stderr), (3, b"ok\n", b""))

    def test_gnu_duration_forms_time_out(self):
        for value in ("0.3", "3e-1", "0x1.3333333333333p-2", "0.005m", "3e-1s"):
            with self.subTest(value=value):
                r = run("-q", "--max-runtime", value, "--", "sleep", "10")
                self.assertEqual(r.returncode, 124, r.stderr)
                self.assertLess(r.elapsed, 5)
        # Too small for a double, yet more than 0: the shortest limit.
        r = run("-q", "--max-runtime", "1e-10000", "--", "sleep", "10")
        self.assertEqual(r.returncode, 124, r.stderr)

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


class Descriptors(TempDirTest):
    """--stdin, --stdout and --stderr fd:N, --fd CHILD=HOST."""

    def open_file(self, name, flags=os.O_RDWR | os.O_CREAT, data=None):
        fd = os.open(self.path(name), flags, 0o644)
        self.addCleanup(os.close, fd)
        if data is not None:
            os.write(fd, data)
            os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def test_stdout_and_stderr_to_a_descriptor(self):
        out = self.open_file("out")
        err = self.open_file("err")
        r = run(f"--stdout=fd:{out}", "--stderr", f"fd:{err}", "--json", self.path("r.json"),
                "--", "sh", "-c", "echo to-out; echo to-err >&2", pass_fds=(out, err))
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        with open(self.path("out"), "rb") as f:
            self.assertEqual(f.read(), b"to-out\n")
        with open(self.path("err"), "rb") as f:
            self.assertEqual(f.read(), b"to-err\n")
        result = self.read_json("r.json")
        self.assertEqual((result["stdout"]["routed"], result["stderr"]["routed"]), ("fd", "fd"))

    def test_stdin_from_a_descriptor_and_null(self):
        src = self.open_file("in", data=b"from the file\n")
        r = run(f"--stdin=fd:{src}", "--", "cat", input=b"not this\n", pass_fds=(src,))
        self.assertEqual((r.returncode, r.stdout), (0, b"from the file\n"), r.stderr)
        os.lseek(src, 0, os.SEEK_SET)
        r = run(f"--stdin=fd:00{src}", "--", "cat", pass_fds=(src,))
        self.assertEqual((r.returncode, r.stdout), (0, b"from the file\n"), r.stderr)
        r = run("--stdin=null", "--", "cat", input=b"not this\n")
        self.assertEqual((r.returncode, r.stdout), (0, b""), r.stderr)
        r = run("--stdin=inherit", "--", "cat", input=b"this\n")
        self.assertEqual((r.returncode, r.stdout), (0, b"this\n"), r.stderr)

    def test_fd_passes_a_descriptor(self):
        target = self.open_file("three")
        r = run("--fd", f"3={target}", "--fd=5=1", "--",
                "sh", "-c", "echo via-three >&3; echo via-five >&5",
                pass_fds=(target,))
        self.assertEqual((r.returncode, r.stdout), (0, b"via-five\n"), r.stderr)
        with open(self.path("three"), "rb") as f:
            self.assertEqual(f.read(), b"via-three\n")
        # Only the descriptors given reach the command.
        r = run("--", "sh", "-c", "echo x >&3", pass_fds=(target,))
        self.assertNotEqual(r.returncode, 0)

    def test_bad_descriptors_exit_125_naming_the_option(self):
        marker = self.path("ran")
        cases = [
            (["--stdin=pipe"], b"--stdin"), (["--stdin=fd:"], b"--stdin"),
            (["--stdin=fd:x"], b"--stdin"), (["--stdin=fd:-1"], b"--stdin"),
            (["--stdin=fd:999"], b"--stdin: descriptor 999 is not open"),
            (["--stdout=fd:999"], b"--stdout: descriptor 999 is not open"),
            (["--stderr=fd:1x"], b"--stderr"),
            (["--fd=3"], b"--fd"), (["--fd=x=1"], b"--fd"), (["--fd=3=1=2"], b"--fd"),
            (["--fd=2=1"], b"--fd: child descriptor 2"),
            (["--fd=3=999"], b"--fd: descriptor 999 is not open"),
            (["--fd=3=1", "--fd=3=2"], b"--fd: child descriptor 3 given twice"),
            (["--pty", "--stdin=null"], b"--stdin"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                r = run(*args, "--", "touch", marker)
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertIn(needle, r.stderr)
                self.assertFalse(os.path.exists(marker), "the command must not run")


class InputWait(TempDirTest):
    def test_a_reader_nobody_feeds_exits_124_with_a_summary(self):
        # sup-run's stdin is a pipe this test holds open and never writes.
        reader, writer = os.pipe()
        self.addCleanup(os.close, writer)
        try:
            r = run("--input-wait-timeout=300ms", "--grace=200ms", "--json", self.path("r.json"),
                    "--", "sh", "-c", "read x", stdin=reader)
        finally:
            os.close(reader)
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertGreaterEqual(r.elapsed, 0.3)
        self.assertLess(r.elapsed, 10)
        self.assertIn(b"sup-run: input wait timeout: waiting for input for 300ms; sent SIGTERM",
                      r.stderr)
        result = self.read_json("r.json")
        self.assertEqual((result["outcome"], result["phase"]), ("idle_timeout", "input"))
        self.assertIs(result["waiting_for_input"], True)

    def test_a_command_that_is_fed_or_busy_runs_on(self):
        r = run("--input-wait-timeout=200ms", "--", "sh", "-c", "sleep 0.6; read x; echo $x",
                input=b"fed\n")
        self.assertEqual((r.returncode, r.stdout), (0, b"fed\n"), r.stderr)

    def test_bad_value(self):
        r = run("--input-wait-timeout=soon", "--", "true")
        self.assertEqual(r.returncode, 125)
        self.assertIn(b"--input-wait-timeout: invalid duration 'soon'", r.stderr)


class TtyStop(TempDirTest):
    """--tty-stop-timeout: a command stopped on sup-run's terminal, which it
    opened itself without the foreground, is ended; a reader of its stdin
    is not."""

    def run_on_pty(self, args, stdin=subprocess.DEVNULL, timeout=20):
        # sup-run leads a session of its own with a terminal as its
        # controlling one, but its stdin is not that terminal: the command
        # cannot be given the foreground.
        master, slave = os.openpty()
        self.addCleanup(os.close, master)

        def controlling_terminal():
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        start = time.monotonic()
        p = subprocess.Popen([SUP_RUN, *args], stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True,
                             preexec_fn=controlling_terminal, pass_fds=(slave,))
        os.close(slave)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise
        return p.returncode, out, err, time.monotonic() - start

    def test_a_dev_tty_reader_exits_124_with_a_summary(self):
        status, _, err, elapsed = self.run_on_pty(
            ["--stdin=null", "--tty-stop-timeout=200ms", "--json", self.path("r.json"),
             "--", "sh", "-c", "read x < /dev/tty"])
        self.assertEqual(status, 124, err)
        self.assertGreaterEqual(elapsed, 0.2)
        self.assertLess(elapsed, 10)
        self.assertIn(b"sup-run: tty stop timeout: stopped on the terminal, waiting for input, "
                      b"for 200ms; sent SIGTERM", err)
        result = self.read_json("r.json")
        self.assertEqual((result["outcome"], result["phase"]), ("idle_timeout", "input"))
        self.assertIs(result["waiting_for_input"], True)

    def test_a_stdin_reader_runs_on(self):
        reader, writer = os.pipe()
        self.addCleanup(os.close, reader)

        def feed_late():
            time.sleep(0.8)
            os.write(writer, b"late\n")
            os.close(writer)

        # The feeder's 0.8 s count from before sup-run starts: the child's
        # line, which needs the late input, is printed 0.8 s after this.
        fed_from = time.monotonic()
        threading.Thread(target=feed_late).start()
        status, out, err, _ = self.run_on_pty(
            ["--tty-stop-timeout=100ms", "--", "sh", "-c", "read x; echo got:$x"], stdin=reader)
        self.assertEqual((status, out), (0, b"got:late\n"), err)
        self.assertGreaterEqual(time.monotonic() - fed_from, 0.8)

    def test_bad_value(self):
        r = run("--tty-stop-timeout=soon", "--", "true")
        self.assertEqual(r.returncode, 125)
        self.assertIn(b"--tty-stop-timeout: invalid duration 'soon'", r.stderr)


class MaxOutputNone(TempDirTest):
    def test_none_keeps_every_byte(self):
        # A later --max-output wins: "none" after 1K keeps all 8 KiB.
        r = run("--max-output=1K", "--max-output", "none", "--json", self.path("r.json"),
                "--", "head", "-c", "8192", "/dev/zero")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.read_json("r.json")["stdout"]
        self.assertEqual((out["bytes"], out["truncated"], len(out["captured"])), (8192, False, 8192))
        r = run("--max-output=1K", "--json", self.path("r.json"),
                "--", "head", "-c", "8192", "/dev/zero")
        self.assertTrue(self.read_json("r.json")["stdout"]["truncated"])


class Limits(TempDirTest):
    def test_cpu_limit_ends_a_spinner(self):
        r = run("--limit", "cpu=1", "--json", self.path("r.json"),
                "--", "sh", "-c", "while :; do :; done", timeout=60)
        self.assertIn(r.returncode, (128 + signal.SIGXCPU, 128 + signal.SIGKILL), r.stderr)
        result = self.read_json("r.json")
        self.assertEqual(result["limit"], "cpu")
        self.assertEqual(result["confined"]["cpu_seconds"]["value"], 1)
        self.assertIn(b"sup-run: limit cpu: ", r.stderr)

    def test_file_size_limit(self):
        fd = os.open(self.path("big"), os.O_WRONLY | os.O_CREAT, 0o644)
        self.addCleanup(os.close, fd)
        r = run("--limit=file=1K", f"--stdout=fd:{fd}", "--json", self.path("r.json"),
                "--", "head", "-c", "8192", "/dev/zero", pass_fds=(fd,))
        self.assertEqual(r.returncode, 128 + signal.SIGXFSZ, r.stderr)
        self.assertEqual(self.read_json("r.json")["limit"], "file_size")
        self.assertEqual(os.path.getsize(self.path("big")), 1024)

    def test_every_key_reaches_the_command(self):
        r = run("--limit", "memory=1G,processes=256,open-files=64,core=0", "--limit=open-files=48",
                "--json", self.path("r.json"), "--", "sh", "-c", "ulimit -n; ulimit -c; ulimit -d")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"48\n0\n1048576\n")
        confined = self.read_json("r.json")["confined"]
        self.assertEqual(confined["memory_bytes"]["value"], 1 << 30)
        self.assertEqual(confined["open_files"]["value"], 48)
        self.assertIn("processes", confined)
        self.assertIn("core_dump", confined)

    def test_bad_limits_exit_125_naming_the_key(self):
        cases = {"": b"--limit", "cpu": b"--limit: 'cpu' has no value", "cpu=0": b"cpu: must be above 0",
                 "cpu=1s": b"cpu: invalid value", "memory=1T": b"memory: invalid value",
                 "memory=-1": b"memory: invalid value", "file=": b"file: invalid value",
                 "core=1": b"core: invalid value", "stack=1M": b"unknown limit 'stack'",
                 "processes=99999999999999999999": b"processes: invalid value"}
        for value, needle in cases.items():
            with self.subTest(value=value):
                r = run("--limit", value, "--", "true")
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertIn(needle, r.stderr)


class Sandbox(TempDirTest):
    def setUp(self):
        super().setUp()
        os.mkdir(self.path("allowed"))
        os.mkdir(self.path("other"))
        r = run("--sandbox-write", self.path("allowed"), "--json", self.path("probe.json"),
                "--", "true")
        if r.returncode != 0:
            self.skipTest(f"no sandbox here: {r.stderr!r}")
        sandbox = self.read_json("probe.json")["confined"]["sandbox"]
        if not sandbox["filesystem"]:
            self.skipTest(f"no Landlock filesystem rules here: {sandbox}")

    def test_write_outside_the_write_dirs_fails(self):
        ok, no = self.path("allowed/ok"), self.path("other/no")
        r = run("--sandbox-write", self.path("allowed"), "--",
                "sh", "-c", f"echo a > {ok}; echo b > {no}")
        self.assertNotEqual(r.returncode, 0)
        self.assertTrue(os.path.exists(ok), r.stderr)
        self.assertFalse(os.path.exists(no))
        # Relative to the current directory, as the caller sees it.
        r = subprocess.run([os.path.abspath(SUP_RUN), "--sandbox-write=allowed", "--", "sh", "-c", "echo c > allowed/rel"],
                           cwd=self.tmp, capture_output=True, stdin=subprocess.DEVNULL, timeout=20)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_read_only_what_is_listed(self):
        for name in ("allowed/f", "other/g"):
            with open(self.path(name), "w") as f:
                f.write(name)
        r = run("--sandbox-read=/usr", "--sandbox-read=/etc", "--sandbox-read", self.path("allowed"),
                "--sandbox-write", self.path("allowed"), "--",
                "sh", "-c", f"cat {self.path('allowed/f')}; cat {self.path('other/g')}")
        self.assertEqual(r.stdout, b"allowed/f")
        self.assertNotEqual(r.returncode, 0)

    def test_tmp_and_strict(self):
        r = run("--sandbox-write", self.path("allowed"), "--sandbox-tmp", "--sandbox-strict",
                "--json", self.path("r.json"), "--", "sh", "-c", 'echo x > "$TMPDIR/f" && echo "$TMPDIR"')
        if r.returncode == 125:
            self.assertIn(b"sandbox.strict", r.stderr)
            return
        self.assertEqual(r.returncode, 0, r.stderr)
        tmp = r.stdout.decode().strip()
        self.assertEqual(self.read_json("r.json")["confined"]["sandbox"]["tmp"], tmp)
        self.assertFalse(os.path.exists(tmp), "the private directory is removed")

    def test_no_network_alone_keeps_the_filesystem(self):
        probe = ("import socket, sys\n"
                 "socket.socket(socket.AF_UNIX).close()\n"
                 "open(sys.argv[1], 'w').close()\n"
                 "socket.socket(socket.AF_INET)\n")
        r = run("--no-network", "--", "python3", "-c", probe, self.path("other/written"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"PermissionError", r.stderr)
        self.assertTrue(os.path.exists(self.path("other/written")))

    def test_bad_paths_exit_125(self):
        for args, needle in ((["--sandbox-write", self.path("missing")], b"--sandbox-write: "),
                             (["--sandbox-write="], b"--sandbox-write: empty path"),
                             (["--sandbox-read", self.path("missing")], b"--sandbox-read: ")):
            with self.subTest(args=args):
                r = run(*args, "--", "true")
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertIn(needle, r.stderr)


class UserAndSentinel(TempDirTest):
    def test_user_and_group(self):
        r = run("--user", "nobody", "--group=65534", "--", "sh", "-c", "id -u; id -g")
        if os.geteuid() != 0:
            self.assertEqual(r.returncode, 125)
            self.assertIn(b"user", r.stderr)
            return
        self.assertEqual((r.returncode, r.stdout), (0, b"65534\n65534\n"), r.stderr)
        r = run("--user=00", "--", "id", "-u")
        self.assertEqual((r.returncode, r.stdout), (0, b"0\n"), r.stderr)

    def test_unknown_user_or_group_exits_125(self):
        for args, needle in ((["--user=no-such-user-sup"], b"user"),
                             (["--group=no-such-group-sup"], b"group"),
                             (["--user=4294967295"], b"user"),
                             (["--user="], b"--user: empty name")):
            with self.subTest(args=args):
                r = run(*args, "--", "true")
                self.assertEqual(r.returncode, 125, r.stderr)
                self.assertIn(needle, r.stderr)

    def test_require_sentinel(self):
        r = run("--require-sentinel", "--json", self.path("r.json"), "--", "true")
        if r.returncode == 125:
            self.assertIn(b"require_sentinel", r.stderr)
        else:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.read_json("r.json")["host_death"], "tree")


class NewOptionsHelp(unittest.TestCase):
    def test_help_names_them(self):
        text = run("--help").stdout.decode()
        for needle in ("--stdin=MODE", "'fd:N'", "--fd=CHILD=HOST", "--input-wait-timeout=DURATION",
                       "--tty-stop-timeout=DURATION",
                       "'none'", "--limit=KEY=VALUE", "memory=SIZE", "cpu=SECONDS", "processes=N",
                       "file=SIZE", "open-files=N", "core=0", "--sandbox-write=DIR",
                       "--sandbox-read=DIR", "--no-network", "--sandbox-tmp", "--sandbox-strict",
                       "--user=NAME|UID", "--group=NAME|GID", "--require-sentinel"):
            self.assertIn(needle, text)


if __name__ == "__main__":
    clean_signals.start_clean()
    if not os.access(SUP_RUN, os.X_OK) or stat.S_ISDIR(os.stat(SUP_RUN).st_mode):
        sys.exit(f"sup-run not found at {SUP_RUN}: build it or set SUP_RUN")
    unittest.main()
