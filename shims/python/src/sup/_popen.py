"""Popen and run: a supervised child with subprocess's interface.

Waiting never parks a thread in the library: ``wait()`` polls a private dup
of ``sup_fd`` with ``select.poll`` (interruptible by Ctrl-C, woken the moment
the result is final, by the child ending or by ``abort()`` from any thread),
``wait_async()`` hands such a dup to the event loop with ``loop.add_reader``.
Every C call is short and non-blocking. The library's handle is a
:class:`_lib.Handle` shared with the Results read from it and released when
the last of them goes, so no call can be under way when it is released.
"""

from __future__ import annotations

import asyncio
import errno as _errno
import io
import locale
import math
import os
import select
import signal as _signal
import threading
import time
import warnings
import ctypes
from collections import abc as _abc
from types import GenericAlias, TracebackType
from typing import (
    IO,
    Any,
    AnyStr,
    AsyncIterator,
    Collection,
    Dict,
    Iterable,
    Generic,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
    cast,
)

from . import _lib, _spec
from ._errors import (
    CalledProcessError,
    SpecError,
    SpecTypeError,
    SupError,
    TimeoutExpired,
    OutputGap,
    check,
    os_error,
    spec_error_from_detail,
)
from ._result import CompletedProcess, Outcome, Result, from_handle
from ._spec import PIPE, STDOUT, Env, EnvUpdate, StdioArg, StrOrBytesPath
from ._streams import (
    OutputReader,
    Source,
    StdinWriter,
    TextOutputReader,
    decode_cut,
    gap_mark,
    readable,
)

StreamName = Literal["stdout", "stderr"]
#: What args= accepts, as typeshed types subprocess's: one program (a str,
#: bytes or path; with shell=True, a command line) or a sequence of them.
Args = Union[StrOrBytesPath, Sequence[StrOrBytesPath]]
_STREAMS = {"stdout": _lib.STDOUT, "stderr": _lib.STDERR}
_FEED = 1 << 16  # bytes per non-blocking write in communicate()


def _stream(stream: str) -> int:
    try:
        return _STREAMS[stream]
    except (KeyError, TypeError):
        raise ValueError(f"stream: must be 'stdout' or 'stderr', not {stream!r}") from None


def _spawn_error(code: int, detail: str, part: int, argv0: object, cwd: object) -> Exception:
    if code == _lib.EBADF:
        # A file or descriptor given (stdio, pass_fds) is not open: subprocess's
        # child fails on it with EBADF too.
        return os_error(code, detail)
    if part == _lib.PART_SPEC or (code == _lib.EINVAL and detail.startswith("spec")):
        return spec_error_from_detail(detail)
    if code <= _lib.EINTERNAL:
        return SupError(code, detail or "internal error in libsup")
    if part == _lib.PART_EXEC:
        if cwd is not None and not os.path.isdir(cwd):  # type: ignore[arg-type]
            # subprocess's child changes directory before it execs: a bad
            # cwd is what it reports, whatever the program.
            return os_error(-(_errno.ENOENT if not os.path.exists(cwd) else _errno.ENOTDIR), detail, cwd)  # type: ignore[arg-type]
        return os_error(code, detail, argv0)
    if part == _lib.PART_CWD:
        return os_error(code, detail, cwd)
    return os_error(code, detail)


def _returncode(r: Result) -> int:
    # A lost status (the host reaped the child itself) reads as 0, as
    # subprocess reports ECHILD; r.status_lost says so.
    return 0 if r.returncode is None else r.returncode


def _text_codec(
    text: Optional[bool],
    encoding: Optional[str],
    errors: Optional[str],
    universal_newlines: Optional[bool],
) -> Optional[Tuple[str, str]]:
    """(encoding, errors) in text mode, else None: subprocess's rule."""
    if not (text or encoding or errors or universal_newlines):
        return None
    return (encoding or locale.getpreferredencoding(False), errors or "strict")


def _decode(
    data: bytes, codec: Optional[Tuple[str, str]], cut: Optional[int] = None, skipped: int = 0
) -> Any:
    """A whole stream as run() returns it: bytes, or text decoded as
    subprocess does; where max_output dropped ``skipped`` bytes after
    ``cut``, the gap is marked (:func:`_streams.gap_mark`)."""
    if codec is None:
        if skipped and cut is not None:
            return data[:cut] + gap_mark(skipped) + data[cut:]
        return data
    text = decode_cut(data, cut, skipped, *codec)
    return text.replace("\r\n", "\n").replace("\r", "\n")


_REFUSED = "sup runs the child itself"


def _subprocess_keywords(kw: Dict[str, Any]) -> None:
    """subprocess.Popen's keywords that sup takes only at the value where
    they mean what sup does anyway (so that code spelling them out runs);
    any other value is a TypeError naming the keyword and why."""
    why = {
        "executable": (None, "argv[0] is the program sup runs"),
        "preexec_fn": (None, "no Python runs in sup's child between fork and exec"),
        "start_new_session": (False, "sup's child leads a process group of its own, not a session (pty=True gives a session)"),
        "process_group": (0, "sup's child leads a process group of its own: process_group=0 is what it does"),
        "umask": (-1, "sup's child keeps the host's umask"),
        "pipesize": (-1, "sup sizes its pipes itself"),
        "startupinfo": (None, "Windows only"),
        "creationflags": (0, "Windows only"),
    }
    for key, value in kw.items():
        ok, reason = why[key]
        if value is None or value == ok:
            continue
        if key == "process_group" and value is not None and value != 0:
            raise SpecTypeError(f"process_group: only 0 (or None): {reason}, not {value!r}")
        raise SpecTypeError(f"{key}: {value!r} is not supported: {reason}")


class Popen(Generic[AnyStr]):
    """A child running under supervision, with subprocess.Popen's interface.

    ``stdin``/``stdout``/``stderr`` take ``PIPE``, ``DEVNULL``, ``STDOUT``
    (stderr only), ``None`` (the default: the host's descriptor itself, as
    in subprocess; with ``idle_timeout``/``first_output_timeout`` the output
    is copied there by sup, which must see it),
    ``sup.INHERIT`` (the host's descriptor, never copied), or a file object
    with ``fileno()`` or a descriptor number (that descriptor itself, as
    subprocess gives it). ``pass_fds`` passes descriptors at their own
    numbers; ``close_fds=False`` passes every inheritable one, as fork and
    exec would; ``user``/``group``/``extra_groups`` (names or numbers; a
    privileged host) as in subprocess; ``restore_signals=False`` keeps the
    signals the host ignores ignored (True, the default: every signal at
    its default, a superset of subprocess's SIGPIPE and SIGXFSZ).
    subprocess's other keywords are taken at the values that mean what sup
    does (``bufsize``, ``process_group=0``, ...); another value raises
    :class:`sup.SpecTypeError` (a TypeError) saying why. Every byte
    is kept unless ``max_output`` caps it. With ``PIPE``, ``p.stdin`` is a
    writable and ``p.stdout``/``p.stderr`` readable file objects (text with
    ``text=True``/``encoding``/``errors``). ``env`` is the child's whole
    environment, as in subprocess; ``env_update`` changes the inherited one.

    sup's keywords: ``idle_timeout``, ``first_output_timeout``,
    ``max_runtime``, ``grace``, ``signal``, ``kill_on_timeout``,
    ``max_output``, ``backpressure``, ``pty``, ``contain``, ``require_sentinel``,
    ``cgroup_parent``, ``input`` (bytes written to stdin by the library),
    ``input_wait_timeout``, ``limits``, ``sandbox``, ``kill_on_exit``: see
    :func:`sup.run`; :meth:`input_wanted` says whether the child waits for
    input. ``tty_foreground=True`` (the
    default of run(), call() and the other functions that wait): an
    inherited stdin that is the terminal of a host in its foreground is
    handed to the child while it runs, so that it can read it; the host
    must not read the terminal meanwhile (it would stop). A child given the
    host's controlling terminal as stdin without it cannot read it (it runs
    in a group of its own, not the foreground) and would stop forever on
    SIGTTIN/SIGTTOU: unless ``input_wait_timeout`` is given (``math.inf``:
    leave it stopped), sup ends it once stopped 0.2 s (returncode -15,
    ``result.phase`` "input") and warns (RuntimeWarning). Any other child
    (``stdin=PIPE``, ``DEVNULL``, a file, ``input``) of a host whose session
    has a controlling terminal may open it itself (``/dev/tty``: sudo, ssh)
    and stop the same way: unless ``tty_stop_timeout`` or
    ``input_wait_timeout`` is given (``math.inf``: leave it stopped), sup
    ends it once its main process has been stopped so 0.2 s, and warns; a
    child waiting on its stdin pipe is never ended by this.
    ``tty_stop_timeout``: seconds the main process may stay stopped by
    SIGTTIN/SIGTTOU before sup ends it (as ``input_wait_timeout`` does). With ``pty``, ``stdin=PIPE``
    types into the terminal and ``stdout=PIPE`` reads it; ``stderr`` goes
    to the terminal too (None or STDOUT).

    Leaving a ``with`` block closes the pipes and waits for the child, as
    subprocess does (with ``kill_on_exit=True`` it aborts the child first;
    leaving on a KeyboardInterrupt interrupts it first, on a cancelled
    ``async with`` aborts it); an exception while waiting there aborts it. :meth:`close` aborts a child
    still running and reaps it; the result stays available afterwards.
    """

    args: Args
    pid: int
    #: Popen[bytes] / Popen[str] in annotations, as subprocess.Popen.
    __class_getitem__ = classmethod(GenericAlias)  # type: ignore[var-annotated]
    stdin: Optional[IO[Any]]
    stdout: Optional[IO[Any]]
    stderr: Optional[IO[Any]]

    def __init__(
        self: "Popen[Any]",
        args: Args,
        bufsize: Optional[int] = -1,
        executable: Optional[StrOrBytesPath] = None,
        stdin: StdioArg = None,
        stdout: StdioArg = None,
        stderr: StdioArg = None,
        preexec_fn: Optional[Any] = None,
        close_fds: bool = True,
        shell: Any = False,
        *,
        cwd: Optional[StrOrBytesPath] = None,
        env: Optional[Env] = None,
        env_update: Optional[EnvUpdate] = None,
        text: Optional[bool] = None,
        encoding: Optional[str] = None,
        errors: Optional[str] = None,
        universal_newlines: Optional[bool] = None,
        input: Union[bytes, str, None] = None,
        idle_timeout: Optional[float] = None,
        first_output_timeout: Optional[float] = None,
        max_runtime: Optional[float] = None,
        grace: Optional[float] = None,
        signal: Union[int, str, None] = None,
        kill_on_timeout: bool = False,
        kill_on_exit: bool = False,
        max_output: Optional[int] = None,
        backpressure: Optional[int] = None,
        pty: Union[bool, Tuple[int, int]] = False,
        contain: Optional[str] = None,
        cgroup_parent: Optional[StrOrBytesPath] = None,
        tty_foreground: bool = False,
        require_sentinel: bool = False,
        pass_fds: Collection[int] = (),
        restore_signals: bool = True,
        start_new_session: bool = False,
        process_group: Optional[int] = None,
        user: Union[str, bytes, int, None] = None,
        group: Union[str, bytes, int, None] = None,
        extra_groups: Optional[Iterable[Union[str, bytes, int]]] = None,
        umask: int = -1,
        pipesize: int = -1,
        startupinfo: Optional[Any] = None,
        creationflags: int = 0,
        input_wait_timeout: Optional[float] = None,
        limits: Union[_spec.Limits, Mapping[str, Any], None] = None,
        sandbox: Union[_spec.Sandbox, Mapping[str, Any], None] = None,
        tty_stop_timeout: Optional[float] = None,
    ) -> None:
        self._h: Optional[_lib.Handle] = None  # first, for __del__ on a failed spawn
        self._terminal_guard: Optional[str] = None
        self._result: Optional[Result] = None
        self._sources: Dict[int, Source] = {}
        self._lock = threading.RLock()  # re-entrant: abort() from a signal handler
        self.stdin = self.stdout = self.stderr = None
        self._stdin_raw: Optional[StdinWriter] = None
        self._readers: List[Optional[Union[OutputReader, TextOutputReader]]] = [None, None]
        self._comm: List[List[Any]] = [[], []]  # what communicate() read before a TimeoutExpired
        self._comm_view: Optional[memoryview] = None  # input it had not sent yet
        self._codec = _text_codec(text, encoding, errors, universal_newlines)
        self._communication_started = False
        self._subprocess_keywords = dict(
            executable=executable, preexec_fn=preexec_fn, start_new_session=start_new_session,
            process_group=process_group,
            umask=umask, pipesize=pipesize, startupinfo=startupinfo, creationflags=creationflags,
        )
        _subprocess_keywords(self._subprocess_keywords)
        if pass_fds and not close_fds:
            warnings.warn("pass_fds overriding close_fds.", RuntimeWarning, stacklevel=2)
            close_fds = True  # as subprocess: only the listed ones
        fds = _spec.fds_of(pass_fds, close_fds)
        if bufsize is None:
            bufsize = -1  # as subprocess
        if isinstance(bufsize, bool) or not isinstance(bufsize, int):
            raise SpecTypeError(f"bufsize: must be an int, not {bufsize!r}")
        if bufsize == 1 and self._codec is None:
            warnings.warn(
                "line buffering (buffering=1) isn't supported in binary mode, "
                "the default buffer size will be used",
                RuntimeWarning,
                stacklevel=2,
            )
        # The cut of a capped stream: the library keeps the first half.
        self._cut = None if max_output is None else max_output // 2
        self._kill_on_exit = bool(kill_on_exit)
        self._routes = (stdin, stdout, stderr)
        self._pty = pty is not False
        if isinstance(input, str):
            if self._codec is None:
                raise TypeError("input: a str needs text=True (or encoding=/errors=); pass bytes")
            input = input.encode(*self._codec)
        argv = _spec.argv(args, shell)
        # A child that cannot have the host's terminal ends at once on
        # stopping on it instead of stopping forever (see terminal_stop_guard).
        self._terminal_guard = _spec.terminal_stop_guard(
            stdin, input, pty, tty_foreground, input_wait_timeout, tty_stop_timeout
        )
        if self._terminal_guard == _spec.GUARD_STDIN_TERMINAL:
            input_wait_timeout = _spec.TERMINAL_STOP_WAIT
        elif self._terminal_guard == _spec.GUARD_OPENED_TERMINAL:
            # Only a stop on the terminal: a reader waiting on its stdin
            # pipe runs on, as subprocess code may leave it on purpose.
            tty_stop_timeout = _spec.TERMINAL_STOP_WAIT
        spec = _spec.build(
            argv,
            idle_timeout=idle_timeout,
            first_output_timeout=first_output_timeout,
            max_runtime=max_runtime,
            grace=grace,
            signal=signal,
            kill_on_timeout=kill_on_timeout,
            input=input,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pty=pty,
            cwd=cwd,
            env=env,
            env_update=env_update,
            max_output=max_output,
            backpressure=backpressure,
            contain=contain,
            cgroup_parent=cgroup_parent,
            require_sentinel=require_sentinel,
            tty_foreground=tty_foreground,
            input_wait_timeout=input_wait_timeout,
            tty_stop_timeout=tty_stop_timeout,
            fds=fds,
            # subprocess's child keeps what the host ignores but PIPE and
            # XFSZ (restore_signals=True); sup's starts with every signal at
            # its default, which covers those two: only False needs asking.
            keep_ignored_signals=not restore_signals,
            user=user,
            group=group,
            groups=extra_groups,
            limits=limits,
            sandbox=sandbox,
        )
        a = self._api = _lib.api()
        handle = ctypes.c_void_p(None)
        errbuf = ctypes.create_string_buffer(_lib.ERRBUF_SIZE)
        part = ctypes.c_int(0)
        try:
            rc = a.spawn_v2(spec, ctypes.byref(handle), errbuf, _lib.ERRBUF_SIZE, ctypes.byref(part))
            if rc >= 0 and handle.value:
                self._h = _lib.Handle(a, handle.value)
        except BaseException:
            # A KeyboardInterrupt can land right after the C call returned:
            # the child exists but nobody would own it. Abort and reap it.
            if handle.value and self._h is None:
                a.release(handle.value)
            raise
        if self._h is None:
            detail = errbuf.value.decode(errors="replace")
            raise _spawn_error(rc, detail, part.value, argv[0], cwd)
        if isinstance(args, (str, bytes, os.PathLike, _abc.Sequence)):
            self.args = args  # as given, as subprocess keeps it
        else:
            self.args = argv[2:] if shell else argv  # an iterator: read once, kept as a list
        self.pid = a.pid(self._h.ptr)
        if stdin == PIPE:
            raw = self._stdin_raw = StdinWriter(self._h)
            if bufsize == 0 and self._codec is None:
                self.stdin = cast(IO[Any], raw)  # unbuffered, as subprocess's bufsize=0
            else:
                w = io.BufferedWriter(raw, bufsize if bufsize > 1 else io.DEFAULT_BUFFER_SIZE)
                self.stdin = (
                    w
                    if self._codec is None
                    else io.TextIOWrapper(
                        w, encoding=self._codec[0], errors=self._codec[1],
                        write_through=True, line_buffering=bufsize == 1,
                    )
                )
        if stdout == PIPE:
            self.stdout = self._reader(_lib.STDOUT)
        if stderr == PIPE and not self._pty:
            self.stderr = self._reader(_lib.STDERR)

    def _source(self, stream: int) -> Optional[Source]:
        with self._lock:
            src = self._sources.get(stream)
            if src is None and self._h is not None:
                src = self._sources[stream] = Source(self._h, stream, "stdout" if stream == 1 else "stderr")
            return src

    def _reader(self, stream: int) -> IO[Any]:
        src = self._source(stream)
        assert src is not None
        f: Union[OutputReader, TextOutputReader]
        if self._codec is None:
            f = OutputReader(src)
        else:
            f = TextOutputReader(src, *self._codec)
        self._readers[stream - 1] = f
        return cast(IO[Any], f)

    # ---- state ---------------------------------------------------------

    def _final(self) -> Optional[Result]:
        """The Result if final, else None. Never blocks."""
        with self._lock:
            h = self._h
            if self._result is not None or h is None:
                return self._result
            if check(h.api.poll(h.ptr, 0), "sup_poll") != 1:
                return None
            r = self._result = from_handle(h, self.args, self.pid)
        if self._terminal_guard == _spec.GUARD_STDIN_TERMINAL and r.phase == "input":
            warnings.warn(
                f"sup: the child (pid {self.pid}) stopped on the host's terminal, which it "
                "reads or configures from a process group of its own without the "
                "terminal's foreground, and was ended instead of stopping forever "
                "(Popen(tty_foreground=True) hands it the terminal; "
                "input_wait_timeout=math.inf lets it stay stopped)",
                RuntimeWarning,
                stacklevel=3,
            )
        elif self._terminal_guard == _spec.GUARD_OPENED_TERMINAL and r.phase == "input":
            warnings.warn(
                f"sup: the child (pid {self.pid}) stopped on the host's terminal, which it "
                "opened itself (/dev/tty, as a password prompt does) from a process group "
                "of its own without the terminal's foreground, and was ended instead of "
                "stopping forever (stdin=None with tty_foreground=True hands it the "
                "terminal; tty_stop_timeout=math.inf lets it stay stopped)",
                RuntimeWarning,
                stacklevel=3,
            )
        return r

    @property
    def result(self) -> Optional[Result]:
        """sup's :class:`Result` once the child's end is final, else None."""
        return self._final()

    def poll(self) -> Optional[int]:
        """The returncode if the child has ended, else None. Never blocks."""
        r = self._final()
        return None if r is None else _returncode(r)

    @property
    def returncode(self) -> Optional[int]:
        """Exit code, or -N when signal N ended it; None while running."""
        return self.poll()

    def interrupt(self) -> None:
        """Graceful stop: the interrupt signal to the group, SIGKILL after grace.

        Any thread, any time; no effect once the result is final.
        """
        with self._lock:
            if self._h is not None:
                check(self._api.interrupt(self._h.ptr), "sup_interrupt")

    def abort(self) -> None:
        """Hard stop: SIGKILL to the group now. Any thread; no effect once final."""
        with self._lock:
            if self._h is not None:
                check(self._api.abort(self._h.ptr), "sup_abort")

    def input_wanted(self) -> bool:
        """True while the child (a process of its tree) waits for input it
        cannot get: asleep reading its stdin with nothing written lately, or
        stopped reading a terminal from the background (sup_input_wanted).
        False once the result is final. Raises PermissionError when sup may
        not look at a process of the tree (the answer is unknown). May block
        ~40 ms when it first sees a reader, to look twice."""
        with self._lock:
            h = self._h
            if h is None or self._result is not None:
                return False
            rc = h.api.input_wanted(h.ptr)
        if rc == _lib.ESRCH:
            return False  # final meanwhile: nothing waits any more
        return check(rc, "sup_input_wanted") == 1

    def kill(self) -> None:
        """subprocess's kill(): :meth:`abort` (SIGKILL to the whole group)."""
        self.abort()

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the child's process group (and main process).

        Listed in the result's signals, never changes the outcome; nothing
        happens once the child's end is final (as subprocess).
        """
        if isinstance(sig, bool) or not isinstance(sig, int) or not 0 <= sig <= 64:
            raise ValueError(f"sig: must be a signal number from 0 to 64, not {sig!r}")
        fn = self._api.signal
        with self._lock:
            if self._h is None:
                return
            rc = fn(self._h.ptr, int(sig))
        if rc != _lib.ESRCH:
            check(rc, "sup_signal")

    def terminate(self) -> None:
        """subprocess's terminate(): send_signal(SIGTERM), no escalation
        (:meth:`interrupt` escalates to SIGKILL after grace)."""
        self.send_signal(_signal.SIGTERM)

    def resize(self, rows: int, cols: int) -> None:
        """Set the pty's window size (``pty=``); the child gets SIGWINCH."""
        fn = self._api.pty_resize
        if not self._pty:
            raise ValueError("resize: the child has no pty (start it with pty=True)")
        for name, v in (("rows", rows), ("cols", cols)):
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 65535:
                raise ValueError(f"resize: {name} must be an int from 1 to 65535, not {v!r}")
        with self._lock:
            if self._h is None:
                return
            rc = fn(self._h.ptr, rows, cols)
        if rc != _lib.ESRCH:
            check(rc, "sup_pty_resize")

    def _dup(self) -> Optional[int]:
        """A private dup of sup_fd, or None if closed."""
        with self._lock:
            if self._h is None:
                return None
            return os.dup(check(self._api.fd(self._h.ptr), "sup_fd"))

    # ---- waiting -------------------------------------------------------

    def _wait_result(self, timeout: Optional[float] = None) -> Result:
        r = self._final()
        if r is not None:
            return r
        deadline = None if timeout is None else time.monotonic() + timeout
        fd = self._dup()
        if fd is None:  # closed meanwhile by another thread: final
            r = self._final()
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
                        raise TimeoutExpired(self.args, cast(float, timeout))
                    ms = math.ceil(left * 1000)
                poller.poll(ms)
                r = self._final()
                if r is not None:
                    return r
        finally:
            os.close(fd)

    def wait(self, timeout: Optional[float] = None) -> int:
        """Wait for the child's end and return its returncode.

        Raises :class:`sup.TimeoutExpired` (a subprocess.TimeoutExpired) if
        it has not ended within ``timeout`` seconds; the child keeps running.
        Ctrl-C interrupts the wait, not the child. The full record is
        :attr:`result` afterwards.
        """
        return _returncode(self._wait_result(timeout))

    async def _wait_result_async(self) -> Result:
        r = self._final()
        if r is not None:
            return r
        loop = asyncio.get_running_loop()
        fd = self._dup()
        if fd is None:
            r = self._final()
            assert r is not None
            return r
        try:
            while True:
                await readable(loop, fd)
                r = self._final()
                if r is not None:
                    return r
        finally:
            os.close(fd)

    async def wait_async(self) -> int:
        """Await the returncode on the running event loop, without a thread.

        Cancelling the awaiting task stops the wait, not the child.
        """
        return _returncode(await self._wait_result_async())

    def communicate(
        self, input: Union[bytes, str, None] = None, timeout: Optional[float] = None
    ) -> Tuple[Any, Any]:
        """Send ``input`` to stdin (then close it), wait for the end, and
        return ``(stdout, stderr)``: what is left to read of each stream
        given ``PIPE`` (bytes, or str in text mode), None for the others.

        Where the child wrote more than ``max_output``, a stream's data is
        the kept head and newest tail (``result.stdout_omitted`` counts the
        rest). Raises :class:`sup.TimeoutExpired` after ``timeout`` seconds,
        the child running on; calling again goes on where it stopped.
        """
        if input is not None and self.stdin is None:
            raise ValueError("communicate: input needs stdin=PIPE")
        if self._communication_started and input:
            raise ValueError("Cannot send input after starting communication")
        self._communication_started = True
        deadline = None if timeout is None else time.monotonic() + timeout
        view, self._comm_view = self._comm_view or memoryview(b""), None
        if self.stdin is not None and not self.stdin.closed and not view:
            try:
                self.stdin.flush()
            except BrokenPipeError:
                pass
            if input:
                data = input.encode(*self._codec) if isinstance(input, str) and self._codec else input
                if not isinstance(data, (bytes, bytearray, memoryview)):
                    raise TypeError("communicate: input must be bytes (or str in text mode)")
                view = memoryview(bytes(data))
            if not view:
                self._close_stdin()
        readers = [self._readers[0], self._readers[1]]
        raw = self._stdin_raw
        while True:
            final = self._final() is not None
            # Output is read as it comes: with backpressure the child waits for it.
            for i, f in enumerate(readers):
                if f is not None and not f.closed:
                    self._comm[i].append(f.drain(False))
            if view and raw is not None:
                try:
                    n = raw.write_nowait(view[:_FEED])
                    if n:
                        view = view[n:]
                except BrokenPipeError:
                    view = memoryview(b"")  # the child does not read it all: as subprocess
                if not view:
                    self._close_stdin()
            if final and not view:
                break
            ms = None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._comm_view = view  # the rest goes with the next communicate()
                    # The bytes so far, as subprocess gives them (bytes even
                    # in text mode); kept for the next call too.
                    so_far = [self._so_far(parts) for parts in self._comm]
                    raise TimeoutExpired(self.args, cast(float, timeout), so_far[0], so_far[1])
                ms = math.ceil(left * 1000)
            self._poll_any(ms, raw if view else None)
        result: List[Any] = [None, None]
        for i, f in enumerate(readers):
            if f is None:
                continue
            if not f.closed:
                self._comm[i].append(f.drain(True))
                f.close()
            parts, self._comm[i] = self._comm[i], []
            result[i] = ("" if self._codec else b"").join(parts)
        return result[0], result[1]

    def _so_far(self, parts: List[Any]) -> Optional[bytes]:
        data = [p.encode(*self._codec) if isinstance(p, str) and self._codec else p for p in parts]
        joined = b"".join(data)
        return joined or None

    def _close_stdin(self) -> None:
        if self.stdin is not None:
            try:
                self.stdin.close()
            except BrokenPipeError:
                pass

    def _poll_any(self, ms: Optional[int], stdin: Optional[StdinWriter]) -> None:
        fds = []
        d = self._dup()
        if d is None:
            return
        fds.append(d)
        try:
            poller = select.poll()
            poller.register(d, select.POLLIN)
            for f in self._readers:
                if f is not None and not f.closed:
                    poller.register(f.fileno_for_poll(), select.POLLIN)
            if stdin is not None:
                poller.register(stdin.fileno_for_poll(), select.POLLOUT)
            poller.poll(ms)
        finally:
            os.close(d)

    # ---- live output ---------------------------------------------------

    def iter_output(self, stream: StreamName = "stdout") -> Iterator[bytes]:
        """Yield the bytes the child writes to ``stream`` as they come.

        Ends when the result is final and everything was read; the position
        is the stream's own (shared with ``p.stdout``/``p.stderr``: one
        reader per stream). Raises :class:`sup.OutputGap` once where the
        reader fell behind ``max_output``; a new ``iter_output`` goes on
        after the gap. Works whatever the routing sup captured (``PIPE`` or
        ``None``).
        """
        src = self._source(_stream(stream))
        if src is None:
            return
        while True:
            got = src.next(True)
            if got is None:
                return
            if isinstance(got, int):
                raise OutputGap(src.name, got)
            yield got

    async def aiter_output(self, stream: StreamName = "stdout") -> AsyncIterator[bytes]:
        """iter_output for asyncio: waits on the event loop, no thread."""
        src = self._source(_stream(stream))
        if src is None:
            return
        while True:
            got = await src.next_async()
            if got is None:
                return
            if isinstance(got, int):
                raise OutputGap(src.name, got)
            yield got

    # ---- lifetime ------------------------------------------------------

    def close(self) -> None:
        """Abort the child if it still runs, reap it, close the pipes. Idempotent.

        Any thread; waits blocked in other threads return. The library's
        handle is freed when the last :class:`Result` read from it goes.
        """
        with self._lock:
            h = self._h
            if h is None:
                return
            try:
                if check(h.api.poll(h.ptr, 0), "sup_poll") != 1:
                    check(h.api.abort(h.ptr), "sup_abort")
                    # SIGKILL to the group: final within milliseconds, bounded
                    # by the library even if something holds the pipes.
                    check(h.api.poll(h.ptr, -1), "sup_poll")
                if self._result is None:
                    self._result = from_handle(h, self.args, self.pid)
            finally:
                self._h = None
                sources = list(self._sources.values())
        for f in (self.stdin, self.stdout, self.stderr):
            if f is not None:
                try:
                    f.close()
                except (BrokenPipeError, ValueError):
                    pass
        for src in sources:
            src.close()

    def __enter__(self) -> Popen[AnyStr]:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        try:
            for f in (self.stdout, self.stderr):
                if f is not None:
                    f.close()
            if self.stdin is not None:
                try:
                    self.stdin.close()
                except BrokenPipeError:
                    pass
            if self._kill_on_exit:
                self.abort()
            elif exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
                # The child, in a group of its own, did not get the Ctrl-C:
                # pass it on gracefully, as run() does, then wait.
                self.interrupt()
            self._wait_result()
        finally:
            self.close()  # aborts only a child still running (Ctrl-C in the wait)

    async def __aenter__(self) -> Popen[AnyStr]:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        try:
            for f in (self.stdout, self.stderr):
                if f is not None:
                    f.close()
            if self.stdin is not None:
                try:
                    self.stdin.close()
                except BrokenPipeError:
                    pass
            if self._kill_on_exit or (
                exc_type is not None and issubclass(exc_type, asyncio.CancelledError)
            ):
                self.abort()  # a cancelled task does not wait, as run_async
            elif exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
                self.interrupt()
            await self._wait_result_async()
        finally:
            self.close()

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h is None:
            return
        try:
            if h.api.poll(h.ptr, 0) != 1:
                warnings.warn(
                    f"sup: child {self.pid} still running when its Popen was "
                    "collected: aborted (use a with-block or close())",
                    ResourceWarning,
                    source=self,
                )
                h.api.abort(h.ptr)
        except Exception:  # interpreter shutdown: the library reaps at exit
            pass

    def __repr__(self) -> str:
        state = "closed" if self._h is None else "open"
        return f"<sup.Popen pid={getattr(self, 'pid', None)} args={getattr(self, 'args', None)!r} {state}>"


def _run_popen(
    args: Args,
    stdin: StdioArg,
    input: Union[bytes, str, None],
    stdout: StdioArg,
    stderr: StdioArg,
    capture_output: bool,
    timeout: Optional[float],
    max_runtime: Optional[float],
    kw: Dict[str, Any],
) -> Popen[Any]:
    if capture_output:
        if stdout is not None or stderr is not None:
            raise ValueError("stdout and stderr arguments may not be used with capture_output.")
        stdout = stderr = PIPE
    if timeout is not None and max_runtime is not None:
        raise SpecError("timeout: give timeout (raises TimeoutExpired) or max_runtime (returns), not both")
    _spec.seconds_ms(timeout, "timeout", False)  # named as the caller named it
    # run() waits without reading the terminal: the child may have it.
    kw.setdefault("tty_foreground", True)
    p = Popen(
        args,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        input=input,
        max_runtime=timeout if timeout is not None else max_runtime,
        **kw,
    )
    if p.stdin is not None:
        p.stdin.close()  # as subprocess.run: nothing to send but input
    return p


def _completed(p: Popen[Any], r: Result, timeout: Optional[float], check: bool) -> CompletedProcess:
    routes = p._routes
    piped = (routes[1] == PIPE, routes[2] == PIPE and not p._pty)
    rc = _returncode(r)
    if timeout is not None and r.outcome is Outcome.MAX_RUNTIME:
        # Bytes, as subprocess.run gives them even with text=True.
        raise TimeoutExpired(
            p.args, timeout,
            _decode(r.stdout, None, p._cut, r.stdout_omitted) if piped[0] else None,
            _decode(r.stderr, None, p._cut, r.stderr_omitted) if piped[1] else None,
            r,
        )
    out = _decode(r.stdout, p._codec, p._cut, r.stdout_omitted) if piped[0] else None
    err = _decode(r.stderr, p._codec, p._cut, r.stderr_omitted) if piped[1] else None
    if check and rc:
        raise CalledProcessError(rc, p.args, out, err, r)
    return CompletedProcess(p.args, rc, out, err, r)


def run(
    args: Args,
    *,
    stdin: StdioArg = None,
    input: Union[bytes, str, None] = None,
    stdout: StdioArg = None,
    stderr: StdioArg = None,
    capture_output: bool = False,
    shell: Any = False,
    cwd: Optional[StrOrBytesPath] = None,
    timeout: Optional[float] = None,
    check: bool = False,
    encoding: Optional[str] = None,
    errors: Optional[str] = None,
    text: Optional[bool] = None,
    env: Optional[Env] = None,
    env_update: Optional[EnvUpdate] = None,
    universal_newlines: Optional[bool] = None,
    idle_timeout: Optional[float] = None,
    first_output_timeout: Optional[float] = None,
    max_runtime: Optional[float] = None,
    grace: Optional[float] = None,
    signal: Union[int, str, None] = None,
    kill_on_timeout: bool = False,
    max_output: Optional[int] = None,
    backpressure: Optional[int] = None,
    pty: Union[bool, Tuple[int, int]] = False,
    contain: Optional[str] = None,
    cgroup_parent: Optional[StrOrBytesPath] = None,
    require_sentinel: bool = False,
    tty_foreground: bool = True,
    input_wait_timeout: Optional[float] = None,
    limits: Union[_spec.Limits, Mapping[str, Any], None] = None,
    sandbox: Union[_spec.Sandbox, Mapping[str, Any], None] = None,
    **popen_kwargs: Any,
) -> CompletedProcess:
    """Run ``args`` under supervision; subprocess.run's keywords and meanings.

    Returns a :class:`sup.CompletedProcess` (a subprocess.CompletedProcess)
    whose ``result`` is sup's :class:`Result`. ``timeout`` ends the child and
    raises :class:`sup.TimeoutExpired` with the output so far; ``check``
    raises :class:`sup.CalledProcessError` for a returncode other than 0.
    The child is ended by sup's escalation: the interrupt ``signal`` (default
    SIGTERM) to its process group, SIGKILL ``grace`` seconds later (default
    5; at once with ``kill_on_timeout``).

    sup's keywords: ``idle_timeout`` seconds without a byte on stdout or
    stderr; ``first_output_timeout`` seconds to the first byte;
    ``max_runtime`` like timeout but returning (``outcome`` says
    MAX_RUNTIME); ``max_output`` bytes kept per stream (head and newest
    tail, the cut marked in ``stdout``/``stderr``; default: every byte, the
    library's largest cap); ``backpressure`` bytes a live reader may lag
    before the child is held back; ``env_update`` variables to set on top of
    the inherited environment (None removes one); ``pty`` True or
    (rows, cols): the child on a pseudo-terminal (its output is the stdout
    stream); ``contain`` "group" (default), "cgroup" or "auto": a cgroup
    holds the child's whole tree, ended with it; ``cgroup_parent`` where
    sup makes its cgroups; ``require_sentinel`` refuses to start a child
    (OSError, errno ENOTSUP) that only the main process's death would tie
    to this process (``result.host_death`` is then
    "main_process"); ``input_wait_timeout`` seconds the child may wait for
    input it cannot get before it is ended (``outcome`` IDLE_TIMEOUT,
    ``result.phase`` "input", ``result.waiting_for_input`` True); ``limits`` (:class:`sup.Limits` or a dict:
    memory_bytes, cpu_seconds, processes, file_bytes, open_files,
    core_dump) and ``sandbox`` (:class:`sup.Sandbox` or a dict: write,
    read, exec, network, strict, tmp), what applied in
    ``result.confined`` and a limit that ended the child in
    ``result.limit``. Those endings return normally.

    ``tty_foreground`` (default True here): a child given the host's
    terminal as stdin gets the terminal's foreground while it runs, so it
    reads it as subprocess's child does (False: it stops on reading, as a
    background job). :func:`run_async` defaults to False: the event loop
    may read the terminal meanwhile.

    A KeyboardInterrupt interrupts the child gracefully, waits for its end
    (a second Ctrl-C aborts it), and is re-raised. Any other exception
    aborts it.
    """
    p = _run_popen(
        args, stdin, input, stdout, stderr, capture_output, timeout, max_runtime,
        dict(shell=shell, cwd=cwd, env=env, env_update=env_update, text=text, encoding=encoding,
             errors=errors, universal_newlines=universal_newlines, idle_timeout=idle_timeout,
             first_output_timeout=first_output_timeout, grace=grace, signal=signal,
             kill_on_timeout=kill_on_timeout, max_output=max_output, backpressure=backpressure,
             pty=pty, contain=contain, cgroup_parent=cgroup_parent,
             require_sentinel=require_sentinel, input_wait_timeout=input_wait_timeout,
             limits=limits, sandbox=sandbox,
             tty_foreground=tty_foreground, **popen_kwargs),
    )
    try:
        try:
            r = p._wait_result()
        except KeyboardInterrupt:
            p.interrupt()
            try:
                p._wait_result()
            except KeyboardInterrupt:
                p.abort()  # the second Ctrl-C; close() reaps
            raise
    finally:
        p.close()
    return _completed(p, r, timeout, check)


async def run_async(
    args: Args,
    *,
    stdin: StdioArg = None,
    input: Union[bytes, str, None] = None,
    stdout: StdioArg = None,
    stderr: StdioArg = None,
    capture_output: bool = False,
    shell: Any = False,
    cwd: Optional[StrOrBytesPath] = None,
    timeout: Optional[float] = None,
    check: bool = False,
    encoding: Optional[str] = None,
    errors: Optional[str] = None,
    text: Optional[bool] = None,
    env: Optional[Env] = None,
    env_update: Optional[EnvUpdate] = None,
    universal_newlines: Optional[bool] = None,
    idle_timeout: Optional[float] = None,
    first_output_timeout: Optional[float] = None,
    max_runtime: Optional[float] = None,
    grace: Optional[float] = None,
    signal: Union[int, str, None] = None,
    kill_on_timeout: bool = False,
    max_output: Optional[int] = None,
    backpressure: Optional[int] = None,
    pty: Union[bool, Tuple[int, int]] = False,
    contain: Optional[str] = None,
    cgroup_parent: Optional[StrOrBytesPath] = None,
    require_sentinel: bool = False,
    tty_foreground: bool = False,
    input_wait_timeout: Optional[float] = None,
    limits: Union[_spec.Limits, Mapping[str, Any], None] = None,
    sandbox: Union[_spec.Sandbox, Mapping[str, Any], None] = None,
    **popen_kwargs: Any,
) -> CompletedProcess:
    """:func:`run` for asyncio: awaits on the event loop, no thread.

    Cancelling the awaiting task aborts the child (as any exception does).
    """
    p = _run_popen(
        args, stdin, input, stdout, stderr, capture_output, timeout, max_runtime,
        dict(shell=shell, cwd=cwd, env=env, env_update=env_update, text=text, encoding=encoding,
             errors=errors, universal_newlines=universal_newlines, idle_timeout=idle_timeout,
             first_output_timeout=first_output_timeout, grace=grace, signal=signal,
             kill_on_timeout=kill_on_timeout, max_output=max_output, backpressure=backpressure,
             pty=pty, contain=contain, cgroup_parent=cgroup_parent,
             require_sentinel=require_sentinel, input_wait_timeout=input_wait_timeout,
             limits=limits, sandbox=sandbox,
             tty_foreground=tty_foreground, **popen_kwargs),
    )
    try:
        r = await p._wait_result_async()
    finally:
        p.close()
    return _completed(p, r, timeout, check)
