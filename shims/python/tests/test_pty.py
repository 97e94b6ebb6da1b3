"""pty=: the child on a pseudo-terminal, p.stdin typing into it, p.resize."""

from __future__ import annotations

import pytest

import sup
from sup import Outcome


def test_the_child_has_a_terminal_of_the_size_asked() -> None:
    script = "stty size; test -t 0 && test -t 1 && test -t 2 && echo tty; read x; echo got $x"
    with sup.Popen(["sh", "-c", script], pty=(30, 100), stdin=sup.PIPE, stdout=sup.PIPE) as p:
        assert p.stdout is not None and p.stdin is not None and p.stderr is None
        assert p.stdout.readline() == b"30 100\r\n"
        assert p.stdout.readline() == b"tty\r\n"
        p.stdin.write(b"hello\n")
        p.stdin.flush()
        rest = p.stdout.read()
    assert rest == b"hello\r\ngot hello\r\n"  # the terminal echoes what is typed
    r = p.result
    assert r is not None and r.outcome is Outcome.EXITED and p.returncode == 0
    assert r.json["stdout"]["routed"] == "pty"


def test_resize_sends_sigwinch_and_close_sends_eof() -> None:
    script = "trap 'stty size' WINCH; echo ready; while read line; do :; done; echo eof"
    with sup.Popen(["sh", "-c", script], pty=True, stdin=sup.PIPE, stdout=sup.PIPE, text=True) as p:
        assert p.stdout is not None and p.stdin is not None
        assert p.stdout.readline() == "ready\n"  # text mode: "\r\n" read as "\n"
        p.resize(40, 120)
        assert p.stdout.readline() == "40 120\n"
        p.stdin.close()  # VEOF: read gets end of file
        assert p.stdout.read() == "eof\n"
    assert p.returncode == 0
    p.resize(10, 10)  # once final: nothing happens


def test_run_with_pty_and_bad_combinations() -> None:
    r = sup.run(["sh", "-c", "test -t 1 && echo yes"], pty=True, stdout=sup.PIPE)
    assert r.stdout == b"yes\r\n" and r.stderr is None
    r = sup.run(["sh", "-c", "echo out; echo err >&2"], pty=True)
    assert r.stdout is None and r.result.stdout == b"out\r\nerr\r\n"
    with pytest.raises(sup.SpecError, match="^stdout"):
        sup.run(["true"], pty=True, stdout=sup.DEVNULL)
    with pytest.raises(sup.SpecError, match="^input"):
        sup.run(["cat"], pty=True, input=b"x")
    with sup.Popen(["true"], stdout=sup.PIPE) as p:
        with pytest.raises(ValueError, match="pty"):
            p.resize(24, 80)
