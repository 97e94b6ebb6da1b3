use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Duration;

use crate::child::Child;
use crate::confine::{Limits, Sandbox};
use crate::error::{Error, Part, Result};
use crate::output::Output;
use crate::signal::Signal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Null,
    Inherit,
    Piped,
    Tee,
    Stdout,
    /// A host descriptor, passed as itself; its [`OwnedFd`] is held by the
    /// [`Stdio`] and then the [`Command`].
    Fd(RawFd),
}

impl Route {
    /// The spec's value: a string, or {"fd": N}.
    fn spec_value(self) -> String {
        let name = match self {
            Route::Null => "null",
            Route::Inherit => "inherit",
            Route::Piped => "pipe",
            Route::Tee => "tee",
            Route::Stdout => "stdout",
            Route::Fd(fd) => return format!("{{\"fd\":{fd}}}"),
        };
        format!("\"{name}\"")
    }
}

#[derive(Clone, Debug)]
enum Stdin {
    Route(Route),
    Bytes(Vec<u8>),
}

/// Where a child's stdin comes from or its stdout and stderr go, in the
/// manner of [`std::process::Stdio`], for [`Command::stdin`],
/// [`Command::stdout`] and [`Command::stderr`].
///
/// | | stdin | stdout, stderr |
/// |---|---|---|
/// | [`piped()`](Stdio::piped) | a pipe written through [`Child::take_stdin`] | captured and live-readable (the default) |
/// | [`null()`](Stdio::null) | `/dev/null` (the default) | `/dev/null` |
/// | [`inherit()`](Stdio::inherit) | the host's | the host's, not captured |
/// | [`tee()`](Stdio::tee) | — | captured, and copied to the host's as it comes |
/// | [`stdout()`](Stdio::stdout) | — | stderr only: into stdout's pipe, in write order |
/// | `Stdio::from(file)` | the file itself, as the child's 0 | the file itself (not captured) |
///
/// `Stdio::from` takes a [`File`](std::fs::File), an [`OwnedFd`] or either
/// end of [`std::io::pipe`], as std's does: the child gets the descriptor
/// itself (it may seek and `fstat` a file). A pipe between two children is
/// such a pipe given to both (a sup child's own stdout is read by sup, so
/// it cannot be another's stdin); the [`Command`] holds the descriptor until
/// it is dropped, as std's does, so drop the writer's `Command` for the
/// reader to see the end.
///
/// A route that a stream does not take fails the spawn
/// ([`Part::Spec`](crate::Part::Spec)).
///
/// ```
/// use std::io::Write;
/// let child = sup::Command::new("cat").stdin(sup::Stdio::piped()).spawn()?;
/// child.take_stdin().unwrap().write_all(b"hi")?;   // dropped: closed
/// assert_eq!(child.wait()?.stdout, b"hi");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Stdio(Route, Option<Arc<OwnedFd>>);

impl Stdio {
    fn from_fd(fd: OwnedFd) -> Stdio {
        Stdio(Route::Fd(fd.as_raw_fd()), Some(Arc::new(fd)))
    }
}

impl From<OwnedFd> for Stdio {
    fn from(fd: OwnedFd) -> Stdio {
        Stdio::from_fd(fd)
    }
}

impl From<std::fs::File> for Stdio {
    fn from(f: std::fs::File) -> Stdio {
        Stdio::from_fd(f.into())
    }
}

impl From<std::io::PipeReader> for Stdio {
    fn from(p: std::io::PipeReader) -> Stdio {
        Stdio::from_fd(p.into())
    }
}

impl From<std::io::PipeWriter> for Stdio {
    fn from(p: std::io::PipeWriter) -> Stdio {
        Stdio::from_fd(p.into())
    }
}

impl Stdio {
    /// `/dev/null` (the default for stdin).
    ///
    /// ```
    /// let out = sup::Command::new("cat").stdin(sup::Stdio::null()).output()?;
    /// assert!(out.stdout.is_empty());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn null() -> Stdio {
        Stdio(Route::Null, None)
    }

    /// The host's own descriptor: sup does not capture or read it (its
    /// bytes do not reset the idle clock).
    ///
    /// ```
    /// assert!(sup::Command::new("true").stdin(sup::Stdio::inherit()).output()?.success());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn inherit() -> Stdio {
        Stdio(Route::Inherit, None)
    }

    /// For stdin, a pipe the host writes through [`Child::take_stdin`]; for
    /// stdout and stderr, sup's capture (the default).
    ///
    /// ```
    /// let child = sup::Command::new("cat").stdin(sup::Stdio::piped()).spawn()?;
    /// drop(child.take_stdin());                      // end of file at once
    /// assert!(child.wait()?.success());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn piped() -> Stdio {
        Stdio(Route::Piped, None)
    }

    /// stdout or stderr captured as with [`piped()`](Stdio::piped), every
    /// byte also copied to the host's own stdout or stderr as it arrives.
    ///
    /// ```
    /// let out = sup::Command::new("echo").arg("seen and kept").stdout(sup::Stdio::tee()).output()?;
    /// assert_eq!(out.stdout, b"seen and kept\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn tee() -> Stdio {
        Stdio(Route::Tee, None)
    }

    /// For stderr: the same pipe as stdout, so both streams arrive in
    /// [`Output::stdout`] in the order they were written (as `2>&1`).
    ///
    /// ```
    /// let out = sup::Command::new("sh").args(["-c", "echo 1; echo 2 >&2; echo 3"])
    ///     .stderr(sup::Stdio::stdout()).output()?;
    /// assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"1\n2\n3\n"[..], &b""[..]));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn stdout() -> Stdio {
        Stdio(Route::Stdout, None)
    }
}

/// How a child's process tree is contained, for [`Command::contain`].
///
/// ```
/// let out = sup::Command::new("true").contain(sup::Contain::Auto).output()?;
/// assert!(matches!(out.contained, sup::Contain::Group | sup::Contain::Cgroup));
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Contain {
    /// Its process group (the default): what leaves the group (`setsid`,
    /// `setpgid`) is beyond sup's signals.
    Group,
    /// A cgroup v2 of its own: every process it ever started, whatever its
    /// group or session; the spawn fails (`SUP_ENOTSUP`) where no writable
    /// cgroup v2 hierarchy is available.
    Cgroup,
    /// A cgroup where one can be made, else the process group.
    Auto,
}

impl Contain {
    fn spec_name(self) -> &'static str {
        match self {
            Contain::Group => "group",
            Contain::Cgroup => "cgroup",
            Contain::Auto => "auto",
        }
    }
}

/// A builder for a supervised child process, in the manner of
/// [`std::process::Command`].
///
/// Unset options take the library's defaults: no idle timeout, no maximum
/// runtime, 5 s of grace, `SIGTERM`, interrupt-then-kill on timeout, 16 MiB
/// kept per stream, stdin from `/dev/null`, the host's environment and
/// working directory.
///
/// ```
/// use std::time::Duration;
/// let out = sup::Command::new("sh")
///     .arg("-c").arg("echo hello; echo oops >&2; exit 3")
///     .idle_timeout(Duration::from_secs(30))
///     .output()?;
/// assert_eq!(out.outcome, sup::Outcome::Exited);
/// assert_eq!(out.exit_code, Some(3));
/// assert_eq!(out.stdout, b"hello\n");
/// assert_eq!(out.stderr, b"oops\n");
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Command {
    argv: Vec<OsString>,
    cwd: Option<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    env_clear: bool,
    stdin: Option<Stdin>,
    stdout: Option<Route>,
    stderr: Option<Route>,
    pty: Option<(u16, u16)>,
    first_output_timeout: Option<Duration>,
    contain: Option<Contain>,
    cgroup_parent: Option<OsString>,
    require_sentinel: bool,
    idle_timeout: Option<Duration>,
    input_wait_timeout: Option<Duration>,
    max_runtime: Option<Duration>,
    grace: Option<Duration>,
    interrupt_signal: Option<Signal>,
    kill_on_timeout: bool,
    max_output_bytes: Option<u64>,
    backpressure_bytes: Option<u64>,
    tty_foreground: bool,
    fds: Vec<(i32, RawFd)>,
    limits: Option<Limits>,
    sandbox: Option<Sandbox>,
    uid: Option<u32>,
    gid: Option<u32>,
    groups: Option<Vec<u32>>,
    /// Descriptors given by Stdio::from and fd(), open as long as the
    /// Command (and its clones) live.
    held: Vec<Arc<OwnedFd>>,
}

impl Command {
    /// A command running `program`, searched in the child's `PATH` unless it
    /// holds a `/`.
    ///
    /// ```
    /// let out = sup::Command::new("true").output()?;
    /// assert_eq!(out.exit_code, Some(0));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        Command {
            argv: vec![program.as_ref().to_owned()],
            cwd: None,
            env: Vec::new(),
            env_clear: false,
            stdin: None,
            stdout: None,
            stderr: None,
            pty: None,
            first_output_timeout: None,
            contain: None,
            cgroup_parent: None,
            require_sentinel: false,
            idle_timeout: None,
            input_wait_timeout: None,
            max_runtime: None,
            grace: None,
            interrupt_signal: None,
            kill_on_timeout: false,
            max_output_bytes: None,
            backpressure_bytes: None,
            tty_foreground: false,
            fds: Vec::new(),
            limits: None,
            sandbox: None,
            uid: None,
            gid: None,
            groups: None,
            held: Vec::new(),
        }
    }

    /// Adds an argument. Any bytes but NUL reach the child unchanged, UTF-8
    /// or not; a NUL makes [`spawn`](Command::spawn) fail.
    ///
    /// ```
    /// let out = sup::Command::new("echo").arg("hi").output()?;
    /// assert_eq!(out.stdout, b"hi\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.argv.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    ///
    /// ```
    /// let out = sup::Command::new("echo").args(["a", "b"]).output()?;
    /// assert_eq!(out.stdout, b"a b\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.argv.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// The child's working directory (default: the host's).
    ///
    /// ```
    /// let out = sup::Command::new("pwd").current_dir("/").output()?;
    /// assert_eq!(out.stdout, b"/\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn current_dir<P: AsRef<std::path::Path>>(&mut self, dir: P) -> &mut Command {
        self.cwd = Some(dir.as_ref().as_os_str().to_owned());
        self
    }

    /// Sets a variable in the child's environment; the rest is inherited.
    ///
    /// ```
    /// let out = sup::Command::new("sh").args(["-c", "echo $GREETING"]).env("GREETING", "hi").output()?;
    /// assert_eq!(out.stdout, b"hi\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(&mut self, key: K, val: V) -> &mut Command {
        self.set_env(key.as_ref(), Some(val.as_ref().to_owned()));
        self
    }

    /// Sets several variables.
    ///
    /// ```
    /// let out = sup::Command::new("sh").args(["-c", "echo $A$B"]).envs([("A", "1"), ("B", "2")]).output()?;
    /// assert_eq!(out.stdout, b"12\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self.env(k, v);
        }
        self
    }

    /// Removes a variable from the child's environment.
    ///
    /// ```
    /// let out = sup::Command::new("sh").args(["-c", "echo ${HOME-unset}"]).env_remove("HOME").output()?;
    /// assert_eq!(out.stdout, b"unset\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Command {
        self.set_env(key.as_ref(), None);
        self
    }

    fn set_env(&mut self, key: &OsStr, val: Option<OsString>) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), val));
    }

    /// Writes these bytes (any bytes) to the child's stdin, then closes it.
    ///
    /// ```
    /// let out = sup::Command::new("cat").stdin_bytes(b"\x00\xff data".to_vec()).output()?;
    /// assert_eq!(out.stdout, b"\x00\xff data");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn stdin_bytes(&mut self, data: Vec<u8>) -> &mut Command {
        self.stdin = Some(Stdin::Bytes(data));
        self
    }

    /// The child's stdin: [`Stdio::null()`] (the default),
    /// [`Stdio::inherit()`], or [`Stdio::piped()`] to write it through
    /// [`Child::take_stdin`].
    ///
    /// ```
    /// use std::io::Write;
    /// let child = sup::Command::new("tr").arg("a-z").arg("A-Z").stdin(sup::Stdio::piped()).spawn()?;
    /// let mut stdin = child.take_stdin().unwrap();
    /// stdin.write_all(b"shout")?;
    /// drop(stdin);
    /// assert_eq!(child.wait()?.stdout, b"SHOUT");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stdin(&mut self, stdin: Stdio) -> &mut Command {
        self.stdin = Some(Stdin::Route(self.hold(stdin)));
        self
    }

    fn hold(&mut self, stdio: Stdio) -> Route {
        if let Some(fd) = stdio.1 {
            self.held.push(fd);
        }
        stdio.0
    }

    /// Resource limits for the child (see [`Limits`]).
    pub fn limits(&mut self, limits: Limits) -> &mut Command {
        self.limits = Some(limits);
        self
    }

    /// A sandbox for the child (see [`Sandbox`]).
    ///
    /// ```
    /// let dir = std::env::temp_dir();
    /// let child = sup::Command::new("true")
    ///     .sandbox(sup::Sandbox { write: vec![dir.into()], ..Default::default() }).spawn()?;
    /// assert!(child.wait()?.success());
    /// assert!(child.json()?.contains("\"sandbox\""));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn sandbox(&mut self, sandbox: Sandbox) -> &mut Command {
        self.sandbox = Some(sandbox);
        self
    }

    /// Runs the child as user `id` (the spec's "user"), as std's
    /// `CommandExt::uid`; with that user's groups unless
    /// [`gid`](Command::gid) or [`groups`](Command::groups) say otherwise.
    /// Needs a privileged host (else the spawn fails with `SUP_EPERM`).
    pub fn uid(&mut self, id: u32) -> &mut Command {
        self.uid = Some(id);
        self
    }

    /// Runs the child with group `id` (the spec's "group"), as std's
    /// `CommandExt::gid`.
    pub fn gid(&mut self, id: u32) -> &mut Command {
        self.gid = Some(id);
        self
    }

    /// Exactly these supplementary groups (the spec's "groups"), as std's
    /// unstable `CommandExt::groups`.
    pub fn groups(&mut self, ids: &[u32]) -> &mut Command {
        self.groups = Some(ids.to_vec());
        self
    }

    /// Gives the child `fd` as its descriptor `child_fd` (>= 3), the
    /// descriptor itself (the spec's "fds"): as Go's `ExtraFiles` or
    /// Python's `pass_fds`, which std has no method for. The command holds
    /// it until dropped. Every descriptor not given is closed in the child.
    ///
    /// ```
    /// use std::io::Read;
    /// let (mut r, w) = std::io::pipe()?;
    /// let mut cmd = sup::Command::new("sh");
    /// cmd.args(["-c", "echo via 3 >&3"]).fd(3, w);
    /// assert!(cmd.output()?.success());
    /// drop(cmd);                                     // the last writer
    /// let mut got = String::new();
    /// r.read_to_string(&mut got)?;
    /// assert_eq!(got, "via 3\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fd<F: Into<OwnedFd>>(&mut self, child_fd: i32, fd: F) -> &mut Command {
        let fd: OwnedFd = fd.into();
        self.fds.retain(|&(c, _)| c != child_fd);
        self.fds.push((child_fd, fd.as_raw_fd()));
        self.held.push(Arc::new(fd));
        self
    }

    /// Where the child's stdout goes (see [`Stdio`]): captured by default.
    ///
    /// ```
    /// let out = sup::Command::new("echo").arg("discarded").stdout(sup::Stdio::null()).output()?;
    /// assert!(out.stdout.is_empty());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn stdout(&mut self, stdout: Stdio) -> &mut Command {
        self.stdout = Some(self.hold(stdout));
        self
    }

    /// Where the child's stderr goes (see [`Stdio`]), [`Stdio::stdout()`]
    /// included: captured by default.
    ///
    /// ```
    /// let out = sup::Command::new("sh").args(["-c", "echo gone >&2"]).stderr(sup::Stdio::null()).output()?;
    /// assert!(out.stderr.is_empty());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn stderr(&mut self, stderr: Stdio) -> &mut Command {
        self.stderr = Some(self.hold(stderr));
        self
    }

    /// Runs the child on a new pseudo-terminal of `rows` x `cols` (each
    /// 1..=65535): its stdin, stdout and stderr are the terminal, which is
    /// its controlling terminal, and it leads a session of its own. What it
    /// writes is the stdout stream (with the terminal's `\r\n`; stderr stays
    /// empty); [`Child::take_stdin`] types into it (echoed, `\x03` is a
    /// Ctrl-C; dropping the writer sends end of input, Ctrl-D) and
    /// [`Child::resize`] changes its size. Not with
    /// [`stdin`](Command::stdin), [`stdout`](Command::stdout) or
    /// [`stderr`](Command::stderr).
    ///
    /// ```
    /// let out = sup::Command::new("sh").args(["-c", "test -t 0 && stty size"]).pty(30, 100).output()?;
    /// assert_eq!(out.stdout, b"30 100\r\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn pty(&mut self, rows: u16, cols: u16) -> &mut Command {
        self.pty = Some((rows, cols));
        self
    }

    /// Clears the child's environment: it gets only what
    /// [`env`](Command::env) sets after this call (earlier settings are
    /// dropped, as with std). The program is then searched in that
    /// environment's `PATH`, or in `/bin:/usr/bin` when it sets none.
    ///
    /// ```
    /// let out = sup::Command::new("env").env_clear().env("ONLY", "me").output()?;
    /// assert_eq!(out.stdout, b"ONLY=me\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn env_clear(&mut self) -> &mut Command {
        self.env.clear();
        self.env_clear = true;
        self
    }

    /// Ends the child (outcome [`IdleTimeout`](crate::Outcome::IdleTimeout),
    /// [`Output::phase`] [`Phase::FirstOutput`](crate::Phase::FirstOutput))
    /// when it has written no byte to stdout or stderr this long after it
    /// started; the idle timeout then counts from its first byte.
    ///
    /// ```
    /// use std::time::Duration;
    /// let out = sup::Command::new("sleep").arg("30").first_output_timeout(Duration::from_millis(100)).output()?;
    /// assert_eq!((out.outcome, out.phase), (sup::Outcome::IdleTimeout, Some(sup::Phase::FirstOutput)));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn first_output_timeout(&mut self, d: Duration) -> &mut Command {
        self.first_output_timeout = Some(d);
        self
    }

    /// How the child's process tree is contained (see [`Contain`]); default
    /// [`Contain::Group`].
    ///
    /// ```
    /// let out = sup::Command::new("true").contain(sup::Contain::Group).output()?;
    /// assert_eq!(out.contained, sup::Contain::Group);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn contain(&mut self, how: Contain) -> &mut Command {
        self.contain = Some(how);
        self
    }

    /// The cgroup v2 directory under which [`Contain::Cgroup`] makes the
    /// child's cgroup (default: the environment's `SUP_CGROUP_PARENT`, else
    /// one the library finds).
    ///
    /// ```
    /// let err = sup::Command::new("true").contain(sup::Contain::Cgroup)
    ///     .cgroup_parent("/no/such/cgroup").spawn().unwrap_err();
    /// assert!(err.detail().contains("/no/such/cgroup"), "{err}");
    /// ```
    pub fn cgroup_parent<P: AsRef<std::path::Path>>(&mut self, dir: P) -> &mut Command {
        self.cgroup_parent = Some(dir.as_ref().as_os_str().to_owned());
        self
    }

    /// With `true`, the spawn fails (`SUP_ENOTSUP`, the detail saying why)
    /// where no sentinel runs, so that only the main process, not its tree,
    /// would die with the host ([`HostDeath::MainProcess`](crate::HostDeath)).
    /// Default `false`.
    ///
    /// ```
    /// let out = sup::Command::new("true").require_sentinel(true).output()?;
    /// assert_eq!(out.host_death, sup::HostDeath::Tree);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn require_sentinel(&mut self, required: bool) -> &mut Command {
        self.require_sentinel = required;
        self
    }

    /// Ends the child after this long without a byte on stdout or stderr
    /// (outcome [`IdleTimeout`](crate::Outcome::IdleTimeout)). Default: off.
    /// A duration beyond the library's limit (1e12 ms, 31 years), up to
    /// `Duration::MAX`, means "never" (so do those of the other timeouts).
    ///
    /// ```
    /// use std::time::Duration;
    /// let out = sup::Command::new("sleep").arg("30").idle_timeout(Duration::from_millis(100)).output()?;
    /// assert_eq!(out.outcome, sup::Outcome::IdleTimeout);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn idle_timeout(&mut self, d: Duration) -> &mut Command {
        self.idle_timeout = Some(d);
        self
    }

    /// Ends the child (outcome [`IdleTimeout`](crate::Outcome::IdleTimeout),
    /// [`Phase::Input`](crate::Phase::Input)) once it has waited this long
    /// for input it cannot get, as [`Child::input_wanted`](crate::Child::input_wanted)
    /// sees it. Default: off.
    ///
    /// ```
    /// use std::time::Duration;
    /// let out = sup::Command::new("sh").args(["-c", "read x"]).stdin(sup::Stdio::piped())
    ///     .input_wait_timeout(Duration::from_millis(200)).spawn()?;
    /// let out = out.wait()?;
    /// assert_eq!(out.phase, Some(sup::Phase::Input));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn input_wait_timeout(&mut self, d: Duration) -> &mut Command {
        self.input_wait_timeout = Some(d);
        self
    }

    /// Ends the child this long after spawn, whatever it prints (outcome
    /// [`MaxRuntime`](crate::Outcome::MaxRuntime)). Default: off.
    ///
    /// ```
    /// use std::time::Duration;
    /// let out = sup::Command::new("sleep").arg("30").max_runtime(Duration::from_millis(100)).output()?;
    /// assert_eq!(out.outcome, sup::Outcome::MaxRuntime);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn max_runtime(&mut self, d: Duration) -> &mut Command {
        self.max_runtime = Some(d);
        self
    }

    /// Time between the interrupt signal and SIGKILL (default 5 s). Here the
    /// idle limit starts at the child's first line, once it ignores SIGTERM:
    ///
    /// ```
    /// use std::time::Duration;
    /// let out = sup::Command::new("sh").args(["-c", "trap '' TERM; echo ignoring TERM; sleep 30"])
    ///     .first_output_timeout(Duration::from_secs(10)).idle_timeout(Duration::from_millis(100))
    ///     .grace(Duration::from_millis(100)).output()?;
    /// assert!(out.forced_kill);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn grace(&mut self, d: Duration) -> &mut Command {
        self.grace = Some(d);
        self
    }

    /// The signal sent first on interrupt or timeout (default `SIGTERM`): a
    /// [`Signal`] or its number; one out of range fails the spawn.
    ///
    /// ```
    /// use std::time::Duration;
    /// let out = sup::Command::new("sleep").arg("30").interrupt_signal(sup::Signal::INT)
    ///     .max_runtime(Duration::from_millis(100)).output()?;
    /// assert_eq!(out.signal, Some(sup::Signal::INT));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn interrupt_signal<S: Into<Signal>>(&mut self, signal: S) -> &mut Command {
        self.interrupt_signal = Some(signal.into());
        self
    }

    /// `true`: on a timeout send SIGKILL at once instead of the interrupt
    /// signal and a grace period (default `false`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let out = sup::Command::new("sleep").arg("30").kill_on_timeout(true)
    ///     .idle_timeout(Duration::from_millis(100)).output()?;
    /// assert_eq!(out.signal, Some(sup::Signal::KILL));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn kill_on_timeout(&mut self, kill: bool) -> &mut Command {
        self.kill_on_timeout = kill;
        self
    }

    /// Bytes kept per stream (default 16 MiB): beyond it the first half and
    /// the newest half are kept, and the rest is counted in
    /// [`Output::stdout_omitted`] / [`Output::stderr_omitted`].
    ///
    /// ```
    /// let out = sup::Command::new("sh").args(["-c", "printf 0123456789"]).max_output_bytes(4).output()?;
    /// assert_eq!(out.stdout, b"0189");
    /// assert_eq!(out.stdout_omitted, 6);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn max_output_bytes(&mut self, n: u64) -> &mut Command {
        self.max_output_bytes = Some(n);
        self
    }

    /// Holds the child back (it blocks on write) while more than `n` bytes of
    /// a stream have not been read through a live reader, so the reader loses
    /// nothing; the idle clock pauses meanwhile. Default 0: always drain.
    ///
    /// ```
    /// use std::io::Read;
    /// let child = sup::Command::new("seq").arg("100000").backpressure_bytes(4096).spawn()?;
    /// let mut all = Vec::new();
    /// child.stdout().read_to_end(&mut all)?;
    /// assert_eq!(all.len(), 588895);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn backpressure_bytes(&mut self, n: u64) -> &mut Command {
        self.backpressure_bytes = Some(n);
        self
    }

    /// `true`: the child's process group becomes the foreground group of the
    /// host's controlling terminal while it runs (an interactive child can
    /// then read the terminal and get its Ctrl-C); the host's group gets it
    /// back when the child ends. Needs [`Stdio::inherit()`] for stdin
    /// (otherwise the spawn fails, [`Part::Spec`](crate::Part::Spec)).
    /// Ignored when the host is not in the foreground. Default `false`.
    ///
    /// ```
    /// let err = sup::Command::new("true").tty_foreground(true).spawn().unwrap_err();
    /// assert_eq!(err.part(), Some(sup::Part::Spec));
    /// let out = sup::Command::new("true").stdin(sup::Stdio::inherit()).tty_foreground(true).output()?;
    /// assert!(out.success());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn tty_foreground(&mut self, on: bool) -> &mut Command {
        self.tty_foreground = on;
        self
    }

    /// Starts the child. A program that cannot be started fails here: see
    /// [`Error::part`](crate::Error::part) and
    /// [`Error::kind`](crate::Error::kind).
    ///
    /// The call returns once the child has exec'd (or failed to): it is
    /// cloned on the calling thread, which waits for the exec, normally
    /// well under a millisecond, but as long as a slow exec
    /// takes (a program on a network file system). Async code that cannot
    /// afford that uses `spawn_async` (feature `tokio`).
    ///
    /// ```
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// child.abort()?;
    /// assert_eq!(child.wait()?.outcome, sup::Outcome::Aborted);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn spawn(&self) -> Result<Child> {
        if self.pty.is_some() {
            let set = [("stdin_bytes() or stdin()", self.stdin.is_some()), ("stdout()", self.stdout.is_some()), ("stderr()", self.stderr.is_some()), ("tty_foreground()", self.tty_foreground)];
            if let Some((what, _)) = set.iter().find(|(_, on)| *on) {
                return Err(Error::new(
                    sup_sys::SUP_EINVAL,
                    Some(Part::Spec),
                    format!("spec: {what} not allowed with pty() (the child's stdin, stdout and stderr are its terminal; type its input with Child::take_stdin)"),
                ));
            }
        }
        let mut spec = self.spec();
        spec.push(0);
        let mut p: *mut sup_sys::sup_proc = std::ptr::null_mut();
        let mut errbuf = [0u8; sup_sys::SUP_ERRBUF_SIZE];
        let mut part: i32 = 0;
        // SAFETY: spec is NUL-terminated (the JSON escapes every byte < 0x20,
        // so it holds no other NUL); errbuf is SUP_ERRBUF_SIZE bytes long.
        let rc = unsafe {
            sup_sys::sup_spawn_v2(
                spec.as_ptr().cast(),
                &mut p,
                errbuf.as_mut_ptr().cast(),
                errbuf.len(),
                &mut part,
            )
        };
        if rc < 0 {
            let end = errbuf.iter().position(|&b| b == 0).unwrap_or(errbuf.len());
            let detail = String::from_utf8_lossy(&errbuf[..end]).into_owned();
            return Err(Error::new(rc, Part::from_raw(part), detail));
        }
        let p = NonNull::new(p).ok_or_else(|| Error::from_code(sup_sys::SUP_EINTERNAL))?;
        let writable = self.pty.is_some() || matches!(self.stdin, Some(Stdin::Route(Route::Piped)));
        // Only these fill the result fields that only its JSON carries.
        let read_json = self.limits.is_some()
            || self.sandbox.is_some()
            || self.uid.is_some()
            || self.gid.is_some()
            || self.groups.is_some()
            || self.input_wait_timeout.is_some()
            || self.tty_foreground
            || matches!(self.contain, Some(Contain::Cgroup | Contain::Auto))
            || self.stdout == Some(Route::Tee)
            || self.stderr == Some(Route::Tee);
        Ok(Child::from_raw(p, writable, read_json))
    }

    /// [`spawn`](Command::spawn) for async code: the library clones the
    /// child on the calling thread in tens of microseconds and waits only
    /// for its exec, so this calls it directly, with no thread of tokio's
    /// blocking pool (200 concurrent spawns keep the runtime's thread
    /// count, as `tokio::process` does). A program on a slow (network)
    /// file system holds the runtime's thread as long as its exec takes.
    /// Needs a tokio runtime for the [`Child`]'s async waits and readers.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
    /// let child = sup::Command::new("echo").arg("hi").spawn_async().await?;
    /// assert_eq!(child.wait_async().await?.stdout, b"hi\n");
    /// # Ok::<(), sup::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn spawn_async(&self) -> Result<Child> {
        self.spawn()
    }

    /// Spawns and waits, as std's `output()`: [`spawn`](Command::spawn)
    /// then [`Child::wait`](crate::Child::wait). A piped stdin is closed at
    /// once. Nothing reads the streams live here, so a command with
    /// [`backpressure_bytes`](Command::backpressure_bytes) and a captured
    /// stream is refused ([`Part::Spec`](crate::Part::Spec)): its child
    /// would block once that many bytes waited, and never end. Spawn it and
    /// read [`Child::stdout`](crate::Child::stdout) instead.
    ///
    /// ```
    /// let out = sup::Command::new("true").output()?;
    /// assert!(out.success());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn output(&self) -> Result<Output> {
        self.check_no_live_reader("output()")?;
        let child = self.spawn()?;
        drop(child.take_stdin());
        let out = child.wait()?;
        drop(child);
        Ok(Arc::try_unwrap(out).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// As std's `status()`: stdout and stderr go to the host's own unless
    /// set ([`Stdio::inherit`]; nothing captured), then as
    /// [`output`](Command::output). [`Output::success`] and
    /// [`Output::exit_code`] give what std's `ExitStatus` does.
    ///
    /// ```
    /// assert_eq!(sup::Command::new("sh").args(["-c", "exit 3"]).status()?.exit_code, Some(3));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn status(&self) -> Result<Output> {
        let mut cmd = self.clone();
        if cmd.pty.is_none() {
            cmd.stdout.get_or_insert(Route::Inherit);
            cmd.stderr.get_or_insert(Route::Inherit);
        }
        cmd.output()
    }

    /// [`output`](Command::output) under its former name.
    #[deprecated(since = "0.4.0", note = "renamed output(), as std's")]
    pub fn run(&self) -> Result<Output> {
        self.output()
    }

    /// [`output`](Command::output) for async code: spawns as
    /// [`spawn_async`](Command::spawn_async) and waits on tokio's reactor.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
    /// let out = sup::Command::new("echo").arg("hi").output_async().await?;
    /// assert_eq!(out.stdout, b"hi\n");
    /// # Ok::<(), sup::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn output_async(&self) -> Result<Output> {
        self.check_no_live_reader("output_async()")?;
        let child = self.spawn_async().await?;
        drop(child.take_stdin());
        let out = child.wait_async().await?;
        drop(child);
        Ok(Arc::try_unwrap(out).unwrap_or_else(|shared| (*shared).clone()))
    }

    fn check_no_live_reader(&self, method: &str) -> Result<()> {
        let captured = |r: Option<Route>| matches!(r, None | Some(Route::Piped) | Some(Route::Tee));
        if self.backpressure_bytes.is_some_and(|n| n > 0) && (captured(self.stdout) || captured(self.stderr)) {
            return Err(Error::new(
                sup_sys::SUP_EINVAL,
                Some(Part::Spec),
                format!("backpressure_bytes: {method} reads no stream while the child runs, so it would block for ever; spawn() and read Child::stdout/stderr"),
            ));
        }
        Ok(())
    }

    /// The program, as std's `get_program`.
    ///
    /// ```
    /// assert_eq!(sup::Command::new("ls").get_program(), "ls");
    /// ```
    pub fn get_program(&self) -> &OsStr {
        &self.argv[0]
    }

    /// The arguments after the program, as std's `get_args`.
    ///
    /// ```
    /// let mut cmd = sup::Command::new("ls");
    /// cmd.args(["-l", "/"]);
    /// assert_eq!(cmd.get_args().collect::<Vec<_>>(), ["-l", "/"]);
    /// ```
    pub fn get_args(&self) -> impl ExactSizeIterator<Item = &OsStr> {
        self.argv[1..].iter().map(OsString::as_os_str)
    }

    /// The environment changes, as std's `get_envs`: each variable set
    /// (`Some`) or removed (`None`) on top of the inherited (or, after
    /// [`env_clear`](Command::env_clear), empty) environment.
    ///
    /// ```
    /// let mut cmd = sup::Command::new("env");
    /// cmd.env("A", "1").env_remove("B");
    /// let envs: Vec<_> = cmd.get_envs().collect();
    /// assert_eq!(envs, [("A".as_ref(), Some("1".as_ref())), ("B".as_ref(), None)]);
    /// ```
    pub fn get_envs(&self) -> impl ExactSizeIterator<Item = (&OsStr, Option<&OsStr>)> {
        self.env.iter().map(|(k, v)| (k.as_os_str(), v.as_deref()))
    }

    /// The JSON spec this command hands to the library (without NUL).
    ///
    /// ```
    /// let spec = sup::Command::new("echo").arg("a\"b").spec();
    /// assert_eq!(spec, br#"{"argv":["echo","a\"b"]}"#);
    /// ```
    pub fn spec(&self) -> Vec<u8> {
        let mut s = Vec::with_capacity(64);
        s.extend_from_slice(b"{\"argv\":[");
        for (i, a) in self.argv.iter().enumerate() {
            if i > 0 {
                s.push(b',');
            }
            json_str(&mut s, a.as_bytes());
        }
        s.push(b']');
        if let Some(cwd) = &self.cwd {
            s.extend_from_slice(b",\"cwd\":");
            json_str(&mut s, cwd.as_bytes());
        }
        if !self.env.is_empty() {
            s.extend_from_slice(b",\"env\":{");
            for (i, (k, v)) in self.env.iter().enumerate() {
                if i > 0 {
                    s.push(b',');
                }
                json_str(&mut s, k.as_bytes());
                s.push(b':');
                match v {
                    Some(v) => json_str(&mut s, v.as_bytes()),
                    None => s.extend_from_slice(b"null"),
                }
            }
            s.push(b'}');
        }
        if self.env_clear {
            s.extend_from_slice(b",\"env_clear\":true");
        }
        match &self.stdin {
            None => {}
            Some(Stdin::Route(r)) => s.extend_from_slice(format!(",\"stdin\":{}", r.spec_value()).as_bytes()),
            Some(Stdin::Bytes(data)) => {
                s.extend_from_slice(b",\"stdin\":{\"base64\":\"");
                base64(&mut s, data);
                s.extend_from_slice(b"\"}");
            }
        }
        for (key, route) in [("stdout", self.stdout), ("stderr", self.stderr)] {
            if let Some(r) = route {
                s.extend_from_slice(format!(",\"{key}\":{}", r.spec_value()).as_bytes());
            }
        }
        if !self.fds.is_empty() {
            s.extend_from_slice(b",\"fds\":{");
            for (i, (child, host)) in self.fds.iter().enumerate() {
                if i > 0 {
                    s.push(b',');
                }
                s.extend_from_slice(format!("\"{child}\":{host}").as_bytes());
            }
            s.push(b'}');
        }
        if let Some((rows, cols)) = self.pty {
            s.extend_from_slice(format!(",\"pty\":{{\"rows\":{rows},\"cols\":{cols}}}").as_bytes());
        }
        if let Some(how) = self.contain {
            s.extend_from_slice(format!(",\"contain\":\"{}\"", how.spec_name()).as_bytes());
        }
        if let Some(dir) = &self.cgroup_parent {
            s.extend_from_slice(b",\"cgroup_parent\":");
            json_str(&mut s, dir.as_bytes());
        }
        if self.require_sentinel {
            s.extend_from_slice(b",\"require_sentinel\":true");
        }
        if let Some(l) = &self.limits {
            l.spec(&mut s);
        }
        if let Some(b) = &self.sandbox {
            b.spec(&mut s);
        }
        if let Some(id) = self.uid {
            s.extend_from_slice(format!(",\"user\":{id}").as_bytes());
        }
        if let Some(id) = self.gid {
            s.extend_from_slice(format!(",\"group\":{id}").as_bytes());
        }
        if let Some(ids) = &self.groups {
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            s.extend_from_slice(format!(",\"groups\":[{}]", ids.join(",")).as_bytes());
        }

        let mut num = |key: &str, v: u64| {
            s.extend_from_slice(format!(",\"{key}\":{v}").as_bytes());
        };
        if let Some(d) = self.idle_timeout {
            num("idle_timeout_ms", millis(d));
        }
        if let Some(d) = self.input_wait_timeout {
            num("input_wait_timeout_ms", millis(d));
        }
        if let Some(d) = self.max_runtime {
            num("max_runtime_ms", millis(d));
        }
        if let Some(d) = self.first_output_timeout {
            num("first_output_timeout_ms", millis(d));
        }
        if let Some(d) = self.grace {
            num("grace_ms", millis(d));
        }
        if let Some(sig) = self.interrupt_signal {
            // A number the library validates ("spec: interrupt_signal: ...").
            s.extend_from_slice(format!(",\"interrupt_signal\":{}", sig.as_raw()).as_bytes());
        }
        if self.kill_on_timeout {
            s.extend_from_slice(b",\"on_timeout\":\"kill\"");
        }
        let mut num = |key: &str, v: u64| {
            s.extend_from_slice(format!(",\"{key}\":{v}").as_bytes());
        };
        if let Some(n) = self.max_output_bytes {
            num("max_output_bytes", n);
        }
        if let Some(n) = self.backpressure_bytes {
            num("backpressure_bytes", n);
        }
        if self.tty_foreground {
            s.extend_from_slice(b",\"tty_foreground\":true");
        }
        s.push(b'}');
        s
    }
}

/// The library's limit for a duration: 1e12 ms (31 years).
const MAX_MS: u64 = 1_000_000_000_000;

/// Milliseconds, rounded up so that a non-zero duration never means "off",
/// and clamped to the library's limit: a longer duration (up to
/// `Duration::MAX`) means "never", as Go's shim maps huge values.
fn millis(d: Duration) -> u64 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    u64::try_from(ms).unwrap_or(u64::MAX).min(MAX_MS)
}

/// A JSON string of raw bytes: `"` `\` and bytes < 0x20 escaped, every other
/// byte passed through unchanged (the library hands them to the kernel as
/// they are, valid UTF-8 or not).
pub(crate) fn json_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0..=0x1f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

fn base64(out: &mut Vec<u8>, data: &[u8]) {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        out.push(T[(n >> 18) as usize & 63]);
        out.push(T[(n >> 12) as usize & 63]);
        out.push(if c.len() > 1 { T[(n >> 6) as usize & 63] } else { b'=' });
        out.push(if c.len() > 2 { T[n as usize & 63] } else { b'=' });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_only_what_json_needs() {
        let mut s = Vec::new();
        json_str(&mut s, b"a\"\\\n\x00\x1f\x7f\xff\xc3\xa9");
        assert_eq!(s, b"\"a\\\"\\\\\\u000a\\u0000\\u001f\x7f\xff\xc3\xa9\"");
    }

    #[test]
    fn base64_rfc4648_vectors() {
        for (i, o) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")] {
            let mut s = Vec::new();
            base64(&mut s, i.as_bytes());
            assert_eq!(s, o.as_bytes());
        }
    }

    #[test]
    fn millis_rounds_up() {
        assert_eq!(millis(Duration::from_micros(1)), 1);
        assert_eq!(millis(Duration::ZERO), 0);
        assert_eq!(millis(Duration::from_millis(1500)), 1500);
        assert_eq!(millis(Duration::MAX), MAX_MS);
        assert_eq!(millis(Duration::from_secs(u64::MAX / 2)), MAX_MS);
    }

    #[test]
    fn spec_of_the_0_3_keys() {
        let mut c = Command::new("x");
        c.env("A", "1").env_clear().env("B", "2").stderr(Stdio::stdout()).stdout(Stdio::tee()).pty(30, 100);
        c.first_output_timeout(Duration::from_millis(5)).contain(Contain::Auto).cgroup_parent("/sys/fs/cgroup/x");
        let spec = String::from_utf8(c.spec()).unwrap();
        assert_eq!(
            spec,
            r#"{"argv":["x"],"env":{"B":"2"},"env_clear":true,"stdout":"tee","stderr":"stdout","pty":{"rows":30,"cols":100},"contain":"auto","cgroup_parent":"/sys/fs/cgroup/x","first_output_timeout_ms":5}"#
        );
        let spec = String::from_utf8(Command::new("x").stdin(Stdio::null()).spec()).unwrap();
        assert_eq!(spec, r#"{"argv":["x"],"stdin":"null"}"#);
    }

    #[test]
    fn env_last_setting_wins() {
        let mut c = Command::new("x");
        c.env("A", "1").env_remove("A").env("B", "2").env("A", "3");
        let spec = String::from_utf8(c.spec()).unwrap();
        assert_eq!(spec, r#"{"argv":["x"],"env":{"B":"2","A":"3"}}"#);
    }
}
