"""Popen and run: a supervised child with a subprocess-like interface.

Waiting never parks a thread in the library and never holds the handle's
lock: ``wait()`` polls a private dup of ``sup_fd`` with ``select.poll``
(interruptible by Ctrl-C, woken the moment the result is final, by the child
ending or by ``abort()`` from any thread), ``wait_async()`` hands such a dup
to the event loop with ``loop.add_reader``. Every C call made on the handle
is short and non-blocking and is made under ``self._lock`` after checking
that the handle is open, so no call can begin once ``sup_release`` has begun.
"""

from __future__ import annotations

import asyncio
from collections import abc as _abc
import ctypes
import math
import os
import select
import subprocess
import threading
import time
import warnings
from types import TracebackType
from typing import (
    AsyncIterator,
    Iterator,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Type,
    Union,
)

from . import _lib, _spec
from ._errors import SupError, check, os_error, spec_error_from_detail
from ._result import JsonSource, Result, from_handle
from ._spec import EnvValue, Stdin, StrOrBytesPath

StreamName = Literal["stdout", "stderr"]
_STREAMS = {"stdout": _lib.STDOUT, "stderr": _lib.STDERR}
_CHUNK = 65536


def _stream(stream: str) -> int:
    try:
        return _STREAMS[stream]
    except (KeyError, TypeError):
        raise ValueError(f"stream: must be 'stdout' or 'stderr', not {stream!r}") from None


def _spawn_error(
    code: int, detail: str, part: int, argv0: object, cwd: object
) -> Exception:
    if part == _lib.PART_SPEC or (code == _lib.EINVAL and detail.startswith("spec")):
        return spec_error_from_detail(detail)
    if code <= _lib.EINTERNAL:
        return SupError(code, detail or "internal error in libsup")
    if part == _lib.PART_EXEC:
        return os_error(code, detail, argv0)
    if part == _lib.PART_CWD:
        return os_error(code, detail, cwd)
    return os_error(code, detail)


async def _readable(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    fut: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not fut.done():
            fut.set_result(None)

    loop.add_reader(fd, ready)
    try:
        await fut
    finally:
        loop.remove_reader(fd)


class Popen:
    """A child running under supervision.

    Keywords are those of :func:`sup.run`. Use as a context manager: leaving
    the block (or :meth:`close`) aborts a child still running, reaps it and
    its process group, and frees the library's handle. The result stays
    available through :meth:`poll` and :meth:`wait` afterwards.
    """

    args: Sequence[StrOrBytesPath]
    pid: int

    def __init__(
        self,
        args: Sequence[StrOrBytesPath],
        *,
        idle_timeout: Optional[float] = None,
        timeout: Optional[float] = None,
        grace: Optional[float] = None,
        signal: Union[int, str, None] = None,
        kill_on_timeout: bool = False,
        input: Optional[bytes] = None,
        stdin: Optional[Stdin] = None,
        cwd: Optional[StrOrBytesPath] = None,
        env: Optional[Mapping[Union[str, bytes], EnvValue]] = None,
        max_output: Optional[int] = None,
        backpressure: Optional[int] = None,
    ) -> None:
        self._handle = 0  # first, for __del__ on a failed spawn
        self._closed = True
        self._result: Optional[Result] = None
        self._json = JsonSource(self._fetch_json)
        self._lock = threading.RLock()  # re-entrant: abort() from a signal handler
        if not isinstance(args, (str, bytes, _abc.Sequence)) and isinstance(args, _abc.Iterable):
            args = list(args)  # an iterator is read once, here
        spec = _spec.build(
            args,
            idle_timeout=idle_timeout,
            timeout=timeout,
            grace=grace,
            signal=signal,
            kill_on_timeout=kill_on_timeout,
            input=input,
            stdin=stdin,
            cwd=cwd,
            env=env,
            max_output=max_output,
            backpressure=backpressure,
        )
        a = self._api = _lib.api()
        handle = ctypes.c_void_p(None)
        errbuf = ctypes.create_string_buffer(_lib.ERRBUF_SIZE)
        part = ctypes.c_int(0)
        try:
            rc = a.spawn_v2(
                spec, ctypes.byref(handle), errbuf, _lib.ERRBUF_SIZE, ctypes.byref(part)
            )
            if rc >= 0 and handle.value:
                self.args = args
                self.pid = a.pid(handle.value)
                self._handle = handle.value
                self._closed = False
        except BaseException:
            # A KeyboardInterrupt can land right after the C call returned:
            # the child exists but nobody would own it. Abort and reap it.
            if handle.value and self._closed:
                a.release(handle.value)
            raise
        if self._closed:
            detail = errbuf.value.decode(errors="replace")
            raise _spawn_error(rc, detail, part.value, args[0], cwd)

    # ---- state ---------------------------------------------------------

    def poll(self) -> Optional[Result]:
        """The result if final, else None. Never blocks."""
        with self._lock:
            if self._result is not None or self._closed:
                return self._result
            if check(self._api.poll(self._handle, 0), "sup_poll") != 1:
                return None
            self._result = from_handle(
                self._api, self._handle, self.args, self.pid, self._json
            )
            return self._result

    def _fetch_json(self) -> Optional[bytes]:
        with self._lock:
            if self._closed:
                return None  # close() stashed it first
            return self._api.result(self._handle)

    @property
    def returncode(self) -> Optional[int]:
        """The exit code once the child has exited by itself, else None."""
        r = self.poll()
        return None if r is None else r.returncode

    def interrupt(self) -> None:
        """Graceful stop: the interrupt signal to the group, SIGKILL after grace.

        Any thread, any time; no effect once the result is final.
        """
        with self._lock:
            if not self._closed:
                check(self._api.interrupt(self._handle), "sup_interrupt")

    def abort(self) -> None:
        """Hard stop: SIGKILL to the group now. Any thread; no effect once final."""
        with self._lock:
            if not self._closed:
                check(self._api.abort(self._handle), "sup_abort")

    def _dup(self, stream: int = 0) -> Optional[int]:
        """A private dup of sup_fd (stream 0) or sup_output_fd, or None if closed."""
        with self._lock:
            if self._closed:
                return None
            if stream:
                fd = check(self._api.output_fd(self._handle, stream), "sup_output_fd")
            else:
                fd = check(self._api.fd(self._handle), "sup_fd")
            return os.dup(fd)  # close-on-exec, ours to close

    # ---- waiting -------------------------------------------------------

    def wait(self, timeout: Optional[float] = None) -> Result:
        """Wait for the final result.

        Raises subprocess.TimeoutExpired if it is not final within ``timeout``
        seconds (the child keeps running). Ctrl-C interrupts the wait (and
        not the child: ``sup.run`` does that).
        """
        r = self.poll()
        if r is not None:
            return r
        deadline = None if timeout is None else time.monotonic() + timeout
        fd = self._dup()
        if fd is None:  # closed meanwhile by another thread: final
            r = self.poll()
            assert r is not None
            return r
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while True:
                ms: Optional[int] = None
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise subprocess.TimeoutExpired(self.args, timeout)  # type: ignore[arg-type]
                    ms = math.ceil(left * 1000)
                poller.poll(ms)
                r = self.poll()
                if r is not None:
                    return r
        finally:
            os.close(fd)

    async def wait_async(self) -> Result:
        """Await the final result on the running event loop, without a thread.

        Cancelling the awaiting task stops the wait, not the child.
        """
        r = self.poll()
        if r is not None:
            return r
        loop = asyncio.get_running_loop()
        fd = self._dup()
        if fd is None:
            r = self.poll()
            assert r is not None
            return r
        try:
            while True:
                await _readable(loop, fd)
                r = self.poll()
                if r is not None:
                    return r
        finally:
            os.close(fd)

    # ---- live output ---------------------------------------------------

    def _read_chunk(
        self,
        stream: int,
        pos: ctypes.c_uint64,
        buf: ctypes.Array[ctypes.c_char],
        n: ctypes.c_size_t,
    ) -> Optional[tuple[bool, bytes]]:
        """(final before the read, bytes read), or None once closed."""
        with self._lock:
            if self._closed:
                return None
            final = check(self._api.poll(self._handle, 0), "sup_poll") == 1
            check(
                self._api.output_read(
                    self._handle, stream, ctypes.byref(pos), buf, len(buf), ctypes.byref(n)
                ),
                "sup_output_read",
            )
            return final, ctypes.string_at(buf, n.value)

    def iter_output(self, stream: StreamName = "stdout") -> Iterator[bytes]:
        """Yield the bytes the child writes to ``stream`` as they come.

        Ends when the result is final and everything was read. Starts from the
        first byte kept. Blocks between chunks on the library's readiness fd
        (Ctrl-C works). One reader per stream; if output outruns the
        ``max_output`` limit, the dropped middle is skipped.
        """
        s = _stream(stream)
        fd = self._dup(s)
        if fd is None:
            return
        pos, n = ctypes.c_uint64(0), ctypes.c_size_t(0)
        buf = ctypes.create_string_buffer(_CHUNK)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while True:
                got = self._read_chunk(s, pos, buf, n)
                if got is None:
                    return
                final, data = got
                if data:
                    yield data
                elif final:
                    return
                else:
                    poller.poll()
        finally:
            os.close(fd)

    async def aiter_output(self, stream: StreamName = "stdout") -> AsyncIterator[bytes]:
        """iter_output for asyncio: waits on the event loop, no thread."""
        s = _stream(stream)
        loop = asyncio.get_running_loop()
        fd = self._dup(s)
        if fd is None:
            return
        pos, n = ctypes.c_uint64(0), ctypes.c_size_t(0)
        buf = ctypes.create_string_buffer(_CHUNK)
        try:
            while True:
                got = self._read_chunk(s, pos, buf, n)
                if got is None:
                    return
                final, data = got
                if data:
                    yield data
                elif final:
                    return
                else:
                    await _readable(loop, fd)
        finally:
            os.close(fd)

    # ---- lifetime ------------------------------------------------------

    def close(self) -> None:
        """Abort the child if it still runs, reap it, free the handle. Idempotent.

        Any thread; waits blocked in other threads return the (aborted) result.
        """
        with self._lock:
            if self._closed:
                return
            a, h = self._api, self._handle
            try:
                if check(a.poll(h, 0), "sup_poll") != 1:
                    check(a.abort(h), "sup_abort")
                    # SIGKILL to the group: final within milliseconds, bounded
                    # by the library even if something holds the pipes.
                    check(a.poll(h, -1), "sup_poll")
                if self._result is None:
                    self._result = from_handle(a, h, self.args, self.pid, self._json)
                self._json.stash(lambda: a.result(h))
            finally:
                self._closed = True
                self._handle = 0
                a.release(h)

    def __enter__(self) -> Popen:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __del__(self) -> None:
        h = getattr(self, "_handle", 0)
        if not h or getattr(self, "_closed", True):
            return
        try:
            if self._api.poll(h, 0) != 1:
                warnings.warn(
                    f"sup: child {self.pid} still running when its Popen was "
                    "collected: aborted (use a with-block or close())",
                    ResourceWarning,
                    source=self,
                )
            if self._result is not None:
                self._json.stash(lambda: self._api.result(h))
            self._closed = True
            self._handle = 0
            self._api.release(h)
        except Exception:  # interpreter shutdown: the library reaps at exit
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<sup.Popen pid={getattr(self, 'pid', None)} args={getattr(self, 'args', None)!r} {state}>"


def run(
    args: Sequence[StrOrBytesPath],
    *,
    idle_timeout: Optional[float] = None,
    timeout: Optional[float] = None,
    grace: Optional[float] = None,
    signal: Union[int, str, None] = None,
    kill_on_timeout: bool = False,
    input: Optional[bytes] = None,
    stdin: Optional[Stdin] = None,
    cwd: Optional[StrOrBytesPath] = None,
    env: Optional[Mapping[Union[str, bytes], EnvValue]] = None,
    max_output: Optional[int] = None,
    backpressure: Optional[int] = None,
) -> Result:
    """Run ``args`` under supervision and return its final :class:`Result`.

    Timeouts do not raise: they end the child (interrupt signal, SIGKILL after
    ``grace``; at once with ``kill_on_timeout``) and show in ``outcome``, with
    the output captured until then. A KeyboardInterrupt interrupts the child
    gracefully, waits for its final result (a second Ctrl-C aborts it), and is
    re-raised.

    Keywords: ``idle_timeout`` seconds of silence on stdout and stderr both;
    ``timeout`` maximum runtime in seconds; ``grace`` seconds between the
    interrupt signal and SIGKILL (library default 5); ``signal`` the interrupt
    signal (number or name, default SIGTERM); ``input`` bytes for stdin, or
    ``stdin=sup.INHERIT`` (default /dev/null); ``cwd``; ``env`` variables to
    set (a None value removes one; the rest is inherited); ``max_output``
    bytes kept per stream (head and newest tail; default 16 MiB);
    ``backpressure`` bytes a live reader may fall behind before the child is
    held back (default: never held back).
    """
    with Popen(
        args,
        idle_timeout=idle_timeout,
        timeout=timeout,
        grace=grace,
        signal=signal,
        kill_on_timeout=kill_on_timeout,
        input=input,
        stdin=stdin,
        cwd=cwd,
        env=env,
        max_output=max_output,
        backpressure=backpressure,
    ) as p:
        try:
            return p.wait()
        except KeyboardInterrupt:
            p.interrupt()
            try:
                p.wait()
            except KeyboardInterrupt:
                p.abort()  # the second Ctrl-C; close() reaps
            raise

