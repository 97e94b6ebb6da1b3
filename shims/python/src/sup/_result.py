"""The final result of a supervised child: one immutable value."""

from __future__ import annotations

import ctypes
import enum
import signal as _signal
import subprocess
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Dict, Literal, Optional, cast

from . import _lib
from ._confined import Confined, HostDeath, LimitHit
from ._confined import parse as _parse_confined
from ._errors import CalledProcessError, SupError, check

#: Which silence ended an IDLE_TIMEOUT child (``Result.phase``).
Phase = Literal["first_output", "idle", "input"]


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

    args: Any  #: the args given to run/Popen
    pid: int
    outcome: Outcome
    #: exit code, or -N when signal N ended it (as subprocess); None only
    #: when status_lost
    returncode: Optional[int]
    signal: Optional[int]  #: signal that killed it (a signal.Signals when known)
    forced_kill: bool  #: sup had to send SIGKILL
    status_lost: bool  #: the host reaped the child itself (SIGCHLD ignored, waitpid(-1))
    stdout: bytes = field(repr=False)  #: bytes kept, exact (head and newest tail)
    stderr: bytes = field(repr=False)
    stdout_omitted: int  #: bytes dropped from the middle of stdout
    stderr_omitted: int
    duration: float  #: seconds from spawn to the final result
    #: for IDLE_TIMEOUT, which limit fired: "first_output" (first_output_timeout),
    #: "idle" (idle_timeout) or "input" (input_wait_timeout, or a Popen's child
    #: stopped reading the terminal: see Popen); None for every other outcome
    phase: Optional[Phase]
    _json_source: "JsonSource" = field(repr=False, compare=False)

    @cached_property
    def json(self) -> Dict[str, Any]:
        """The library's result JSON (``sup_result``), parsed.

        Fetched from the library on first access only: for a child that
        printed megabytes, the JSON text (the captured output as escaped
        text) costs far more than the typed fields, and most callers never
        need it. The Result keeps the library's handle for it.
        """
        import json  # only for those who ask

        parsed: Dict[str, Any] = json.loads(self._json_source.get())
        return parsed

    # The fields below exist only in the result JSON: each is read from
    # ``json`` on first access (None from a libsup 0.3, which has none).

    @cached_property
    def waiting_for_input(self) -> Optional[bool]:
        """Whether the child was waiting for input it could not get at its
        end (a reader asleep on its stdin, or stopped by SIGTTIN/SIGTTOU);
        None when nobody asked (neither ``input_wait_timeout`` nor
        ``Popen.input_wanted()``), sup could not see, or it ended before any
        look."""
        v = self.json.get("waiting_for_input")
        return None if v is None else bool(v)

    @cached_property
    def confined(self) -> Optional[Confined]:
        """What ``limits``, ``sandbox`` and ``user``/``group``/``extra_groups``
        applied and how; None when none was given."""
        return _parse_confined(self.json.get("confined"))

    @cached_property
    def limit(self) -> Optional[LimitHit]:
        """The limit that ended the child: "memory", "processes", "cpu" or
        "file_size"; else None. The outcome stays what it was (SIGNALED,
        EXITED)."""
        v = self.json.get("limit")
        return None if v is None else cast(LimitHit, str(v))

    @cached_property
    def host_death(self) -> Optional[HostDeath]:
        """What would have ended with the host, had it died while the child
        ran: "tree" (sup's sentinel held the child's group or cgroup) or
        "main_process" (the main process alone); None from a libsup 0.3."""
        v = self.json.get("host_death")
        return None if v is None else cast(HostDeath, str(v))

    @cached_property
    def tty_foreground(self) -> Optional[bool]:
        """``tty_foreground`` asked: True when the child's group was given the
        terminal's foreground, False when not (``tty_refused`` says why);
        None when not asked."""
        v = self.json.get("tty_foreground")
        return None if v is None else bool(v)

    @cached_property
    def tty_refused(self) -> Optional[str]:
        """Why the terminal's foreground was not given, else None."""
        v = self.json.get("tty_refused")
        return None if v is None else str(v)

    @cached_property
    def stdout_tee_error(self) -> Optional[str]:
        """When sup copied stdout to the host's (``stdout=None`` with an idle
        timeout) and that descriptor failed: the errno's name ("EPIPE": its
        reader had gone, and the child's writes then failed); else None."""
        return _tee_error(self.json, "stdout")

    @cached_property
    def stderr_tee_error(self) -> Optional[str]:
        """``stdout_tee_error`` for stderr."""
        return _tee_error(self.json, "stderr")

    def __repr__(self) -> str:
        return (
            f"Result(args={self.args!r}, outcome={self.outcome}, "
            f"returncode={self.returncode!r}, signal={self.signal!r}, "
            f"forced_kill={self.forced_kill}, duration={self.duration:.3f}, "
            f"stdout=<{len(self.stdout)} bytes>, stderr=<{len(self.stderr)} bytes>)"
        )


def _tee_error(doc: Dict[str, Any], stream: str) -> Optional[str]:
    part = doc.get(stream)
    v = part.get("tee_error") if isinstance(part, dict) else None
    return None if v is None else str(v)


class JsonSource:
    """The result's JSON text, fetched from the handle on demand."""

    __slots__ = ("_handle",)

    def __init__(self, handle: _lib.Handle) -> None:
        self._handle = handle

    def get(self) -> bytes:
        h = self._handle
        raw = h.api.result(h.ptr)
        if raw is None:
            raise MemoryError("sup: cannot read the result JSON")
        return raw


class CompletedProcess(subprocess.CompletedProcess[Any]):
    """What ``sup.run`` returns: ``subprocess.CompletedProcess`` itself.

    ``stdout``/``stderr`` follow subprocess: the output (bytes, or str in
    text mode) for a stream given ``PIPE``, else None. sup's own record,
    with the bytes it captured whatever the routing, is ``result``.
    """

    def __init__(
        self, args: Any, returncode: int, stdout: Any, stderr: Any, result: Result
    ) -> None:
        super().__init__(args, returncode, stdout, stderr)
        self.result = result

    @property
    def outcome(self) -> Outcome:
        """``result.outcome``: what ended the child."""
        return self.result.outcome

    def check_returncode(self) -> None:
        """Raise :class:`sup.CalledProcessError` if returncode is not 0."""
        if self.returncode:
            raise CalledProcessError(
                self.returncode, self.args, self.stdout, self.stderr, self.result
            )


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


_PHASES: Dict[int, Phase] = {1: "first_output", 2: "idle", 3: "input"}

_OUTCOMES = {
    1: Outcome.EXITED,
    2: Outcome.SIGNALED,
    3: Outcome.IDLE_TIMEOUT,
    4: Outcome.MAX_RUNTIME,
    5: Outcome.INTERRUPTED,
    6: Outcome.ABORTED,
}


def from_handle(handle: _lib.Handle, args: Any, pid: int) -> Result:
    """Read the final result off a handle (the caller knows it is final)."""
    a, h = handle.api, handle.ptr
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
        else:
            returncode = -term
    phase: Optional[Phase] = None
    if outcome is Outcome.IDLE_TIMEOUT:
        phase = _PHASES.get(check(a.result_phase(h), "result"))
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
        phase=phase,
        _json_source=JsonSource(handle),
    )
