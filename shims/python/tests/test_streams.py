"""p.stdin, p.stdout and p.stderr as file objects; gaps told, never spliced."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from typing import Any, Callable, Iterator

import pytest

import sup
from sup import Outcome

from conftest import PIPES

SEQ = ["seq", "1", "100000"]
SEQ_BYTES = b"".join(b"%d\n" % i for i in range(1, 100001))


def test_stdin_pipe_is_a_live_conversation() -> None:
    with sup.Popen(["cat"], stdin=sup.PIPE, **PIPES) as p:
        assert p.stdin is not None and p.stdout is not None
        for word in (b"one\n", b"two\n", b"\x00\xff\n"):
            p.stdin.write(word)
            p.stdin.flush()
            assert p.stdout.readline() == word  # the answer comes before stdin closes
        p.stdin.close()  # cat sees EOF
        assert p.stdout.read() == b""
        assert p.wait(timeout=10) == 0


def test_stdin_larger_than_the_pipe_while_the_child_writes() -> None:
    data = bytes(range(256)) * 16384  # 4 MiB
    with sup.Popen(["cat"], stdin=sup.PIPE, backpressure=1 << 16, **PIPES) as p:
        out, err = p.communicate(data, timeout=60)
    assert out == data and err == b""
    assert p.returncode == 0


def test_write_after_the_child_closed_stdin_is_a_broken_pipe() -> None:
    with sup.Popen(["sh", "-c", "exec 0<&-; sleep 0.1"], stdin=sup.PIPE, **PIPES) as p:
        assert p.stdin is not None
        p.wait()
        with pytest.raises(BrokenPipeError):
            p.stdin.write(b"x" * 100000)
            p.stdin.flush()
    # communicate() does not raise for it, as subprocess
    with sup.Popen(["true"], stdin=sup.PIPE, **PIPES) as p:
        p.wait()
        assert p.communicate(b"y" * 1000000) == (b"", b"")


def test_text_mode_streams() -> None:
    with sup.Popen(["sh", "-c", "cat; printf 'w\\r\\nx\\ry' >&2"], stdin=sup.PIPE, text=True,
                   encoding="utf-8", **PIPES) as p:
        assert p.stdin is not None and p.stdout is not None and p.stderr is not None
        p.stdin.write("é\n")
        p.stdin.flush()
        assert p.stdout.readline() == "é\n"
        p.stdin.write("ö")
        p.stdin.close()
        assert p.stdout.read() == "ö"
        assert list(p.stderr) == ["w\n", "x\n", "y"]


def test_binary_reads() -> None:
    with sup.Popen(["printf", "ab\\ncd\\nef"], **PIPES) as p:
        assert p.stdout is not None
        assert p.stdout.read(1) == b"a"
        assert p.stdout.readline() == b"b\n"
        assert p.stdout.readlines() == [b"cd\n", b"ef"]
        assert p.stdout.read() == b"" and p.stdout.readline() == b""
    with sup.Popen(["sh", "-c", "echo x; sleep 0.3; echo y"], **PIPES) as p:
        assert p.stdout is not None
        t0 = time.monotonic()
        assert p.stdout.read1(100) == b"x\n"  # what is there, not 100 bytes
        assert time.monotonic() - t0 < 0.3
        assert p.stdout.read() == b"y\n"


# ---- gaps -----------------------------------------------------------------


def _check_segments(segments: list[bytes], skipped: list[int], r: sup.Result) -> None:
    """Each segment is a stretch of seq's output as written; the segments
    and the skipped counts add up to everything; nothing joins two sides.
    The reader lost at most what the result dropped: what it read from the
    pipe itself before lagging is its own even where the result keeps only
    the head (so its first segment starts with the kept head)."""
    assert len(segments) == 2 and len(skipped) == 1, (len(segments), skipped)
    head, tail = segments
    assert SEQ_BYTES.startswith(head)
    assert SEQ_BYTES.endswith(tail)
    assert len(head) + skipped[0] + len(tail) == len(SEQ_BYTES)
    half = len(r.stdout) // 2
    assert len(r.stdout) == 4096 and head.startswith(r.stdout[:half]) and tail.endswith(r.stdout[half:])
    assert 0 < skipped[0] <= r.stdout_omitted


def _slow_reader(p: sup.Popen) -> None:
    """Falls behind: waits until seq is done before reading on."""
    while p.poll() is None:
        time.sleep(0.02)


def _read_lines(f: Any, segments: list[bytes], skipped: list[int], decode: Callable[[Any], bytes]) -> None:
    first = True
    while True:
        try:
            for line in f:
                segments[-1] += decode(line)
                if first:
                    first = False
                    _slow_reader(f.popen)
            return
        except sup.OutputGap as gap:
            assert gap.stream == "stdout" and str(gap.skipped) in str(gap)
            skipped.append(gap.skipped)
            segments.append(b"")


@pytest.mark.parametrize("text", [False, True])
def test_a_lagging_line_reader_is_told_of_the_gap_once(text: bool) -> None:
    with sup.Popen(SEQ, max_output=4096, text=text, **PIPES) as p:
        f: Any = p.stdout
        f.popen = p
        segments, skipped = [b""], []
        _read_lines(f, segments, skipped, (lambda s: s.encode()) if text else (lambda b: b))
        assert f.read() == ("" if text else b"")  # the end, and no second gap
    r = p.result
    assert r is not None and r.outcome is Outcome.EXITED
    _check_segments(segments, skipped, r)
    for seg in segments:  # whole lines inside each segment are consecutive numbers
        nums = [int(x) for x in seg.split(b"\n")[1:-1]]
        assert nums == list(range(nums[0], nums[0] + len(nums)))


def test_a_read_never_spans_a_gap() -> None:
    with sup.Popen(SEQ, max_output=4096, **PIPES) as p:
        assert p.stdout is not None
        first = p.stdout.read(10)
        p.wait()
        rest = p.stdout.read()  # stops at the gap
        with pytest.raises(sup.OutputGap) as e:
            p.stdout.read()
        after = p.stdout.read()
        assert p.stdout.read() == b""
    r = p.result
    assert r is not None
    _check_segments([first + rest, after], [e.value.skipped], r)


def test_iter_output_raises_the_gap_and_goes_on() -> None:
    with sup.Popen(SEQ, max_output=4096, **PIPES) as p:
        p.wait()
        segments: list[bytes] = [b""]
        skipped: list[int] = []
        while True:
            try:
                for chunk in p.iter_output("stdout"):
                    segments[-1] += chunk
                break
            except sup.OutputGap as gap:
                skipped.append(gap.skipped)
                segments.append(b"")
    r = p.result
    assert r is not None
    _check_segments(segments, skipped, r)


def test_aiter_output_raises_the_gap_and_goes_on() -> None:
    async def main() -> tuple[list[bytes], list[int], sup.Result | None]:
        async with sup.Popen(SEQ, max_output=4096, **PIPES) as p:
            await p.wait_async()
            segments: list[bytes] = [b""]
            skipped: list[int] = []
            while True:
                try:
                    async for chunk in p.aiter_output("stdout"):
                        segments[-1] += chunk
                    break
                except sup.OutputGap as gap:
                    skipped.append(gap.skipped)
                    segments.append(b"")
        return segments, skipped, p.result

    segments, skipped, r = asyncio.run(main())
    assert r is not None
    _check_segments(segments, skipped, r)


def test_communicate_gives_head_and_tail_as_the_result() -> None:
    with sup.Popen(SEQ, max_output=4096, **PIPES) as p:
        p.wait()
        out, err = p.communicate()
    r = p.result
    assert r is not None and len(r.stdout) == 4096 and err == b""
    # The cut is marked, never head and tail glued.
    assert out == r.stdout[:2048] + b"\n[sup: %d bytes omitted (max_output)]\n" % r.stdout_omitted + r.stdout[2048:]


def test_reading_after_close_and_closed_files() -> None:
    with sup.Popen(["echo", "hi"], **PIPES) as p:
        pass
    assert p.stdout is not None and p.stdout.closed
    with pytest.raises(ValueError):
        p.stdout.read()


def test_no_thread_while_reading(capfd: pytest.CaptureFixture[str]) -> None:
    import threading

    before = threading.active_count()
    with sup.Popen([sys.executable, "-c", "import time\nfor i in range(5): print(i, flush=True); time.sleep(0.05)"],
                   **PIPES) as p:
        assert p.stdout is not None
        lines: Iterator[bytes] = iter(p.stdout)
        assert next(lines) == b"0\n"
        assert threading.active_count() == before
        assert list(lines) == [b"1\n", b"2\n", b"3\n", b"4\n"]


# ---- live streams with backpressure: every byte, in order ------------------

# 6 MiB of numbered 16-byte lines, written in pieces of varied sizes so that
# reads meet partly filled pipes.
BIG_LINES = 6 * 65536
BIG = b"".join(b"%015d\n" % i for i in range(BIG_LINES))
BIG_WRITER = [sys.executable, "-c",
              "import sys\n"
              "data = b''.join(b'%015d\\n' % i for i in range(6 * 65536))\n"
              "out = sys.stdout.buffer\n"
              "i = 0\n"
              "sizes = (1, 4095, 65536, 100000, 7, 131072, 333)\n"
              "while i < len(data):\n"
              "    n = sizes[i % len(sizes)]\n"
              "    out.write(data[i:i + n]); out.flush(); i += n\n"]


def _big(**kw: Any) -> sup.Popen:
    return sup.Popen(BIG_WRITER, backpressure=1 << 16, max_output=1 << 16, **PIPES, **kw)


@pytest.mark.parametrize("size", [4095, 65536, 1 << 20, 3 << 20])
def test_read_n_gives_n_bytes_until_the_end(size: int) -> None:
    with _big() as p:
        assert p.stdout is not None
        parts = []
        while True:
            chunk = p.stdout.read(size)
            if not chunk:
                break
            parts.append(chunk)
        assert all(len(c) == size for c in parts[:-1])  # as BufferedReader.read(n) on a pipe
        assert 0 < len(parts[-1]) <= size
        assert b"".join(parts) == BIG
        assert p.wait() == 0


def test_read1_readinto_readinto1_and_lines_lose_nothing() -> None:
    with _big() as p:
        f = p.stdout
        assert f is not None
        got = bytearray()
        got += f.readline()
        got += f.read1(65536)
        got += f.read(10)
        buf = bytearray(70000)
        n = f.readinto(buf)
        assert n == len(buf)
        got += buf
        view = memoryview(bytearray(5000))
        n = f.readinto1(view)
        assert 0 < n <= 5000
        got += view[:n]
        for i, line in enumerate(f):
            got += line
            if i == 1000:
                break
        while True:
            chunk = f.read1(-1)
            if not chunk:
                break
            got += chunk
        assert f.readinto(bytearray(10)) == 0 and f.read1(10) == b"" and f.read(10) == b""
        assert bytes(got) == BIG
    with _big() as p:
        assert p.stdout is not None
        with pytest.raises(TypeError):
            p.stdout.readinto(b"read-only")
        p.kill()  # held back by backpressure: the exit would wait for it, as subprocess's


def test_iter_output_and_text_lines_lose_nothing() -> None:
    with _big() as p:
        assert b"".join(p.iter_output("stdout")) == BIG
    with _big(text=True) as p:
        assert p.stdout is not None
        lines = list(p.stdout)
        assert len(lines) == BIG_LINES and "".join(lines).encode() == BIG


def test_a_child_killed_mid_stream_ends_the_read() -> None:
    with sup.Popen(["sh", "-c", "exec head -c 100000000 /dev/zero"], backpressure=1 << 16, **PIPES) as p:
        assert p.stdout is not None
        first = p.stdout.read(1 << 20)
        assert first == bytes(1 << 20)
        p.kill()
        n = len(first)
        buf = bytearray(65536)
        while True:
            k = p.stdout.readinto(buf)
            if not k:
                break
            assert buf[:k] == bytes(k)
            n += k
        assert n < 100000000
        assert p.wait() == -9
    r = p.result
    assert r is not None and r.outcome is Outcome.ABORTED
    assert r.stdout_omitted + len(r.stdout) == n  # the reader got every byte sup saw
