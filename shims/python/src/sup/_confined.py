"""What confined the child: the result's "confined", as typed values.

libsup reports per limit, sandbox and user what it applied and how (an
rlimit per process, a cgroup for the tree, nothing and why). These are
read-only views of that JSON; the shape is sup.h's (sup_result).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, Mapping, Optional, Tuple, Union, cast

#: How a limit was applied: "rlimit" (setrlimit in the child), "cgroup"
#: (the child's own cgroup v2), or None when it could not be (see ``reason``).
Mechanism = Literal["rlimit", "cgroup"]
#: What a limit bounds: each "process", all processes of the child's "user"
#: (RLIMIT_NPROC), or the child's whole cgroup ("tree").
Scope = Literal["process", "user", "tree"]
#: The limit that ended the child (``Result.limit``).
LimitHit = Literal["memory", "processes", "cpu", "file_size"]
#: What would have ended with the host, had it died while the child ran.
HostDeath = Literal["tree", "main_process"]


@dataclass(frozen=True)
class LimitApplied:
    """One entry of ``limits`` as the library applied it."""

    #: the :class:`sup.Limits` field: "memory_bytes", "cpu_seconds",
    #: "processes", "file_bytes", "open_files" or "core_dump"
    name: str
    #: the value given (``core_dump``: False, the only value that applies)
    value: Union[int, bool]
    mechanism: Optional[Mechanism]
    scope: Optional[Scope]
    #: why the tree-wide cgroup was not used (or why nothing applied), else None
    reason: Optional[str]


@dataclass(frozen=True)
class SandboxApplied:
    """What the ``sandbox`` got from the kernel (Landlock, no_new_privs)."""

    landlock_abi: int  #: the kernel's Landlock ABI version; 0: none
    filesystem: bool  #: the filesystem rules were applied
    #: sockets refused (``network=False``) were applied: True/False; None
    #: when the sandbox allows the network
    network: Optional[bool]
    landlock_tcp: bool  #: Landlock's TCP rules were applied
    no_new_privs: bool
    not_enforced: Tuple[str, ...]  #: what the kernel could not enforce
    tmp: Optional[str]  #: the private TMPDIR (``tmp=True``), else None


@dataclass(frozen=True)
class UserApplied:
    """The ids the child was given (``user``/``group``/``extra_groups``);
    None: left as the host's."""

    uid: Optional[int]
    gid: Optional[int]
    groups: Optional[Tuple[int, ...]]


@dataclass(frozen=True)
class Confined:
    """``Result.confined``: what ``limits``, ``sandbox`` and
    ``user``/``group``/``extra_groups`` applied."""

    #: one entry per limit given, by name (read-only)
    limits: Mapping[str, LimitApplied]
    sandbox: Optional[SandboxApplied]  #: None without ``sandbox``
    user: Optional[UserApplied]  #: None without ``user``/``group``/``extra_groups``


def _opt_int(v: Any) -> Optional[int]:
    return None if v is None else int(v)


def _opt_str(v: Any) -> Optional[str]:
    return None if v is None else str(v)


def parse(doc: Any) -> Optional[Confined]:
    """The result JSON's "confined" (None, or an object) as a Confined."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ValueError(f"sup: result 'confined' is not an object: {doc!r}")
    limits = {}
    sandbox: Optional[SandboxApplied] = None
    user: Optional[UserApplied] = None
    for key, entry in doc.items():
        if key == "sandbox":
            sandbox = SandboxApplied(
                landlock_abi=int(entry["landlock_abi"]),
                filesystem=bool(entry["filesystem"]),
                network=None if entry.get("network") is None else bool(entry["network"]),
                landlock_tcp=bool(entry.get("landlock_tcp", False)),
                no_new_privs=bool(entry.get("no_new_privs", False)),
                not_enforced=tuple(str(s) for s in entry.get("not_enforced", ())),
                tmp=_opt_str(entry.get("tmp")),
            )
        elif key == "user":
            groups = entry.get("groups")
            user = UserApplied(
                uid=_opt_int(entry.get("uid")),
                gid=_opt_int(entry.get("gid")),
                groups=None if groups is None else tuple(int(g) for g in groups),
            )
        else:
            value = entry["value"]
            limits[key] = LimitApplied(
                name=key,
                value=value if isinstance(value, bool) else int(value),
                mechanism=cast(Optional[Mechanism], entry.get("mechanism")),
                scope=cast(Optional[Scope], entry.get("scope")),
                reason=_opt_str(entry.get("reason")),
            )
    return Confined(limits=MappingProxyType(limits), sandbox=sandbox, user=user)
