"""asyncio.create_subprocess_exec's shape over a supervised child.

A :class:`AsyncProcess` as asyncio's: ``stdout``/``stderr`` are
``asyncio.StreamReader`` s, ``stdin`` a StreamWriter-like writer, ``wait()``,
``communicate()``, ``returncode``, ``pid``, ``send_signal``/``terminate``/
``kill``. Everything waits through ``loop.add_reader``/``add_writer`` on
sup's descriptors (``sup_fd``, ``sup_output_fd``, ``sup_input_fd``): a task
per piped stream feeds its StreamReader, no thread is started.

Memory stays bounded as with asyncio's pipes: a StreamReader pauses its
feed past twice its limit, and ``backpressure`` (default 256 KiB with a
piped stream) then holds the child back; ``drain()`` waits until the
written bytes are in the child's pipe.
"""

from __future__ import annotations

import asyncio
from typing import Any, List, Optional, Tuple

from ._errors import OutputGap
from ._popen import Popen
from ._spec import PIPE, StdioArg
from ._streams import Source, StdinWriter, gap_mark

_LIMIT = 2**16  # asyncio.streams' default buffer limit

# Defaults for a process whose output streams are piped, unless given:
# sup holds the child back once this many bytes wait unread in the library,
# as a pipe would (the StreamReader pauses the pump at 2 * limit)...
_BACKPRESSURE = 256 * 1024
# ...and keeps this much of each stream for popen.result (head and tail):
# the StreamReaders deliver every byte, so the record need not grow with
# the output. It is at least twice _BACKPRESSURE plus a read, so that a
# reader held back within its window never falls behind the kept tail.
_MAX_OUTPUT = 1 << 20


class StdinStream:
    """``Process.stdin``: asyncio.StreamWriter's methods over sup's stdin
    pipe. ``write()`` never blocks (bytes wait here); ``await drain()`` until
    the pipe took them; ``close()`` sends EOF once they are written.
    A child that closed its stdin makes ``drain()`` raise BrokenPipeError,
    as asyncio's does."""

    def __init__(self, raw: StdinWriter, loop: asyncio.AbstractEventLoop) -> None:
        self._raw = raw
        self._loop = loop
        self._buf = bytearray()
        self._fd: Optional[int] = None  # registered with add_writer
        self._waiters: List["asyncio.Future[None]"] = []
        self._error: Optional[BaseException] = None
        self._closing = False
        self._closed: "asyncio.Future[None]" = loop.create_future()

    def write(self, data: bytes) -> None:
        if self._closing:
            raise RuntimeError("write: the stdin writer is closing")
        if self._error is not None:
            return  # reported by drain(), as asyncio's transport does
        self._buf += data
        self._flush()

    def writelines(self, data: Any) -> None:
        for chunk in data:
            self.write(chunk)

    def _flush(self) -> None:
        try:
            while self._buf:
                n = self._raw.write_nowait(self._buf)
                if n is None:  # the pipe is full: wait for room on the loop
                    if self._fd is None:
                        self._fd = self._raw.fileno_for_poll()
                        self._loop.add_writer(self._fd, self._flush)
                    return
                del self._buf[:n]
        except (BrokenPipeError, ValueError) as e:
            self._error = BrokenPipeError(*e.args) if isinstance(e, ValueError) else e
            self._buf.clear()
        if self._fd is not None:
            self._loop.remove_writer(self._fd)
            self._fd = None
        for w in self._waiters:
            if not w.done():
                w.set_result(None)
        self._waiters.clear()
        if self._closing:
            self._close_now()

    async def drain(self) -> None:
        if self._buf and self._error is None:
            fut = self._loop.create_future()
            self._waiters.append(fut)
            await fut
        if self._error is not None:
            raise self._error

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.close()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        if not self._buf:
            self._close_now()

    def _close_now(self) -> None:
        if self._fd is not None:
            self._loop.remove_writer(self._fd)
            self._fd = None
        try:
            self._raw.close()
        except BrokenPipeError:
            pass
        if not self._closed.done():
            self._closed.set_result(None)

    async def wait_closed(self) -> None:
        await self._closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


class _PumpTransport(asyncio.ReadTransport):
    """What a StreamReader pauses: its pump from sup's capture.

    asyncio's subprocess pipes are read by a transport that the
    StreamReader pauses (``pause_reading``) once its buffer holds more than
    twice its limit and resumes at the limit; this is that transport for a
    pump task, which stops asking the library for bytes while paused. With
    ``backpressure`` the library then stops reading the child's pipe, and
    the child blocks on write as with asyncio's.
    """

    def __init__(self) -> None:
        super().__init__()
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._closing = False

    def pause_reading(self) -> None:
        self._resumed.clear()

    def resume_reading(self) -> None:
        self._resumed.set()

    def is_reading(self) -> bool:
        return self._resumed.is_set()

    async def wait_reading(self) -> None:
        await self._resumed.wait()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
        self._resumed.set()


class AsyncProcess:
    """asyncio.subprocess.Process's interface over a :class:`sup.Popen`
    (``popen``: its ``result``, ``interrupt()``, ``abort()``, ...)."""

    stdin: Optional[StdinStream]
    stdout: Optional[asyncio.StreamReader]
    stderr: Optional[asyncio.StreamReader]

    def __init__(self, popen: "Popen[bytes]", limit: int, loop: asyncio.AbstractEventLoop) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.stdin = self.stdout = self.stderr = None
        self._pumps: List["asyncio.Task[None]"] = []
        raw = popen._stdin_raw
        if raw is not None:
            self.stdin = StdinStream(raw, loop)
        for stream, routed in ((1, popen._routes[1]), (2, popen._routes[2])):
            if routed != PIPE or (stream == 2 and popen._pty):
                continue
            reader = asyncio.StreamReader(limit=limit, loop=loop)
            transport = _PumpTransport()
            reader.set_transport(transport)
            src = popen._source(stream)
            assert src is not None
            self._pumps.append(loop.create_task(self._pump(src, reader, transport)))
            if stream == 1:
                self.stdout = reader
            else:
                self.stderr = reader

    @staticmethod
    async def _pump(src: Source, reader: asyncio.StreamReader, transport: _PumpTransport) -> None:
        """Feed what sup captured into the StreamReader as it comes, while
        the reader wants more (its buffer at most 2 * limit, plus a read)."""
        try:
            while True:
                if not transport.is_reading():
                    await transport.wait_reading()
                got = await src.next_async()
                if got is None:
                    break
                if isinstance(got, int):  # only with an opt-in max_output
                    reader.feed_data(gap_mark(got))
                    continue
                reader.feed_data(got)
        except OutputGap:  # pragma: no cover - next_async returns gaps as ints
            pass
        except Exception as e:
            reader.set_exception(e)
            raise
        finally:
            transport.close()
        reader.feed_eof()

    def __repr__(self) -> str:
        return f"<sup.Process {self.pid}>"

    @property
    def returncode(self) -> Optional[int]:
        return self.popen.poll()

    async def wait(self) -> int:
        """Wait for the child's end (on the loop); its returncode."""
        return await self.popen.wait_async()

    def send_signal(self, signal: int) -> None:
        self.popen.send_signal(signal)

    def terminate(self) -> None:
        self.popen.terminate()

    def kill(self) -> None:
        self.popen.kill()

    def input_wanted(self) -> bool:
        """Whether the child waits for input it cannot get (:meth:`sup.Popen.input_wanted`)."""
        return self.popen.input_wanted()

    async def _feed(self, data: bytes) -> None:
        assert self.stdin is not None
        self.stdin.write(data)
        try:
            await self.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child does not read it all, as asyncio's communicate
        self.stdin.close()

    async def communicate(self, input: Optional[bytes] = None) -> Tuple[Optional[bytes], Optional[bytes]]:
        """Send ``input``, read both streams to the end, wait; (stdout, stderr)."""
        async def nothing() -> None:
            return None

        async def read(r: Optional[asyncio.StreamReader]) -> Optional[bytes]:
            return None if r is None else await r.read()

        feed = self._feed(input) if input is not None and self.stdin is not None else nothing()
        if input is None and self.stdin is not None:
            self.stdin.close()
        _, out, err = await asyncio.gather(feed, read(self.stdout), read(self.stderr))
        await self.wait()
        return out, err


def _streams_only(kwds: dict[str, Any], stdout: StdioArg, stderr: StdioArg) -> None:
    for key in ("universal_newlines", "text", "encoding", "errors"):
        if kwds.get(key):
            # asyncio's own rule: its streams carry bytes.
            raise ValueError(f"{key} must be {'None' if key in ('encoding', 'errors') else 'False'}")
    if stdout == PIPE or stderr == PIPE:
        # Bounded memory as with asyncio's pipes: a reader that does not
        # read holds the child back instead of the host growing.
        bp = kwds.setdefault("backpressure", _BACKPRESSURE)
        if "max_output" not in kwds and isinstance(bp, int) and not isinstance(bp, bool) and bp > 0:
            kwds["max_output"] = max(_MAX_OUTPUT, 4 * bp)


async def create_subprocess_exec(
    program: Any,
    *args: Any,
    stdin: StdioArg = None,
    stdout: StdioArg = None,
    stderr: StdioArg = None,
    limit: int = _LIMIT,
    **kwds: Any,
) -> AsyncProcess:
    """asyncio.create_subprocess_exec with sup's supervision: sup's keywords
    (idle_timeout, max_runtime, grace, ...) go in ``kwds``."""
    _streams_only(kwds, stdout, stderr)
    loop = asyncio.get_running_loop()
    p: "Popen[bytes]" = Popen([program, *args], stdin=stdin, stdout=stdout, stderr=stderr, **kwds)
    return AsyncProcess(p, limit, loop)


async def create_subprocess_shell(
    cmd: Any,
    stdin: StdioArg = None,
    stdout: StdioArg = None,
    stderr: StdioArg = None,
    limit: int = _LIMIT,
    **kwds: Any,
) -> AsyncProcess:
    """asyncio.create_subprocess_shell: ``cmd`` run by ``/bin/sh -c``."""
    _streams_only(kwds, stdout, stderr)
    loop = asyncio.get_running_loop()
    p: "Popen[bytes]" = Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, shell=True, **kwds)
    return AsyncProcess(p, limit, loop)


__all__ = ["AsyncProcess", "StdinStream", "create_subprocess_exec", "create_subprocess_shell"]
