//! Limits and sandbox for a child, as the spec's "limits" and "sandbox".

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use crate::json::Value;

/// Resource limits the child sets on itself before exec
/// ([`Command::limits`](crate::Command::limits)); `None` leaves the host's
/// own. In cgroup mode ([`Contain::Cgroup`](crate::Contain)) `memory_bytes`
/// and `processes` bound the whole tree where the host's cgroup allows. The
/// result's JSON (`"confined"`) says which mechanism applied, and `"limit"`
/// which limit ended the child.
///
/// ```
/// let out = sup::Command::new("sh").args(["-c", "ulimit -n"])
///     .limits(sup::Limits { open_files: Some(64), ..Default::default() }).output()?;
/// assert_eq!(out.stdout, b"64\n");
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// RLIMIT_DATA, or the cgroup's memory.max.
    pub memory_bytes: Option<u64>,
    /// RLIMIT_CPU: SIGXCPU, then SIGKILL a second later.
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_NPROC (the user's processes), or the cgroup's pids.max.
    pub processes: Option<u64>,
    /// RLIMIT_FSIZE: SIGXFSZ past it.
    pub file_bytes: Option<u64>,
    /// RLIMIT_NOFILE.
    pub open_files: Option<u64>,
    /// `Some(false)`: RLIMIT_CORE 0.
    pub core_dump: Option<bool>,
}

/// A Landlock (and seccomp) sandbox the child applies to itself before exec
/// ([`Command::sandbox`](crate::Command::sandbox)): nothing is writable but
/// `write` (and `/dev/null`, `/dev/tty`, its terminal); everything is
/// readable and executable unless `read` or `exec` lists what is. Best
/// effort: what the kernel cannot enforce is listed in the result's JSON,
/// unless `strict` makes the spawn fail instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sandbox {
    /// The only writable paths.
    pub write: Vec<OsString>,
    /// `Some`: the only readable paths.
    pub read: Option<Vec<OsString>>,
    /// `Some`: the only executable paths.
    pub exec: Option<Vec<OsString>>,
    /// `false`: sockets other than AF_UNIX are refused.
    pub network: bool,
    /// Fail the spawn where the kernel cannot enforce it all.
    pub strict: bool,
    /// A private `TMPDIR`, removed with the child.
    pub tmp: bool,
}

impl Default for Sandbox {
    fn default() -> Sandbox {
        Sandbox { write: Vec::new(), read: None, exec: None, network: true, strict: false, tmp: false }
    }
}

impl Limits {
    pub(crate) fn spec(&self, s: &mut Vec<u8>) {
        s.extend_from_slice(b",\"limits\":{");
        let mut first = true;
        let mut item = |s: &mut Vec<u8>, key: &str, val: String| {
            if !first {
                s.push(b',');
            }
            first = false;
            s.extend_from_slice(format!("\"{key}\":{val}").as_bytes());
        };
        for (key, v) in [
            ("memory_bytes", self.memory_bytes),
            ("cpu_seconds", self.cpu_seconds),
            ("processes", self.processes),
            ("file_bytes", self.file_bytes),
            ("open_files", self.open_files),
        ] {
            if let Some(v) = v {
                item(s, key, v.to_string());
            }
        }
        if let Some(c) = self.core_dump {
            item(s, "core_dump", c.to_string());
        }
        s.push(b'}');
    }
}

impl Sandbox {
    pub(crate) fn spec(&self, s: &mut Vec<u8>) {
        s.extend_from_slice(format!(",\"sandbox\":{{\"network\":{},\"strict\":{},\"tmp\":{}", self.network, self.strict, self.tmp).as_bytes());
        let paths = |s: &mut Vec<u8>, key: &str, ps: &[OsString]| {
            s.extend_from_slice(format!(",\"{key}\":[").as_bytes());
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    s.push(b',');
                }
                crate::command::json_str(s, p.as_bytes());
            }
            s.push(b']');
        };
        paths(s, "write", &self.write);
        if let Some(r) = &self.read {
            paths(s, "read", r);
        }
        if let Some(e) = &self.exec {
            paths(s, "exec", e);
        }
        s.push(b'}');
    }
}

/// What applied one limit of [`Limits`]: [`AppliedLimit::mechanism`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mechanism {
    /// An rlimit the child set on itself (`setrlimit`).
    Rlimit,
    /// Its cgroup's controller (`memory.max`, `pids.max`), in cgroup mode.
    Cgroup,
}

/// Whom one limit of [`Limits`] bounds: [`AppliedLimit::scope`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// Each process on its own (an rlimit is inherited, not shared).
    Process,
    /// All the processes of the child's user (`RLIMIT_NPROC`).
    User,
    /// The child's whole tree (its cgroup).
    Tree,
}

/// How one limit was applied: an entry of [`Confined`] (the result's
/// `"confined"` object, include/sup.h).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppliedLimit {
    /// The value given (for `core_dump: Some(false)`, 0: `RLIMIT_CORE` 0).
    pub value: u64,
    /// What applied it; `None` when nothing could (see
    /// [`reason`](AppliedLimit::reason)): `processes` for a child running as
    /// root, which `RLIMIT_NPROC` exempts.
    pub mechanism: Option<Mechanism>,
    /// Whom it bounds; `None` with `mechanism`.
    pub scope: Option<Scope>,
    /// Why the tree-wide cgroup was not used, or why nothing applied.
    pub reason: Option<String>,
}

/// The Landlock and seccomp sandbox as applied: [`Confined::sandbox`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppliedSandbox {
    /// The kernel's Landlock ABI (0: no Landlock).
    pub landlock_abi: u32,
    /// The filesystem rules were applied.
    pub filesystem: bool,
    /// The network refusal was applied; `None` when the sandbox allows the
    /// network.
    pub network: Option<bool>,
    /// Landlock's TCP bind and connect rules were applied (ABI 4).
    pub landlock_tcp: bool,
    /// `no_new_privs` was set.
    pub no_new_privs: bool,
    /// What the kernel could not enforce, one sentence each.
    pub not_enforced: Vec<String>,
    /// The child's private `TMPDIR` ([`Sandbox::tmp`]), when asked.
    pub tmp: Option<std::path::PathBuf>,
}

/// The ids the child was given: [`Confined::user`]. `None`: unchanged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppliedUser {
    /// Its user id.
    pub uid: Option<u32>,
    /// Its group id.
    pub gid: Option<u32>,
    /// Its supplementary groups.
    pub groups: Option<Vec<u32>>,
}

/// What confined the child and how ([`Output::confined`](crate::Output)):
/// one entry per limit given, the sandbox, the ids.
///
/// ```
/// let out = sup::Command::new("true")
///     .limits(sup::Limits { open_files: Some(64), ..Default::default() }).output()?;
/// let open_files = out.confined.unwrap().open_files.unwrap();
/// assert_eq!((open_files.value, open_files.mechanism), (64, Some(sup::Mechanism::Rlimit)));
/// assert_eq!(open_files.scope, Some(sup::Scope::Process));
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Confined {
    /// [`Limits::memory_bytes`].
    pub memory_bytes: Option<AppliedLimit>,
    /// [`Limits::cpu_seconds`].
    pub cpu_seconds: Option<AppliedLimit>,
    /// [`Limits::processes`].
    pub processes: Option<AppliedLimit>,
    /// [`Limits::file_bytes`].
    pub file_bytes: Option<AppliedLimit>,
    /// [`Limits::open_files`].
    pub open_files: Option<AppliedLimit>,
    /// [`Limits::core_dump`].
    pub core_dump: Option<AppliedLimit>,
    /// The [`Sandbox`], when given.
    pub sandbox: Option<AppliedSandbox>,
    /// The user and groups, when given.
    pub user: Option<AppliedUser>,
}

/// The limit that ended the child ([`Output::limit`](crate::Output)); its
/// [`Outcome`](crate::Outcome) is unchanged (signaled or exited).
///
/// ```
/// assert_eq!(sup::LimitHit::FileSize.as_str(), "file_size");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitHit {
    /// Its cgroup's `memory.events` oom_kill count rose.
    Memory,
    /// Its cgroup's `pids.events` max rose.
    Processes,
    /// The main process died of SIGXCPU, or of SIGKILL once its CPU time
    /// reached `cpu_seconds`.
    Cpu,
    /// It died of SIGXFSZ.
    FileSize,
}

impl LimitHit {
    /// The library's name: `"memory"`, `"processes"`, `"cpu"`, `"file_size"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitHit::Memory => "memory",
            LimitHit::Processes => "processes",
            LimitHit::Cpu => "cpu",
            LimitHit::FileSize => "file_size",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<LimitHit> {
        [LimitHit::Memory, LimitHit::Processes, LimitHit::Cpu, LimitHit::FileSize].into_iter().find(|l| l.as_str() == name)
    }
}

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Confined {
    /// From the result's `"confined"` object; `None` for anything else
    /// (a library whose object this shim does not know).
    pub(crate) fn from_json(v: &Value) -> Option<Confined> {
        let limit = |key: &str| -> Option<Option<AppliedLimit>> {
            let Some(e) = v.get(key) else { return Some(None) };
            let value = match e.get("value")? {
                Value::Bool(false) => 0,
                n => n.as_u64()?,
            };
            let text = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_owned);
            Some(Some(AppliedLimit {
                value,
                mechanism: match e.get("mechanism").and_then(Value::as_str) {
                    Some("rlimit") => Some(Mechanism::Rlimit),
                    Some("cgroup") => Some(Mechanism::Cgroup),
                    _ => None,
                },
                scope: match e.get("scope").and_then(Value::as_str) {
                    Some("process") => Some(Scope::Process),
                    Some("user") => Some(Scope::User),
                    Some("tree") => Some(Scope::Tree),
                    _ => None,
                },
                reason: text("reason"),
            }))
        };
        let id = |x: Option<&Value>| x.and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
        let sandbox = match v.get("sandbox") {
            None | Some(Value::Null) => None,
            Some(s) => Some(AppliedSandbox {
                landlock_abi: id(s.get("landlock_abi"))?,
                filesystem: s.get("filesystem")?.as_bool()?,
                network: s.get("network").and_then(Value::as_bool),
                landlock_tcp: s.get("landlock_tcp").and_then(Value::as_bool).unwrap_or(false),
                no_new_privs: s.get("no_new_privs").and_then(Value::as_bool).unwrap_or(false),
                not_enforced: s
                    .get("not_enforced")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    .unwrap_or_default(),
                tmp: s.get("tmp").and_then(Value::as_str).map(std::path::PathBuf::from),
            }),
        };
        let user = match v.get("user") {
            None | Some(Value::Null) => None,
            Some(u) => Some(AppliedUser {
                uid: id(u.get("uid")),
                gid: id(u.get("gid")),
                groups: match u.get("groups") {
                    Some(Value::Arr(a)) => Some(a.iter().map(|g| id(Some(g))).collect::<Option<Vec<u32>>>()?),
                    _ => None,
                },
            }),
        };
        Some(Confined {
            memory_bytes: limit("memory_bytes")?,
            cpu_seconds: limit("cpu_seconds")?,
            processes: limit("processes")?,
            file_bytes: limit("file_bytes")?,
            open_files: limit("open_files")?,
            core_dump: limit("core_dump")?,
            sandbox,
            user,
        })
    }
}
