//! Limits and sandbox for a child, as the spec's "limits" and "sandbox".

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

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
