"""sup-timeout against GNU timeout: the same command line under both.

Each test runs a command under /usr/bin/timeout (GNU coreutils, 9.1 here) and
under sup-timeout and compares what a caller sees: the exit status (a signal
death included), the output (the program's name made equal), and the time
taken (generously: this machine is shared and loaded).

Run through meson (`meson test -C build sup-timeout`), or directly with
SUP_TIMEOUT=/path/to/sup-timeout python3 tests/cli/test_sup_timeout.py [-v].
"""

import json
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import clean_signals

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUP_TIMEOUT = os.environ.get("SUP_TIMEOUT") or os.path.join(
    REPO, "build", "examples", "sup-run", "sup-timeout")
GNU_TIMEOUT = os.environ.get("GNU_TIMEOUT", "/usr/bin/timeout")

# The tests send INT, TERM, HUP and QUIT themselves; a suite started under
# nohup or in a background job must not pass an ignored one on.
for _sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGPIPE):
    signal.signal(_sig, signal.SIG_DFL)

# A command that says "ready", then exits 9 on the signal named.
TRAPPER = """import signal, sys, time
NAME = "%s"
def on(*_):
    print("got " + NAME, flush=True)
    sys.exit(9)
signal.signal(getattr(signal, NAME), on)
print("ready", flush=True)
time.sleep(30)
"""
# The GNU messages quote as the locale says: both run in the same one.
ENV = dict(os.environ, LC_ALL="C.UTF-8")


class Ran:
    def __init__(self, cp, elapsed, program):
        self.status = cp.returncode
        self.elapsed = elapsed
        # Both name themselves by argv[0]: made equal.
        self.out = cp.stdout.replace(program.encode(), b"PROG")
        self.err = cp.stderr.replace(program.encode(), b"PROG")

    def __repr__(self):
        return f"<status {self.status}, {self.elapsed:.2f}s, out {self.out!r}, err {self.err!r}>"


def run(program, args, shell=None, timeout=30, env=None):
    """Runs PROGRAM ARGS (or the shell text with PROG replaced by it)."""
    start = time.monotonic()
    if shell is not None:
        cmd = ["sh", "-c", shell.replace("PROG", program)]
    else:
        cmd = [program, *args]
    cp = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env or ENV,
                        stdin=subprocess.DEVNULL)
    return Ran(cp, time.monotonic() - start, program)


def have_gnu():
    try:
        out = subprocess.run([GNU_TIMEOUT, "--version"], capture_output=True).stdout
    except OSError:
        return False
    return b"GNU coreutils" in out


@unittest.skipUnless(have_gnu(), "GNU timeout is needed to compare with")
class Compare(unittest.TestCase):
    def both(self, *args, shell=None, timing=True, **kw):
        gnu = run(GNU_TIMEOUT, args, shell=shell, **kw)
        sup = run(SUP_TIMEOUT, args, shell=shell, **kw)
        return gnu, sup

    def same(self, *args, shell=None, timing=True, output=True, **kw):
        gnu, sup = self.both(*args, shell=shell, **kw)
        what = f"{args or shell}: gnu {gnu}, sup {sup}"
        self.assertEqual(sup.status, gnu.status, what)
        if output:
            self.assertEqual(sup.out, gnu.out, what)
            self.assertEqual(sup.err, gnu.err, what)
        if timing:
            # Generous: the same deadline, not the same scheduler.
            self.assertLess(abs(sup.elapsed - gnu.elapsed), 1.5, what)
        return gnu, sup

    # ---- exit statuses ----------------------------------------------------

    def test_command_status_passes_through(self):
        for code in (0, 1, 3, 255):
            with self.subTest(code=code):
                self.same("10", "sh", "-c", f"echo out; echo err >&2; exit {code}")

    def test_timed_out_is_124(self):
        gnu, sup = self.same("0.3", "sleep", "10")
        self.assertEqual(sup.status, 124)
        self.assertGreater(sup.elapsed, 0.25)

    def test_preserve_status_gives_the_commands_own(self):
        gnu, sup = self.same("--preserve-status", "0.3", "sleep", "10")
        self.assertEqual(sup.status, 128 + signal.SIGTERM)
        self.same("--preserve-status", "10", "sh", "-c", "exit 7")

    def test_kill_signal_kills_timeout_itself_too(self):
        # GNU sends KILL to its own group as well: it dies of it (137 in a
        # shell); with --foreground it exits 137.
        gnu, sup = self.same("-s", "KILL", "0.3", "sleep", "10")
        self.assertEqual(sup.status, -signal.SIGKILL)
        gnu, sup = self.same("--foreground", "-s", "KILL", "0.3", "sleep", "10")
        self.assertEqual(sup.status, 128 + signal.SIGKILL)
        gnu, sup = self.same(shell="PROG -s KILL 0.3 sleep 10; echo $?")
        self.assertEqual(sup.out, b"137\n")

    def test_kill_after(self):
        # One process: GNU's --foreground kills the command alone.
        script = "trap '' TERM; exec sleep 10"
        gnu, sup = self.same("-k", "0.4", "0.3", "sh", "-c", script)
        self.assertEqual(sup.status, -signal.SIGKILL)
        self.assertGreater(sup.elapsed, 0.6)
        gnu, sup = self.same("--foreground", "--kill-after=0.4", "0.3", "sh", "-c", script)
        self.assertEqual(sup.status, 128 + signal.SIGKILL)
        # A command that ends within -k: no KILL.
        gnu, sup = self.same("-k", "5", "0.3", "sleep", "10")
        self.assertEqual(sup.status, 124)

    def test_a_stopped_command_times_out(self):
        gnu, sup = self.same("0.3", "sh", "-c", "kill -STOP $$; echo after")
        self.assertEqual(sup.status, 124)

    def test_no_kill_without_k(self):
        # GNU never sends KILL unless -k is given: the command that ignores
        # TERM runs on to its own end.
        gnu, sup = self.same("0.2", "sh", "-c", "trap '' TERM; sleep 1.2; exit 5")
        self.assertEqual(sup.status, 124)
        self.assertGreater(sup.elapsed, 1.1)

    def test_command_not_found_127_and_cannot_invoke_126(self):
        gnu, sup = self.same("10", "/nonexistent/command")
        self.assertEqual(sup.status, 127)
        self.same("10", "no-such-command-anywhere")
        with tempfile.NamedTemporaryFile(suffix=".txt") as f:
            gnu, sup = self.same("10", f.name)
            self.assertEqual(sup.status, 126)
        gnu, sup = self.same("10", "/")
        self.assertEqual(sup.status, 126)

    def test_directory_on_path_is_126(self):
        # `timeout 10 .`: "." found in PATH as a directory, execvp's EACCES.
        gnu = run(GNU_TIMEOUT, ["10", "."])
        sup = run(SUP_TIMEOUT, ["10", "."])
        self.assertEqual(gnu.status, 126)
        self.assertEqual((sup.status, sup.err), (gnu.status, gnu.err))

    def test_usage_errors_are_125(self):
        for args in ([], ["10"], ["1x", "true"], ["-1", "true"], ["nan", "true"], ["", "true"],
                     ["-0", "true"], ["1 ", "true"], ["1s5", "true"], ["-s", "FOO", "1", "true"],
                     ["-s", "255", "1", "true"], ["-s", "-2", "1", "true"], ["-k", "x", "1", "true"],
                     ["-x", "1", "true"], ["--bogus", "1", "true"], ["-h"], ["--verbose=1", "1", "true"],
                     ["-k"], ["--kill-after"], ["--v", "1", "true"]):
            with self.subTest(args=args):
                gnu, sup = self.same(*args, timing=False)
                self.assertEqual(sup.status, 125)

    # ---- durations --------------------------------------------------------

    def test_duration_forms_that_time_out(self):
        for d in ("0.3", "3e-1", "0x1.3333333333333p-2", ".3", "0.3s", "0.005m", "0.0001h",
                  "0.000004d", " 0.3", "+0.3", "1e-320"):
            with self.subTest(duration=d):
                gnu, sup = self.same(d, "sleep", "10")
                self.assertEqual(sup.status, 124)

    def test_duration_forms_that_mean_forever_or_none(self):
        for d in ("0", "0s", "+0", "0e5", "inf", "INF", "infinity", "999e999", "2.34e+5d",
                  "4294967296", "9223372036854775808", "1e400", "1.8e308", " -0"):
            with self.subTest(duration=d):
                gnu, sup = self.same(d, "sh", "-c", "sleep 0.3; exit 7")
                self.assertEqual(sup.status, 7)

    def test_underflow_is_the_shortest_timeout(self):
        # A documented difference: GNU 9.1 reads 1e-10000 as 0 (no timeout);
        # sup-timeout, as later GNU releases, as the shortest one.
        sup = run(SUP_TIMEOUT, ["1e-10000", "sleep", "10"])
        self.assertEqual(sup.status, 124)
        self.assertLess(sup.elapsed, 5)
        gnu = run(GNU_TIMEOUT, ["1e-10000", "sh", "-c", "exit 7"])
        self.assertIn(gnu.status, (7, 124))

    # ---- signal names -----------------------------------------------------

    def test_signal_names_and_numbers(self):
        for name, sig in (("TERM", 15), ("term", 15), ("SIGTERM", 15), ("15", 15), ("143", 15),
                          ("INT", 2), ("sigint", 2), ("2", 2), ("HUP", 1), ("USR1", 10),
                          ("SIGUSR2", 12), ("QUIT", 3), ("IOT", 6), ("RTMIN+1", signal.SIGRTMIN + 1),
                          ("sigrtmax-2", signal.SIGRTMAX - 2), ("SIG15", 15), ("130", 2)):
            with self.subTest(signal=name):
                gnu, sup = self.same("--preserve-status", "-s", name, "0.2", "sleep", "10",
                                     output=sig != signal.SIGQUIT)
                self.assertEqual(sup.status, 128 + sig)

    def test_signal_zero_sends_nothing(self):
        gnu, sup = self.same("-v", "-s", "0", "-k", "0.5", "0.2", "sleep", "10")
        self.assertEqual(sup.status, -signal.SIGKILL)
        self.assertEqual(sup.err, "PROG: sending signal EXIT to command ‘sleep’\n"
                                  "PROG: sending signal KILL to command ‘sleep’\n".encode())

    # ---- messages ---------------------------------------------------------

    def test_verbose_wording(self):
        gnu, sup = self.same("-v", "0.2", "sleep", "10")
        self.assertEqual(sup.err, "PROG: sending signal TERM to command ‘sleep’\n".encode())
        gnu, sup = self.same("--verbose", "-s", "INT", "-k", "0.3", "0.2", "sh", "-c", "trap '' INT; sleep 10")
        self.assertEqual(sup.err, "PROG: sending signal INT to command ‘sh’\n"
                                  "PROG: sending signal KILL to command ‘sh’\n".encode())
        # In the C locale GNU quotes with ASCII quotes.
        gnu, sup = self.same("-v", "0.2", "sleep", "10", env=dict(os.environ, LC_ALL="C"))
        self.assertEqual(sup.err, b"PROG: sending signal TERM to command 'sleep'\n")

    def test_failed_to_run_wording(self):
        gnu, sup = self.same("10", "/nonexistent/command")
        self.assertEqual(sup.err, "PROG: failed to run command ‘/nonexistent/command’: "
                                  "No such file or directory\n".encode())

    def test_help_and_version(self):
        sup = run(SUP_TIMEOUT, ["--help"])
        self.assertEqual(sup.status, 0)
        for option in (b"--preserve-status", b"--foreground", b"--kill-after", b"--signal",
                       b"--verbose", b"--idle-timeout", b"Usage: PROG [OPTION] DURATION COMMAND"):
            self.assertIn(option, sup.out)
        sup = run(SUP_TIMEOUT, ["--version"])
        self.assertEqual(sup.status, 0)
        self.assertRegex(sup.out, rb"^sup-timeout \(sup\) \d+\.\d+\.\d+\n$")

    def test_gnu_abbreviations_keep_their_meaning(self):
        # --f is --foreground for GNU, although sup's --first-output-timeout
        # begins so too.
        for args in (["--f", "0.2", "sleep", "10"], ["--pres", "0.2", "sleep", "10"],
                     ["--si=INT", "--pres", "0.2", "sleep", "10"], ["--k=0.2", "0.2", "sleep", "10"],
                     ["--verb", "0.2", "sleep", "10"]):
            with self.subTest(args=args):
                self.same(*args)

    def test_options_end_at_duration(self):
        self.same("10", "printf", "%s\n", "-s", "--help", "-v")
        self.same("--", "10", "sh", "-c", "exit 4")

    # ---- signals received -------------------------------------------------

    def started(self, program, args):
        proc = subprocess.Popen([program, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=ENV)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        ready, _, _ = select.select([proc.stdout], [], [], 10)
        self.assertTrue(ready, "the command did not start")
        self.assertEqual(proc.stdout.readline(), b"ready\n")
        return proc

    def relay(self, program, sig, args, delay=0.0):
        proc = self.started(program, args)
        # GNU 9.1 arms its timer after the fork: a signal relayed before
        # that, under -k, has its kill timer replaced by the timeout's. It
        # is given time to get there; sup-timeout is not.
        time.sleep(delay)
        start = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
        return proc.returncode, out, err.replace(program.encode(), b"PROG"), time.monotonic() - start

    def gnu_agrees(self, sup, attempt):
        """GNU timeout 9.1 loses a signal that lands at some instants (it
        then waits for the command and exits 130): up to three tries for it
        to do what it documents, which sup-timeout must do every time."""
        gnu = None
        for _ in range(3):
            gnu = attempt()
            if gnu[:3] == sup[:3]:
                return
        self.assertEqual(sup[:3], gnu[:3])

    def test_int_quit_hup_term_and_the_s_signal_are_relayed(self):
        for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM, signal.SIGUSR1):
            name = signal.Signals(sig).name
            args = ["-s", "USR1", "10", sys.executable, "-c", TRAPPER % name]
            with self.subTest(signal=name):
                sup = self.relay(SUP_TIMEOUT, sig, args)
                self.assertEqual(sup[:3], (9, f"got {name}\n".encode(), b""))
                self.assertLess(sup[3], 5)
                self.gnu_agrees(sup, lambda: self.relay(GNU_TIMEOUT, sig, args, delay=0.3))

    def test_relayed_signal_starts_the_kill_after(self):
        script = "trap '' INT; echo ready; exec sleep 10"
        args = ["-v", "-k", "0.3", "10", "sh", "-c", script]
        sup = self.relay(SUP_TIMEOUT, signal.SIGINT, args)
        self.assertEqual(sup[:3], (-signal.SIGKILL, b"", "PROG: sending signal INT to command ‘sh’\n"
                                                        "PROG: sending signal KILL to command ‘sh’\n".encode()))
        self.assertLess(sup[3], 5)
        self.gnu_agrees(sup, lambda: self.relay(GNU_TIMEOUT, signal.SIGINT, args, delay=0.3))

    def test_usr1_and_usr2_are_relayed(self):
        # A documented difference: GNU 9.1 dies of USR1 (138) and leaves the
        # command running; sup-timeout relays it.
        for sig in (signal.SIGUSR1, signal.SIGUSR2):
            name = signal.Signals(sig).name
            with self.subTest(signal=name):
                status, out, err, _ = self.relay(SUP_TIMEOUT, sig, ["10", sys.executable, "-c", TRAPPER % name])
                self.assertEqual((status, out, err), (9, f"got {name}\n".encode(), b""))

    def test_a_signal_death_of_the_command_is_timeouts_own(self):
        for sig in ("TERM", "INT", "USR2"):
            with self.subTest(signal=sig):
                self.same("10", "sh", "-c", f"kill -{sig} $$")

    def test_alarm_is_its_own_timer(self):
        # The command (or anyone) sending SIGALRM to timeout: its timeout
        # has come. This is what makes nested timeouts work.
        args = ["-v", "10", "sh", "-c", "sleep 0.2; kill -ALRM $PPID; exec sleep 5"]
        sup = run(SUP_TIMEOUT, args)
        self.assertEqual((sup.status, sup.err), (124, "PROG: sending signal TERM to command ‘sh’\n".encode()))
        self.assertLess(sup.elapsed, 4)
        self.gnu_agrees((sup.status, sup.out, sup.err), lambda: (lambda g: (g.status, g.out, g.err))(run(GNU_TIMEOUT, args)))

    def test_nested_timeouts(self):
        # The outer one sends ALRM to the inner one, which takes it as its own
        # timeout: both exit 124, at the outer deadline.
        gnu, sup = self.same(shell="PROG -s ALRM 0.3 PROG 10 sleep 10")
        self.assertEqual(sup.status, 124)
        self.assertLess(sup.elapsed, 4)
        gnu, sup = self.same(shell="PROG 0.3 PROG 10 sleep 10")
        self.assertEqual(sup.status, 124)
        gnu, sup = self.same(shell="PROG 10 PROG 0.3 sleep 10; echo inner $?")
        self.assertEqual(sup.out, b"inner 124\n")

    # ---- what the command inherits ----------------------------------------

    def test_ignored_sigpipe_is_inherited(self):
        gnu, sup = self.same(shell="(trap '' PIPE; PROG 10 yes | :)")
        self.assertIn(b"Broken pipe", sup.err)

    def test_ignored_signals_but_timeouts_own(self):
        gnu, sup = self.same(
            shell="trap '' HUP INT QUIT PIPE USR1 TERM TTIN TSTP CONT XFSZ ALRM; "
                  "PROG 5 grep '^SigIgn' /proc/self/status")
        self.assertEqual(sup.out, gnu.out)
        gnu, sup = self.same(shell="trap '' USR2 PIPE; PROG -s USR2 5 grep '^SigIgn' /proc/self/status")
        gnu, sup = self.same(shell="PROG 5 grep '^SigIgn' /proc/self/status")
        self.assertEqual(sup.out, b"SigIgn:\t0000000000000000\n")

    # ---- --foreground -----------------------------------------------------

    def test_foreground_times_out_the_command(self):
        gnu, sup = self.same("--foreground", "0.3", "sleep", "10")
        self.assertEqual(sup.status, 124)
        gnu, sup = self.same("--foreground", "-v", "--preserve-status", "0.3", "sleep", "10")
        self.assertEqual(sup.status, 128 + signal.SIGTERM)

    def on_terminal(self, program, options):
        """Runs `sh -c 'PROGRAM OPTIONS 2 sh -c "read x; echo got $x"'` on a
        new terminal, typing a line after half a second."""
        pid, fd = pty.fork()
        if pid == 0:
            cmd = f'{program} {options} 2 sh -c "read x; echo got \\$x"; echo rc=$?'
            os.execvp("sh", ["sh", "-c", cmd])
        out, start, typed = b"", time.monotonic(), False
        while time.monotonic() - start < 15:
            if not typed and time.monotonic() - start > 0.5:
                os.write(fd, b"hello\n")
                typed = True
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(fd, 1024)
                except OSError:
                    break
                if not data:
                    break
                out += data
        os.waitpid(pid, 0)
        os.close(fd)
        return out.replace(b"\r\n", b"\n"), time.monotonic() - start

    def test_foreground_gives_the_terminal(self):
        # From a script (not a shell prompt): with --foreground the command
        # reads the terminal; without, it is in the background, stopped by
        # SIGTTIN, and times out.
        for options, expected in (("--foreground", b"hello\ngot hello\nrc=0\n"), ("", b"hello\nrc=124\n")):
            with self.subTest(options=options):
                gnu = self.on_terminal(GNU_TIMEOUT, options)
                sup = self.on_terminal(SUP_TIMEOUT, options)
                self.assertEqual(gnu[0], expected)
                self.assertEqual(sup[0], expected)
                self.assertLess(abs(sup[1] - gnu[1]), 1.5)

    def in_background(self, program):
        """PROGRAM 1 sh -c 'read x' in a background group of a terminal's
        session: the read stops the command (SIGTTIN). Returns what the
        session leader saw: the exit status, or 99 if the job stopped."""
        pid, fd = pty.fork()
        if pid == 0:
            child = os.fork()
            if child == 0:
                os.setpgid(0, 0)
                os.execvp(program, [program, "1", "sh", "-c", "read x; echo got $x"])
            _, status = os.waitpid(child, os.WUNTRACED)
            if os.WIFSTOPPED(status):
                os.kill(-child, signal.SIGKILL)
                os._exit(99)
            os._exit(os.waitstatus_to_exitcode(status) & 255)
        start = time.monotonic()
        while time.monotonic() - start < 15:
            ready, _, _ = select.select([fd], [], [], 0.2)
            try:
                if ready and not os.read(fd, 1024):
                    break
            except OSError:
                break
        _, status = os.waitpid(pid, 0)
        os.close(fd)
        return os.waitstatus_to_exitcode(status), time.monotonic() - start

    def test_a_background_read_still_times_out(self):
        # `timeout 10 dd &`: the command is stopped by SIGTTIN; timeout keeps
        # running and ends it at the deadline.
        gnu = self.in_background(GNU_TIMEOUT)
        sup = self.in_background(SUP_TIMEOUT)
        self.assertEqual(gnu[0], 124)
        self.assertEqual(sup[0], 124)
        self.assertLess(abs(sup[1] - gnu[1]), 1.5)

    # ---- sup's own options ------------------------------------------------

    def test_idle_timeout(self):
        sup = run(SUP_TIMEOUT, ["--idle-timeout=0.3", "10", "sh", "-c", "echo hi; echo err >&2; sleep 5"])
        self.assertEqual((sup.status, sup.out, sup.err), (124, b"hi\n", b"err\n"))
        self.assertLess(sup.elapsed, 4)
        sup = run(SUP_TIMEOUT, ["--first-output-timeout", "0.3", "10", "sleep", "5"])
        self.assertEqual(sup.status, 124)

    def test_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            sup = run(SUP_TIMEOUT, ["--json", path, "-k", "1", "0.3", "sleep", "10"])
            self.assertEqual(sup.status, 124)
            with open(path) as f:
                r = json.load(f)
            self.assertEqual(r["outcome"], "max_runtime")
            self.assertEqual([s["signal"] for s in r["signals_sent"]], ["SIGTERM"])

    def test_contain(self):
        sup = run(SUP_TIMEOUT, ["--contain=group", "10", "sh", "-c", "exit 6"])
        self.assertEqual(sup.status, 6)
        sup = run(SUP_TIMEOUT, ["--contain=jail", "10", "true"])
        self.assertEqual(sup.status, 125)
        self.assertIn(b"--contain", sup.err)

    def test_leftovers_are_ended(self):
        # A documented difference: what the command leaves in its group is
        # ended when it exits.
        with tempfile.TemporaryDirectory() as d:
            pidfile = os.path.join(d, "pid")
            sup = run(SUP_TIMEOUT, ["10", "sh", "-c", f"sleep 30 & echo $! > {pidfile}"])
            self.assertEqual(sup.status, 0)
            with open(pidfile) as f:
                pid = int(f.read())
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                            break
                except FileNotFoundError:
                    break
                time.sleep(0.02)
            else:
                os.kill(pid, signal.SIGKILL)
                self.fail("the command's leftover still runs")


class SupOnlyOptions(unittest.TestCase):
    """sup's long options that GNU timeout has no counterpart for."""

    def test_input_wait_timeout(self):
        # stdin is a pipe this test holds open and never writes.
        reader, writer = os.pipe()
        try:
            start = time.monotonic()
            cp = subprocess.run([SUP_TIMEOUT, "--input-wait-timeout=0.3", "-k", "1", "20",
                                 "sh", "-c", "read x"], stdin=reader, capture_output=True,
                                timeout=30, env=ENV)
            elapsed = time.monotonic() - start
        finally:
            os.close(reader)
            os.close(writer)
        self.assertEqual(cp.returncode, 124, cp.stderr)
        self.assertLess(elapsed, 10)

    def test_fd_stdin_and_max_output_none(self):
        with tempfile.TemporaryDirectory() as d:
            fd = os.open(os.path.join(d, "three"), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                path = os.path.join(d, "r.json")
                cp = subprocess.run([SUP_TIMEOUT, f"--fd=3={fd}", "--stdin=null", "--max-output=none",
                                     "--json", path, "10", "sh", "-c", "cat; echo three >&3"],
                                    input=b"not read\n", capture_output=True, timeout=30, env=ENV,
                                    pass_fds=(fd,))
            finally:
                os.close(fd)
            self.assertEqual((cp.returncode, cp.stdout), (0, b""), cp.stderr)
            with open(os.path.join(d, "three"), "rb") as f:
                self.assertEqual(f.read(), b"three\n")

    def test_limit_and_bad_values(self):
        sup = run(SUP_TIMEOUT, ["--limit=open-files=40,core=0", "10", "sh", "-c", "ulimit -n"])
        self.assertEqual((sup.status, sup.out), (0, b"40\n"))
        for args, needle in ((["--limit=cpu=x"], b"--limit"), (["--fd=1=1"], b"--fd"),
                             (["--input-wait-timeout=x"], b"--input-wait-timeout"),
                             (["--tty-stop-timeout=x"], b"--tty-stop-timeout"),
                             (["--sandbox-write=/no/such/dir"], b"--sandbox-write")):
            with self.subTest(args=args):
                sup = run(SUP_TIMEOUT, [*args, "10", "true"])
                self.assertEqual(sup.status, 125, sup.err)
                self.assertIn(needle, sup.err)

    def test_help_names_them(self):
        out = run(SUP_TIMEOUT, ["--help"]).out
        for needle in (b"--input-wait-timeout", b"--tty-stop-timeout", b"--stdin", b"--fd", b"--limit", b"--sandbox-write",
                       b"--no-network", b"--user", b"--group", b"--require-sentinel", b"'none'"):
            self.assertIn(needle, out)


if __name__ == "__main__":
    clean_signals.start_clean()
    unittest.main()
