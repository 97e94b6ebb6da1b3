"""The final result of a supervised child: one immutable value."""

from __future__ import annotations

import ctypes
import enum
import json as _json
import signal as _signal
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Dict, Optional, Sequence

from . import _lib
from ._errors import SupError, check


class Outcome(enum.Enum):
    """What ended the main process; the values are the library's names."""

    EXITED = "exited"  #: exited by itself; see Result.returncode
    SIGNALED = "signaled"  #: died from a signal sup did not send
    IDLE_TIMEOUT = "idle_timeout"  #: ended after idle_timeout of silence
    MAX_RUNTIME = "max_runtime"  #: ended after timeout (max runtime)
    INTERRUPTED = "interrupted"  #: ended by interrupt()
    ABORTED = "aborted"  #: ended by abort() or close()


def _signal_value(n: int) -> int:
    try:
        return _signal.Signals(n)
    except ValueError:
        return n


@dataclass(frozen=True)
class Result:
    """What happened to a child, decided once and never changed afterwards."""

    args: Sequence[Any]
    pid: int
    outcome: Outcome
    returncode: Optional[int]  #: exit code; None when signaled or status lost
    signal: Optional[int]  #: signal that killed it (a signal.Signals when known)
    forced_kill: bool  #: sup had to send SIGKILL
    status_lost: bool  #: the host reaped the child itself (SIGCHLD ignored, waitpid(-1))
    stdout: bytes = field(repr=False)  #: bytes kept, exact (head and newest tail)
    stderr: bytes = field(repr=False)
    stdout_omitted: int  #: bytes dropped from the middle of stdout
    stderr_omitted: int
    duration: float  #: seconds from spawn to the final result
    _json_source: "JsonSource" = field(repr=False, compare=False)

    @cached_property
    def json(self) -> Dict[str, Any]:
        """The library's result JSON (``sup_result``), parsed.

        Built on first access: for a child that printed megabytes, the
        library's JSON text (with the captured output as text) costs far more
        than the typed fields, and most callers never need it.
        """
        parsed: Dict[str, Any] = _json.loads(self._json_source.get())
        return parsed

    def __repr__(self) -> str:
        return (
            f"Result(args={self.args!r}, outcome={self.outcome}, "
            f"returncode={self.returncode!r}, signal={self.signal!r}, "
            f"forced_kill={self.forced_kill}, duration={self.duration:.3f}, "
            f"stdout=<{len(self.stdout)} bytes>, stderr=<{len(self.stderr)} bytes>)"
        )


class JsonSource:
    """The result's JSON text, fetched from the handle on demand.

    The owner stashes the text (``stash``) before it releases the handle, so
    that a Result that outlives its Popen can still produce it.
    """

    def __init__(self, fetch: Callable[[], Optional[bytes]]) -> None:
        # No lock of its own: fetch takes the Popen's lock, and stash is only
        # called under it, before the handle is marked closed. A weak
        # reference, so that a Result does not keep its Popen (and the
        # library's handle) alive: the Popen stashes the text when it goes.
        self._fetch: Optional[weakref.WeakMethod[Callable[[], Optional[bytes]]]] = (
            weakref.WeakMethod(fetch)
        )
        self._raw: Optional[bytes] = None

    def get(self) -> bytes:
        if self._raw is None:
            ref = self._fetch
            fetch = None if ref is None else ref()
            if fetch is not None:
                raw = fetch()  # None once closed: then stash() has set _raw
                if raw is not None and self._raw is None:
                    self._raw = raw
        if self._raw is None:
            raise MemoryError("sup: cannot read the result JSON")
        return self._raw

    def stash(self, fetch: Callable[[], Optional[bytes]]) -> None:
        """Fetch now if not done yet, then forget the handle.

        Called by the owner (its lock held, or from __del__) just before it
        releases the handle, with a direct fetch: the weak one may already be
        dead when a reference cycle is collected.
        """
        if self._raw is None:
            self._raw = fetch()
        self._fetch = None


def _optional(code: int) -> Optional[int]:
    if code == _lib.ENODATA:
        return None
    return check(code, "result")


def _output(a: _lib.Api, h: int, stream: int) -> bytes:
    n = ctypes.c_size_t(0)
    ptr = a.result_output(h, stream, ctypes.byref(n))
    if not ptr or n.value == 0:
        return b""
    return ctypes.string_at(ptr, n.value)


_OUTCOMES = {
    1: Outcome.EXITED,
    2: Outcome.SIGNALED,
    3: Outcome.IDLE_TIMEOUT,
    4: Outcome.MAX_RUNTIME,
    5: Outcome.INTERRUPTED,
    6: Outcome.ABORTED,
}


def from_handle(
    a: _lib.Api, h: int, args: Sequence[Any], pid: int, json_source: JsonSource
) -> Result:
    """Read the final result off a handle (the caller knows it is final)."""
    code = check(a.result_outcome(h), "result")
    outcome = _OUTCOMES.get(code)
    if outcome is None:
        name = a.outcome_name(code)
        raise SupError(_lib.EINTERNAL, f"sup: unknown outcome {code} ({name!r})")
    # Each ctypes call costs about a microsecond: ask only what can be set.
    returncode = _optional(a.result_exit_code(h))
    term: Optional[int] = None
    lost = False
    if returncode is None:
        term = _optional(a.result_term_signal(h))
        if term is None:
            lost = check(a.result_status_lost(h), "result") == 1
    return Result(
        args=args,
        pid=pid,
        outcome=outcome,
        returncode=returncode,
        signal=None if term is None else _signal_value(term),
        forced_kill=check(a.result_forced_kill(h), "result") == 1,
        status_lost=lost,
        stdout=_output(a, h, _lib.STDOUT),
        stderr=_output(a, h, _lib.STDERR),
        stdout_omitted=check(a.result_omitted_bytes(h, _lib.STDOUT), "result"),
        stderr_omitted=check(a.result_omitted_bytes(h, _lib.STDERR), "result"),
        duration=a.result_duration_ms(h) / 1000.0,
        _json_source=json_source,
    )
