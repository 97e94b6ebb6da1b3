"""Code written for subprocess behaves the same on sup: the convenience
functions, keywords spelled out at subprocess's defaults, stdio meaning the
host's own descriptors, errors, TimeoutExpired's output, type mistakes, and
a capped stream that is marked and decodes."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import sup
from conftest import tty_host


def _host(code: str, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", "import sup\n" + code], capture_output=True, timeout=60, **kw)


def test_convenience_functions_as_subprocess() -> None:
    for name, args, kw in (
        ("call", (["sh", "-c", "exit 3"],), {}),
        ("call", ("exit 4",), {"shell": True}),
        ("check_output", (["sh", "-c", "echo out; echo err >&2"],), {"stderr": subprocess.DEVNULL}),
        ("check_output", (["cat"],), {"input": "é\n", "text": True}),
        ("check_output", (["cat"],), {"input": None}),
        ("getoutput", ("echo a; echo b >&2; exit 2",), {}),
        ("getstatusoutput", ("echo a; echo b >&2; exit 2",), {}),
        ("getstatusoutput", ("printf '\\377'",), {"errors": "replace"}),
    ):
        assert getattr(sup, name)(*args, **kw) == getattr(subprocess, name)(*args, **kw), name
    assert sup.check_call(["true"]) == 0
    with pytest.raises(subprocess.CalledProcessError) as e:
        sup.check_call(["sh", "-c", "exit 5"])
    assert e.value.returncode == 5 and e.value.cmd == ["sh", "-c", "exit 5"]
    with pytest.raises(sup.CalledProcessError) as e2:
        sup.check_output(["sh", "-c", "echo partial; exit 6"])
    assert (e2.value.returncode, e2.value.output) == (6, b"partial\n")
    with pytest.raises(ValueError, match="stdout argument not allowed"):
        sup.check_output(["true"], stdout=sup.PIPE)
    with pytest.raises(subprocess.TimeoutExpired):
        sup.call(["sleep", "30"], timeout=0.2)


def test_subprocess_defaults_spelled_out_are_accepted_others_named() -> None:
    r = sup.run(
        ["true"], close_fds=True, pass_fds=(), restore_signals=True, start_new_session=False,
        process_group=0, bufsize=-1, executable=None, preexec_fn=None, umask=-1, pipesize=-1,
        user=None, group=None, extra_groups=None, startupinfo=None, creationflags=0,
    )
    assert r.returncode == 0
    for kw, value in (("preexec_fn", print),
                      ("start_new_session", True), ("executable", "/bin/sh"), ("umask", 0o22)):
        with pytest.raises(TypeError, match=f"^{kw}: "):
            sup.Popen(["true"], **{kw: value})
    # shell= is read for its truth, as subprocess reads it
    assert sup.run("echo $((1 + 1))", shell=1, capture_output=True).stdout == b"2\n"
    assert sup.run(["echo", "x"], shell=0, capture_output=True).stdout == b"x\n"


def test_type_mistakes_raise_typeerror_naming_the_keyword() -> None:
    for kw, value in (("timeout", "5"), ("env", {"A": 1}), ("env", {"A": None}), ("cwd", 5),
                      ("idle_timeout", "1"), ("max_output", 1.5), ("bufsize", "x")):
        with pytest.raises(TypeError, match=f"^{kw}") as e:
            sup.run(["true"], **{kw: value})
        assert isinstance(e.value, sup.SpecError)  # still a SpecError, as in 0.3
        with pytest.raises(TypeError):
            subprocess.run(["true"], **{kw: value})
    with pytest.raises(TypeError):
        sup.run(Path("/bin/true"), shell=True)


def test_popen_is_subscriptable_as_subprocess() -> None:
    alias = sup.Popen[bytes]
    assert isinstance(alias, types.GenericAlias) and alias.__origin__ is sup.Popen
    assert isinstance(sup.Popen[str], types.GenericAlias)


def test_oserror_strerror_is_the_errnos_and_sup_detail_is_kept(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as e:
        sup.run(["/nonexistent/prog"])
    with pytest.raises(FileNotFoundError) as theirs:
        subprocess.run(["/nonexistent/prog"])
    assert e.value.strerror == theirs.value.strerror == os.strerror(2)
    assert e.value.filename == theirs.value.filename == "/nonexistent/prog"
    assert "/nonexistent/prog" in e.value.detail  # type: ignore[attr-defined]
    # A bad cwd is what subprocess reports, whatever the program.
    for prog in (["true"], ["no-such-program-here"]):
        with pytest.raises(FileNotFoundError) as e:
            sup.run(prog, cwd=tmp_path / "missing")
        with pytest.raises(FileNotFoundError) as theirs:
            subprocess.run(prog, cwd=tmp_path / "missing")
        assert e.value.filename == theirs.value.filename
        assert e.value.strerror == theirs.value.strerror


def test_timeoutexpired_output_is_the_bytes_so_far() -> None:
    script = ["sh", "-c", "echo early; exec sleep 30"]
    with sup.Popen(script, stdout=sup.PIPE, text=True) as p:
        with pytest.raises(subprocess.TimeoutExpired) as e:
            for _ in range(100):  # until the line was read
                p.communicate(timeout=0.1)
                break
        while e.value.output is None:
            with pytest.raises(subprocess.TimeoutExpired) as e:
                p.communicate(timeout=0.1)
        assert e.value.output == b"early\n"  # bytes, as subprocess's, even in text mode
        p.kill()
        out, _ = p.communicate()
        assert out == "early\n"  # the whole stream at the end, as subprocess
    with pytest.raises(subprocess.TimeoutExpired) as e:
        sup.run(script, capture_output=True, text=True, timeout=0.5)
    assert e.value.output == b"early\n" and e.value.stderr == b""


def test_second_communicate_with_input_raises_valueerror() -> None:
    with sup.Popen(["cat"], stdin=sup.PIPE, stdout=sup.PIPE) as p:
        assert p.communicate(b"x") == (b"x", None)
        with pytest.raises(ValueError, match="Cannot send input after starting communication"):
            p.communicate(b"again")


def test_stdin_fileno_is_the_pipe_as_subprocess_code_uses_it() -> None:
    with sup.Popen(["cat"], stdin=sup.PIPE, stdout=sup.PIPE) as p:
        assert p.stdin is not None and p.stdout is not None
        fd = p.stdin.fileno()
        assert select.select([], [fd], [], 5)[1] == [fd]  # room to write
        os.write(fd, b"raw\n")
        p.stdin.write(b"buffered\n")
        p.stdin.close()
        assert select.select([p.stdout], [], [], 10)[0] == [p.stdout]
        assert p.stdout.read() == b"raw\nbuffered\n"
    with pytest.raises(ValueError):
        p.stdin.fileno()
    # Code that closes the descriptor itself: its number, taken again by
    # another file meanwhile, is not closed under that file.
    with sup.Popen(["cat"], stdin=sup.PIPE, stdout=sup.PIPE) as p:
        assert p.stdin is not None
        fd = p.stdin.fileno()
        os.close(fd)
        other = os.open("/dev/null", os.O_RDONLY)
        assert other == fd
        p.stdin.close()
        os.fstat(other)  # still open
        os.close(other)
        assert p.wait(timeout=30) == 0


def test_stdout_none_is_the_hosts_descriptor_unless_an_idle_clock_watches() -> None:
    # The child sees the host's terminal itself (subprocess's meaning).
    out = tty_host("import sup\nr = sup.run(['sh', '-c', 'test -t 1 && echo tty || echo no-tty'])\n")
    assert out.strip() == b"tty", out
    # Nothing captured: the bytes went to the descriptor.
    out2 = _host("r = sup.run(['echo', 'direct'])\nassert r.result.stdout == b'', r.result\n")
    assert out2.returncode == 0, out2.stderr
    assert out2.stdout == b"direct\n"
    # An idle clock needs to see the bytes: sup's copy, still on the host's stdout.
    out3 = _host("r = sup.run(['echo', 'seen'], idle_timeout=30)\nassert r.result.stdout == b'seen\\n'\n")
    assert out3.returncode == 0, out3.stderr
    assert out3.stdout == b"seen\n"


def test_a_closed_reader_ends_yes_as_with_subprocess() -> None:
    # python -c 'sup.run(["yes"])' | head -1 returns: yes dies of SIGPIPE.
    code = f"{sys.executable} -c 'import sup; sup.run([\"yes\"])' | head -1"
    env = dict(os.environ)
    r = subprocess.run(["sh", "-c", code], capture_output=True, timeout=60, env=env)
    assert r.stdout == b"y\n"


def test_a_child_reading_the_terminal_gets_it() -> None:
    # From a terminal, sup.run(["sh", "-c", "read x"]) reads the line as
    # subprocess's child does, instead of stopping on SIGTTIN.
    code = (
        "import sup, sys\n"
        "r = sup.run(['sh', '-c', 'read x; echo got:$x'], capture_output=True, timeout=20)\n"
        "sys.stdout.write(r.stdout.decode()); sys.stdout.flush()\n"
    )
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execv(sys.executable, [sys.executable, "-c", code])
    os.write(master, b"hello\n")
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 30)
        if not r:
            break
        try:
            chunk = os.read(master, 1024)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(master)
    assert b"got:hello" in out, out
    assert os.waitstatus_to_exitcode(status) == 0, out


def test_every_byte_kept_by_default_and_a_cap_marks_the_cut() -> None:
    big = sup.run(["head", "-c", str(20 << 20), "/dev/zero"], capture_output=True)
    assert len(big.stdout) == 20 << 20 and big.result.stdout_omitted == 0
    # 'é' is two bytes: with max_output=1001 the head (500 bytes) ends inside one.
    script = "printf 'a'; i=0; while [ $i -lt 3000 ]; do printf '\\303\\251'; i=$((i+1)); done"
    r = sup.run(["sh", "-c", script], capture_output=True, text=True, max_output=1001)
    omitted = r.result.stdout_omitted
    assert omitted > 0
    mark = f"\n[sup: {omitted} bytes omitted (max_output)]\n"
    head, _, tail = r.stdout.partition(mark)
    assert tail, r.stdout[:600]
    assert head == "a" + "é" * 249 and set(tail) == {"é"}
    b = sup.run(["seq", "1", "100000"], capture_output=True, max_output=1005)
    assert b"\n[sup: %d bytes omitted (max_output)]\n" % b.result.stdout_omitted in b.stdout
    with sup.Popen(["sh", "-c", script], stdout=sup.PIPE, text=True, max_output=1001) as p:
        assert p.wait(timeout=30) == 0
        out, _ = p.communicate()
    assert "bytes omitted (max_output)]" in out and out.startswith("a" + "é" * 249)


def test_asyncio_create_subprocess_exec_shape() -> None:
    async def main() -> None:
        p = await sup.create_subprocess_exec(
            "sh", "-c", "cat; echo err >&2; exit 3",
            stdin=sup.PIPE, stdout=sup.PIPE, stderr=sup.PIPE,
        )
        assert isinstance(p.stdout, asyncio.StreamReader) and p.pid > 0
        out, err = await p.communicate(b"x" * 300000)
        assert (len(out or b""), err, p.returncode) == (300000, b"err\n", 3)
        assert await p.wait() == 3
        q = await sup.create_subprocess_shell(
            "read x; echo got:$x; sleep 0.2; echo b", stdin=sup.PIPE, stdout=sup.PIPE
        )
        assert q.stdin is not None and q.stdout is not None
        q.stdin.write(b"in\n")
        await q.stdin.drain()
        q.stdin.close()
        await q.stdin.wait_closed()
        assert await q.stdout.readline() == b"got:in\n"
        assert await q.stdout.read() == b"b\n"
        assert await q.wait() == 0
        r = await sup.create_subprocess_exec("sleep", "30", stdout=sup.DEVNULL, idle_timeout=None)
        r.kill()
        assert await r.wait() == -9
        s = await sup.create_subprocess_exec("sh", "-c", "exec sleep 30", stdout=sup.PIPE, idle_timeout=0.3)
        assert await s.wait() != 0 and s.popen.result is not None
        assert s.popen.result.outcome is sup.Outcome.IDLE_TIMEOUT
        with pytest.raises(ValueError):
            await sup.create_subprocess_exec("true", text=True)

    threads = len(os.listdir("/proc/self/task"))
    asyncio.run(main())
    assert len(os.listdir("/proc/self/task")) <= threads + 1  # no thread per wait or stream


def test_a_popen_leaves_the_terminal_to_the_host_unless_asked() -> None:
    # A Popen's host goes on (and may read the terminal): only the functions
    # that wait, or tty_foreground=True, hand the terminal to the child.
    code = (
        "import os, sup, sys\n"
        "with sup.Popen(['sleep', '0.5']) as p:\n"
        "    mine = os.tcgetpgrp(0) == os.getpgrp()\n"
        "with sup.Popen(['sleep', '0.5'], tty_foreground=True) as q:\n"
        "    child = os.tcgetpgrp(0) == q.pid\n"
        "print('host-kept', mine, 'child-had', child, 'back', os.tcgetpgrp(0) == os.getpgrp())\n"
    )
    out = tty_host(code, timeout=30)
    assert b"host-kept True child-had True back True" in out, out
