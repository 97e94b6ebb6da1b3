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
import sys
import threading
from typing import Any, Callable, Iterator, List, Optional, Union

from . import _lib
from ._errors import OutputGap, check

_CHUNK = 65536


def gap_mark(skipped: int) -> bytes:
    """What a whole-stream result (communicate(), run()'s CompletedProcess)
    holds where ``max_output`` dropped bytes: never head and tail glued."""
    return b"\n[sup: %d bytes omitted (max_output)]\n" % skipped


def is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


def resync(data: bytes, utf8: bool) -> bytes:
    """The bytes after a gap from the first whole character: a cut can land
    inside a UTF-8 sequence, whose continuation bytes would not decode."""
    if not utf8:
        return data
    i = 0
    while i < min(3, len(data)) and data[i] & 0xC0 == 0x80:
        i += 1
    return data[i:]


def decode_cut(
    raw: bytes, cut: Optional[int], skipped: int, encoding: str, errors: str
) -> str:
    """Text of a result whose bytes ``cut:`` follow a gap of ``skipped``
    bytes (none when ``skipped`` is 0): each side decodes on its own, a
    character split by the cut is dropped, and the gap is marked."""
    if not skipped or cut is None:
        return raw.decode(encoding, errors)
    dec = codecs.getincrementaldecoder(encoding)(errors)
    head = dec.decode(raw[:cut], final=False)  # an unfinished character is the cut's
    tail = resync(raw[cut:], is_utf8(encoding)).decode(encoding, errors)
    return head + gap_mark(skipped).decode() + tail


def _bytes_filler() -> Optional[Callable[[int], bytes]]:
    """CPython's PyBytes_FromStringAndSize(NULL, n): a new bytes object whose
    n bytes are for its maker to fill before anyone else sees it (the C API's
    way to read into bytes without a second copy, as BufferedReader.read(n)
    does). Returns None where ctypes cannot reach it (another Python)."""
    if sys.implementation.name != "cpython":
        return None
    try:
        f = ctypes.pythonapi.PyBytes_FromStringAndSize
    except AttributeError:
        return None
    f.restype = ctypes.py_object
    f.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t]
    new: Callable[[int], bytes] = lambda n: f(None, n)  # noqa: E731
    probe = new(4096)
    if ctypes.cast(ctypes.c_char_p(probe), ctypes.c_void_p).value != id(probe) + _BYTES_DATA:
        return None  # not laid out as this module assumes: copy instead
    return new


# Where a bytes object's data starts, from its id() (CPython: its address).
_BYTES_DATA = bytes.__basicsize__ - 1
_new_bytes = _bytes_filler()
_READ_BUF = 1 << 20  # the most a read(n) takes in one piece


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
    """One stream's read position, shared by its file object and iterators.

    ``read_into`` is the one path to the library: a single ctypes call to
    ``sup_output_read`` straight into the caller's memory, and a wait in
    ``poll(2)`` on the dup of ``sup_output_fd`` only when that call found
    nothing. The fd is asked for before the first read, so that the reader
    reads a plain pipe itself (see sup.h: with ``backpressure`` held back,
    without it only lent).
    """

    def __init__(self, handle: _lib.Handle, stream: int, name: str) -> None:
        self._h = handle
        self._stream = stream
        self.name = name
        self._pos = ctypes.c_uint64(0)
        self._n = ctypes.c_size_t(0)
        # Bound once: each read is then one foreign call with no lookups.
        self._read: Any = handle.api.output_read
        self._poll: Any = handle.api.poll
        self._ptr = ctypes.c_void_p(handle.ptr)
        self._pos_ref = ctypes.byref(self._pos)
        self._n_ref = ctypes.byref(self._n)
        self._chunk = ctypes.create_string_buffer(_CHUNK)  # next()'s
        self._next_lock = threading.Lock()
        self._after: Optional[bytes] = None  # read with a gap jump: given after the gap
        self._fd: Optional[int] = None
        self._poller: Optional[Any] = None  # select.poll on _fd
        self._lock = threading.Lock()

    def fileno(self) -> int:
        """A private dup of sup_output_fd (readable while bytes wait, or final)."""
        with self._lock:
            if self._fd is None:
                h = self._h
                fd = check(h.api.output_fd(h.ptr, self._stream), "sup_output_fd")
                self._fd = os.dup(fd)  # close-on-exec, ours to close
            return self._fd

    def _wait(self) -> None:
        poller = self._poller
        if poller is None:
            poller = select.poll()
            poller.register(self.fileno(), select.POLLIN)
            self._poller = poller
        try:
            poller.poll()  # GIL released; Ctrl-C interrupts it
        except RuntimeError:  # another thread waits on it: wait on a poll of our own
            own = select.poll()
            own.register(self.fileno(), select.POLLIN)
            own.poll()

    def read_into(self, addr: int, cap: int, block: bool) -> Optional[int]:
        """Up to cap (> 0) bytes of the stream into memory at addr. Returns
        the count; 0 only when not blocking and nothing is there yet; -k when
        k bytes were dropped before the next ones (the next call gives those);
        None at the end."""
        after = self._after
        if after is not None:
            k = min(cap, len(after))
            ctypes.memmove(addr, after, k)
            self._after = after[k:] or None
            return k
        if self._fd is None:
            self.fileno()
        read, ptr, stream, pos = self._read, self._ptr, self._stream, self._pos
        final = False
        while True:
            with self._lock:
                before = pos.value
                rc = read(ptr, stream, self._pos_ref, addr, cap, self._n_ref)
                n = self._n.value
                skipped = pos.value - before - n
            if rc:
                check(rc, "sup_output_read")
            if skipped > 0:
                if n:
                    self._after = ctypes.string_at(addr, n)
                return -skipped
            if n:
                return n
            if final:
                return None  # final before this read, and it found nothing: the end
            if check(self._poll(ptr, 0), "sup_poll") == 1:
                final = True  # read once more: bytes may have come before the end
                continue
            if not block:
                return 0
            self._wait()

    def next(self, block: bool) -> Union[bytes, int, None]:
        """The next bytes; or an int: a gap of that many bytes (the next call
        gives the bytes after it); or None at the end. b"" only when not
        blocking and nothing is there yet."""
        with self._next_lock:
            buf = self._chunk
            k = self.read_into(ctypes.addressof(buf), _CHUNK, block)
            if k is None:
                return None
            if k < 0:
                return -k
            return ctypes.string_at(buf, k) if k else b""

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
            self._poller = None
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

    def _readiness_fileno(self) -> int:
        """``p.stdout.fileno()``: readable while bytes wait to be read (or the
        result is final), so select()/poll()/selectors work as on
        subprocess's pipe; the bytes themselves come through this object's
        reads, not os.read on the descriptor (sup reads the child's pipe)."""
        if getattr(self, "closed", False):
            raise ValueError("I/O operation on closed file")
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
        self._buf = bytearray()  # read ahead by readline
        self._rbuf: Optional[Any] = None  # read()'s, reused: ctypes c_char array
        self._lock = threading.Lock()

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

    def fileno(self) -> int:
        return self._readiness_fileno()

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
                out += gap_mark(got)
            elif not got:
                break
            else:
                out += got
        return out

    def _fill(self, addr: int, size: int, whole: bool) -> int:
        """Up to size bytes into memory at addr: those read ahead by readline
        first, then the stream's, straight from sup_output_read. whole: until
        size, a gap or the end, as BufferedReader.read(n) on a pipe; else
        what one read gives (read1). Returns the count."""
        got = 0
        ahead = self._buf
        if ahead:
            got = min(size, len(ahead))
            ctypes.memmove(addr, bytes(ahead[:got]), got)
            del ahead[:got]
            if not whole:
                return got
        read_into = self._src.read_into
        try:
            while got < size and not self._gap and not self._eof:
                k = read_into(addr + got, size - got, True)
                if k is None:
                    self._eof = True
                elif k < 0:
                    self._gap = -k
                else:
                    got += k
                    if not whole:
                        break
        except BaseException:  # Ctrl-C in the wait: the bytes read so far stay for the next read
            if got:
                self._buf[:0] = ctypes.string_at(addr, got)
            raise
        return got

    def _read_n(self, size: int, whole: bool) -> bytes:
        new = _new_bytes
        if new is not None and whole and size >= 4096 and size <= _READ_BUF:
            # Straight into the bytes object returned: no second copy.
            with self._lock:
                data = new(size)
                got = self._fill(id(data) + _BYTES_DATA, size, True)
                if got == size:
                    return data
                return data[:got] if got else self._take(0)
        with self._lock:
            if size <= _READ_BUF:
                buf = self._rbuf
                if buf is None or len(buf) < size:
                    buf = self._rbuf = ctypes.create_string_buffer(max(size, _CHUNK))
                got = self._fill(ctypes.addressof(buf), size, whole)
                return ctypes.string_at(buf, got) if got else self._take(0)
        # Larger than the reusable buffer: in pieces, as the bytes come.
        parts: List[bytes] = []
        left = size
        while left > 0:
            part = self._read_n(min(left, _READ_BUF), whole)
            if not part:
                break
            parts.append(part)
            left -= len(part)
            if not whole or self._gap or self._eof:
                break
        return b"".join(parts)

    def read(self, size: Optional[int] = -1) -> bytes:
        """size bytes, fewer only at the end or before a gap (as
        ``BufferedReader.read(n)`` on a pipe); all to the end (or to a gap)
        when size is negative or None."""
        self._start()
        if size is None or size < 0:
            while self._pull():
                pass
            return self._take(len(self._buf))
        if size == 0:
            return self._take(0)
        return self._read_n(size, True)

    def read1(self, size: int = -1) -> bytes:
        """What one read gives: at least one byte unless at the end or a gap."""
        self._start()
        if size == 0:
            return self._take(0)
        return self._read_n(_CHUNK if size < 0 else size, False)

    def _readinto(self, b: Any, whole: bool) -> int:
        self._start()
        with memoryview(b) as view, view.cast("B") as mv:
            size = len(mv)
            if size == 0:
                self._take(0)
                return 0
            with self._lock:
                if mv.readonly:  # from_buffer's own message names ctypes
                    raise TypeError("readinto() argument must be read-write bytes-like object")
                dest = (ctypes.c_char * size).from_buffer(mv)
                try:
                    got = self._fill(ctypes.addressof(dest), size, whole)
                finally:
                    del dest  # releases the export: b may be resized again
                if not got:
                    self._take(0)
                return got

    def readinto(self, b: Any) -> int:
        """Into b, straight from the library: len(b) bytes, fewer only at
        the end or before a gap."""
        return self._readinto(b, True)

    def readinto1(self, b: Any) -> int:
        return self._readinto(b, False)

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
        self._after_gap = False  # the next bytes follow a gap: resync()
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
        if got is None:
            self._buf += self._dec.decode(b"", final=True)
            self._eof = True
            return False
        if isinstance(got, int):
            # A segment's last bytes decode on their own: nothing joins the
            # gap, and a character the gap split is dropped, not an error.
            self._dec = self._decoder()
            self._after_gap = True
            self._gap = got
            return False
        self._buf += self._dec.decode(self._resync(got))
        return True

    def _resync(self, got: bytes) -> bytes:
        if not self._after_gap:
            return got
        self._after_gap = False
        return resync(got, is_utf8(self._encoding))

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

    def fileno(self) -> int:
        return self._readiness_fileno()

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
                self._dec = self._decoder()  # a character the gap split is dropped
                self._after_gap = True
                out += gap_mark(got).decode()
            elif not got:
                break
            else:
                out += self._dec.decode(self._resync(got))
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
        self._fd_id: Optional[tuple[int, int]] = None  # (st_dev, st_ino) of the dup

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

    def fileno(self) -> int:
        """The stdin pipe's write end (a dup of sup_input_fd, closed with
        ``p.stdin``): what subprocess code does with ``p.stdin.fileno()``
        works, select()/poll() for room and ``os.write`` (EPIPE raises
        BrokenPipeError, Python ignoring SIGPIPE). With ``pty`` it is the
        terminal's master."""
        if self.closed:
            raise ValueError("I/O operation on closed file")
        return self.fileno_for_poll()

    def fileno_for_poll(self) -> int:
        """A dup of sup_input_fd, writable when the pipe has room."""
        if self._fd is None:
            h = self._h
            fd = os.dup(check(h.api.input_fd(h.ptr), "sup_input_fd"))
            st = os.fstat(fd)
            self._fd, self._fd_id = fd, (st.st_dev, st.st_ino)
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
                self._close_dup(self._fd)
                self._fd = None
            super().close()

    def _close_dup(self, fd: int) -> None:
        # fileno() hands this dup out, and subprocess code may close it
        # itself (os.close(p.stdin.fileno())): its number may since name
        # another file, which must not be closed here.
        try:
            st = os.fstat(fd)
        except OSError:
            return
        if (st.st_dev, st.st_ino) == self._fd_id:
            os.close(fd)
