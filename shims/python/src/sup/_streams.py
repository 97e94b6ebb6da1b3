"""File objects over the library's live output and stdin pipe.

``p.stdout``/``p.stderr`` read what sup captured through ``sup_output_read``
(so sup's capture, idle clock and head+tail limit stay in charge), blocking
in ``poll(2)`` on a dup of ``sup_output_fd``. ``p.stdin`` writes through
``sup_input_write``, blocking on a dup of ``sup_input_fd`` while the pipe is
full. Neither parks a thread or blocks inside the library.

Gaps: when the child wrote more than ``max_output`` while a reader lagged,
the library's read position jumps past the dropped bytes. A stream reads in
segments: a read returns bytes of one segment only (it may come back short
at a gap), and the first read after a segment ended raises
:class:`sup.OutputGap` once, with the count; reading then goes on.
"""

from __future__ import annotations

import asyncio
import codecs
import ctypes
import errno as _errno
import io
import os
import select
import threading
from typing import Any, Iterator, List, Optional, Union

from . import _lib
from ._errors import OutputGap, check

_CHUNK = 65536


async def readable(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    """Wait on the event loop until fd is readable (loop.add_reader)."""
    fut: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not fut.done():
            fut.set_result(None)

    loop.add_reader(fd, ready)
    try:
        await fut
    finally:
        loop.remove_reader(fd)


class Source:
    """One stream's read position, shared by its file object and iterators."""

    def __init__(self, handle: _lib.Handle, stream: int, name: str) -> None:
        self._h = handle
        self._stream = stream
        self.name = name
        self._pos = ctypes.c_uint64(0)
        self._n = ctypes.c_size_t(0)
        self._buf = ctypes.create_string_buffer(_CHUNK)
        self._after: Optional[bytes] = None  # read with a gap jump: given after the gap
        self._fd: Optional[int] = None
        self._lock = threading.Lock()

    def fileno(self) -> int:
        """A private dup of sup_output_fd (readable while bytes wait, or final)."""
        with self._lock:
            if self._fd is None:
                h = self._h
                fd = check(h.api.output_fd(h.ptr, self._stream), "sup_output_fd")
                self._fd = os.dup(fd)  # close-on-exec, ours to close
            return self._fd

    def next(self, block: bool) -> Union[bytes, int, None]:
        """The next bytes; or an int: a gap of that many bytes (the next call
        gives the bytes after it); or None at the end. b"" only when not
        blocking and nothing is there yet."""
        after, self._after = self._after, None
        if after:
            return after
        h = self._h
        final = False
        while True:
            with self._lock:
                before = self._pos.value
                check(
                    h.api.output_read(
                        h.ptr,
                        self._stream,
                        ctypes.byref(self._pos),
                        self._buf,
                        _CHUNK,
                        ctypes.byref(self._n),
                    ),
                    "sup_output_read",
                )
                n = self._n.value
                data = ctypes.string_at(self._buf, n) if n else b""
                skipped = self._pos.value - before - n
            if skipped > 0:
                self._after = data
                return skipped
            if data:
                return data
            if final:
                return None  # final before this read, and it found nothing: the end
            if check(h.api.poll(h.ptr, 0), "sup_poll") == 1:
                final = True  # read once more: bytes may have come before the end
                continue
            if not block:
                return b""
            poller = select.poll()
            poller.register(self.fileno(), select.POLLIN)
            poller.poll()  # GIL released; Ctrl-C interrupts it

    async def next_async(self) -> Union[bytes, int, None]:
        loop = asyncio.get_running_loop()
        while True:
            got = self.next(False)
            if got != b"":
                return got
            await readable(loop, self.fileno())

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)


class _Segments:
    """The segment rule shared by the binary and text readers."""

    _gap = 0
    _eof = False
    _src: Source

    def fileno_for_poll(self) -> int:
        """The stream's readiness fd (for communicate's poll)."""
        return self._src.fileno()

    def _gap_first(self, src: Source, empty: bool) -> None:
        if empty and self._gap:
            gap, self._gap = self._gap, 0
            raise OutputGap(src.name, gap)


class OutputReader(io.BufferedIOBase, _Segments):
    """``p.stdout``/``p.stderr`` in binary mode: read, read1, readline,
    readlines, iteration by line. See the module docstring for gaps."""

    def __init__(self, src: Source) -> None:
        super().__init__()
        self._src = src
        self._buf = bytearray()

    def _pull(self) -> bool:
        if self._gap or self._eof:
            return False
        got = self._src.next(True)
        if got is None:
            self._eof = True
            return False
        if isinstance(got, int):
            self._gap = got
            return False
        self._buf += got
        return True

    def _start(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        self._gap_first(self._src, not self._buf)

    def _take(self, n: int) -> bytes:
        if n == 0 or not self._buf:
            self._gap_first(self._src, not self._buf)  # found while reading: raise it now
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    def readable(self) -> bool:
        return True

    def drain(self, block: bool) -> bytes:
        """What is there (block: everything to the end), gaps joined as in
        the result: for communicate()."""
        out = bytes(self._buf)
        self._buf.clear()
        self._gap = 0
        while not self._eof:
            got = self._src.next(block)
            if got is None:
                self._eof = True
            elif isinstance(got, int):
                continue
            elif not got:
                break
            else:
                out += got
        return out

    def read(self, size: Optional[int] = -1) -> bytes:
        self._start()
        if size is not None and size > 0 and not self._buf and not self._gap and not self._eof:
            # The common loop, read(65536) until b"": hand the chunk on uncopied.
            got = self._src.next(True)
            if got is None:
                self._eof = True
                return b""
            if isinstance(got, int):
                self._gap = got
                return self._take(0)
            if len(got) >= size:
                self._buf += got[size:]
                return got[:size] if len(got) > size else got
            self._buf += got
        if size is None or size < 0:
            while self._pull():
                pass
            return self._take(len(self._buf))
        while len(self._buf) < size and self._pull():
            pass
        return self._take(size)

    def read1(self, size: int = -1) -> bytes:
        self._start()
        if not self._buf:
            self._pull()
        return self._take(len(self._buf) if size < 0 else size)

    def readinto(self, b: Any) -> int:
        mv = memoryview(b).cast("B")
        data = self.read(len(mv))
        mv[: len(data)] = data
        return len(data)

    def readinto1(self, b: Any) -> int:
        mv = memoryview(b).cast("B")
        data = self.read1(len(mv))
        mv[: len(data)] = data
        return len(data)

    def readline(self, size: Optional[int] = -1) -> bytes:
        self._start()
        limit = -1 if size is None else size
        scanned = 0
        while True:
            i = self._buf.find(b"\n", scanned)
            if i >= 0:
                end = i + 1
                break
            if 0 <= limit <= len(self._buf):
                end = limit
                break
            scanned = len(self._buf)
            if not self._pull():
                end = len(self._buf)
                break
        if limit >= 0:
            end = min(end, limit)
        return self._take(end)

    def readlines(self, hint: Optional[int] = -1) -> List[bytes]:
        """Lines to the end, or to a gap (the next read raises OutputGap)."""
        lines: List[bytes] = []
        total = 0
        while True:
            if lines and not self._buf and self._gap:
                return lines
            line = self.readline()
            if not line:
                return lines
            lines.append(line)
            total += len(line)
            if hint is not None and 0 < hint <= total:
                return lines

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        if not self.closed:
            self._src.close()
        super().close()


class TextOutputReader(io.TextIOBase, _Segments):
    """``p.stdout``/``p.stderr`` in text mode: decoded with ``encoding`` and
    ``errors``, universal newlines as subprocess's text mode."""

    def __init__(self, src: Source, encoding: str, errors: str) -> None:
        super().__init__()
        self._src = src
        self._encoding = encoding
        self._errors = errors
        self._dec = self._decoder()
        self._buf = ""

    def _decoder(self) -> io.IncrementalNewlineDecoder:
        raw = codecs.getincrementaldecoder(self._encoding)(self._errors)
        return io.IncrementalNewlineDecoder(raw, translate=True)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    @property
    def errors(self) -> str:  # type: ignore[override]
        return self._errors

    def _pull(self) -> bool:
        if self._gap or self._eof:
            return False
        got = self._src.next(True)
        if got is None or isinstance(got, int):
            # A segment's last bytes decode on their own: nothing joins the gap.
            self._buf += self._dec.decode(b"", final=True)
            self._dec = self._decoder()
            if got is None:
                self._eof = True
            else:
                self._gap = got
            return False
        self._buf += self._dec.decode(got)
        return True

    def _start(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        self._gap_first(self._src, not self._buf)

    def _take(self, n: int) -> str:
        if n == 0 or not self._buf:
            self._gap_first(self._src, not self._buf)  # found while reading: raise it now
        data, self._buf = self._buf[:n], self._buf[n:]
        return data

    def readable(self) -> bool:
        return True

    def drain(self, block: bool) -> str:
        """What is there (block: everything to the end), gaps joined as in
        the result: for communicate()."""
        out, self._buf = self._buf, ""
        self._gap = 0
        while not self._eof:
            got = self._src.next(block)
            if got is None:
                self._eof = True
                out += self._dec.decode(b"", final=True)
            elif isinstance(got, int):
                continue
            elif not got:
                break
            else:
                out += self._dec.decode(got)
        return out

    def read(self, size: Optional[int] = -1) -> str:
        self._start()
        if size is None or size < 0:
            while self._pull():
                pass
            return self._take(len(self._buf))
        while len(self._buf) < size and self._pull():
            pass
        return self._take(size)

    def readline(self, size: Optional[int] = -1) -> str:  # type: ignore[override]
        self._start()
        limit = -1 if size is None else size
        scanned = 0
        while True:
            i = self._buf.find("\n", scanned)
            if i >= 0:
                end = i + 1
                break
            if 0 <= limit <= len(self._buf):
                end = limit
                break
            scanned = len(self._buf)
            if not self._pull():
                end = len(self._buf)
                break
        if limit >= 0:
            end = min(end, limit)
        return self._take(end)

    def readlines(self, hint: Optional[int] = -1) -> List[str]:  # type: ignore[override]
        """Lines to the end, or to a gap (the next read raises OutputGap)."""
        lines: List[str] = []
        total = 0
        while True:
            if lines and not self._buf and self._gap:
                return lines
            line = self.readline()
            if not line:
                return lines
            lines.append(line)
            total += len(line)
            if hint is not None and 0 < hint <= total:
                return lines

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return self

    def __next__(self) -> str:  # type: ignore[override]
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        if not self.closed:
            self._src.close()
        super().close()


class StdinWriter(io.RawIOBase):
    """The raw stdin pipe under ``p.stdin``'s buffering: blocks (in
    ``poll(2)``, Ctrl-C works) while the pipe is full; BrokenPipeError once
    the child closed its stdin or ended; ``close()`` gives the child EOF."""

    def __init__(self, handle: _lib.Handle) -> None:
        super().__init__()
        self._h = handle
        self._fd: Optional[int] = None

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        while True:
            n = self.write_nowait(b)
            if n is not None:
                return n
            poller = select.poll()
            poller.register(self.fileno_for_poll(), select.POLLOUT)
            poller.poll()

    def write_nowait(self, b: Any) -> Optional[int]:
        """Bytes written, or None when the pipe is full."""
        if self.closed:
            raise ValueError("write to closed file")
        data = bytes(b)
        if not data:
            return 0
        h = self._h
        written = ctypes.c_size_t(0)
        rc = h.api.input_write(h.ptr, data, len(data), ctypes.byref(written))
        if rc == 0:
            return written.value
        if rc == _lib.EAGAIN:
            return None
        if rc == _lib.EPIPE:
            raise BrokenPipeError(_errno.EPIPE, "sup: the child closed its stdin or ended")
        if rc == _lib.EBADF:
            raise ValueError("write to closed file")
        check(rc, "sup_input_write")
        return 0

    def fileno_for_poll(self) -> int:
        """A dup of sup_input_fd, writable when the pipe has room."""
        if self._fd is None:
            h = self._h
            self._fd = os.dup(check(h.api.input_fd(h.ptr), "sup_input_fd"))
        return self._fd

    def close(self) -> None:
        if self.closed:
            return
        try:
            h = self._h
            rc = h.api.input_close(h.ptr)
            while rc == _lib.EAGAIN:  # a pty's input queue is full: VEOF waits for room
                poller = select.poll()
                poller.register(self.fileno_for_poll(), select.POLLOUT)
                poller.poll()
                rc = h.api.input_close(h.ptr)
            if rc not in (0, _lib.EBADF):
                check(rc, "sup_input_close")
        finally:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            super().close()
