use std::ffi::CStr;
use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use crate::command::Contain;
use crate::confine::{Confined, LimitHit};
use crate::json::{self, Value};
use crate::error::{Error, Result, cvt};
use crate::handle::Handle;
use crate::signal::Signal;

/// What ended the main process, decided once by the library with the
/// priority aborted > idle_timeout / max_runtime > interrupted > signaled >
/// exited.
///
/// ```
/// assert_eq!(sup::Outcome::IdleTimeout.as_str(), "idle_timeout");
/// assert_eq!(sup::Outcome::Exited.to_string(), "exited");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// Exited by itself; see [`Output::exit_code`].
    Exited,
    /// Died from a signal sup did not send; see [`Output::signal`].
    Signaled,
    /// Ended after the idle timeout passed without output.
    IdleTimeout,
    /// Ended after the maximum runtime.
    MaxRuntime,
    /// Ended by [`Child::interrupt`](crate::Child::interrupt).
    Interrupted,
    /// Ended by [`Child::abort`](crate::Child::abort) (or a drop).
    Aborted,
}

impl Outcome {
    pub(crate) fn from_raw(v: i32) -> Option<Outcome> {
        Some(match v {
            sup_sys::SUP_OUTCOME_EXITED => Outcome::Exited,
            sup_sys::SUP_OUTCOME_SIGNALED => Outcome::Signaled,
            sup_sys::SUP_OUTCOME_IDLE_TIMEOUT => Outcome::IdleTimeout,
            sup_sys::SUP_OUTCOME_MAX_RUNTIME => Outcome::MaxRuntime,
            sup_sys::SUP_OUTCOME_INTERRUPTED => Outcome::Interrupted,
            sup_sys::SUP_OUTCOME_ABORTED => Outcome::Aborted,
            _ => return None,
        })
    }

    /// The library's value (`sup_sys::SUP_OUTCOME_*`).
    ///
    /// ```
    /// assert_eq!(sup::Outcome::Aborted.as_raw(), sup_sys::SUP_OUTCOME_ABORTED);
    /// ```
    pub fn as_raw(self) -> i32 {
        match self {
            Outcome::Exited => sup_sys::SUP_OUTCOME_EXITED,
            Outcome::Signaled => sup_sys::SUP_OUTCOME_SIGNALED,
            Outcome::IdleTimeout => sup_sys::SUP_OUTCOME_IDLE_TIMEOUT,
            Outcome::MaxRuntime => sup_sys::SUP_OUTCOME_MAX_RUNTIME,
            Outcome::Interrupted => sup_sys::SUP_OUTCOME_INTERRUPTED,
            Outcome::Aborted => sup_sys::SUP_OUTCOME_ABORTED,
        }
    }

    /// The library's name, as in the result JSON: `"exited"`, `"signaled"`,
    /// `"idle_timeout"`, `"max_runtime"`, `"interrupted"`, `"aborted"`.
    ///
    /// ```
    /// assert_eq!(sup::Outcome::MaxRuntime.as_str(), "max_runtime");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Exited => "exited",
            Outcome::Signaled => "signaled",
            Outcome::IdleTimeout => "idle_timeout",
            Outcome::MaxRuntime => "max_runtime",
            Outcome::Interrupted => "interrupted",
            Outcome::Aborted => "aborted",
        }
    }

    /// The name the loaded library gives (`sup_outcome_name`); equal to
    /// [`as_str`](Outcome::as_str).
    ///
    /// ```
    /// assert_eq!(sup::Outcome::Signaled.library_name(), "signaled");
    /// ```
    pub fn library_name(self) -> &'static str {
        // SAFETY: sup_outcome_name returns a static string for every valid outcome.
        let p = unsafe { sup_sys::sup_outcome_name(self.as_raw()) };
        if p.is_null() {
            return self.as_str();
        }
        unsafe { CStr::from_ptr(p) }.to_str().unwrap_or(self.as_str())
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The main process's resource use (`getrusage` of the reaped child); all
/// zero when its status was lost.
///
/// ```
/// let out = sup::Command::new("true").output()?;
/// assert!(out.rusage.max_rss_kb > 0);
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rusage {
    /// CPU time in user mode.
    pub user: Duration,
    /// CPU time in the kernel.
    pub sys: Duration,
    /// Peak resident set size, KiB.
    pub max_rss_kb: u64,
}

/// Which limit an [`IdleTimeout`](Outcome::IdleTimeout) outcome hit.
///
/// ```
/// use std::time::Duration;
/// let out = sup::Command::new("sleep").arg("30").idle_timeout(Duration::from_millis(50)).output()?;
/// assert_eq!(out.phase, Some(sup::Phase::Idle));
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// No first byte within [`first_output_timeout`](crate::Command::first_output_timeout).
    FirstOutput,
    /// Silent for [`idle_timeout`](crate::Command::idle_timeout) after output.
    Idle,
    /// Waited for input longer than
    /// [`input_wait_timeout`](crate::Command::input_wait_timeout).
    Input,
}

/// What would end with the host, should it die (`SIGKILL` included) while
/// the child runs: [`Output::host_death`].
///
/// ```
/// let out = sup::Command::new("true").output()?;
/// // Where no sentinel can run (no /proc, nothing installed), MainProcess.
/// assert!(matches!(out.host_death, sup::HostDeath::Tree | sup::HostDeath::MainProcess));
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostDeath {
    /// The library's sentinel ends the child's whole tree (its cgroup, or
    /// its process group).
    Tree,
    /// No sentinel runs: only the main process dies with the host
    /// (`PR_SET_PDEATHSIG`). [`Command::require_sentinel`](crate::Command::require_sentinel)
    /// refuses such a spawn.
    MainProcess,
}

/// CPU time, in user mode and in the kernel.
///
/// ```
/// let out = sup::Command::new("true").output()?;
/// assert_eq!(out.tree_cpu.is_some(), out.contained == sup::Contain::Cgroup);
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CpuTime {
    /// In user mode.
    pub user: Duration,
    /// In the kernel.
    pub sys: Duration,
}

/// A signal sup sent to the child's group, and when.
///
/// ```
/// use std::time::Duration;
/// let out = sup::Command::new("sleep").arg("30").max_runtime(Duration::from_millis(50)).output()?;
/// assert_eq!(out.signals_sent[0].signal, sup::Signal::TERM);
/// assert!(out.signals_sent[0].at >= Duration::from_millis(50));
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SentSignal {
    /// The signal.
    pub signal: Signal,
    /// Since the spawn call.
    pub at: Duration,
}

/// The final result of a supervised child; immutable once the library
/// decided it. [`Child::wait`](crate::Child::wait) hands out one shared
/// copy (`Arc<Output>`), however often it is called.
///
/// ```
/// let out = sup::Command::new("sh").args(["-c", "printf out; exit 7"]).output()?;
/// assert_eq!((out.outcome, out.exit_code, out.signal), (sup::Outcome::Exited, Some(7), None));
/// assert_eq!(out.stdout, b"out");
/// assert_eq!(out.status().unwrap().code(), Some(7));
/// assert_eq!(out.to_string(), format!("exited with code 7 after {:.3} s", out.duration.as_secs_f64()));
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Output {
    /// What ended the main process.
    pub outcome: Outcome,
    /// The exit code (0..=255), when it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, when it died from one (sent by sup or not).
    pub signal: Option<Signal>,
    /// sup had to send SIGKILL (after grace, on kill-on-timeout, abort, or to
    /// end what the main process left behind).
    pub forced_kill: bool,
    /// The host reaped the child itself (SIGCHLD ignored, or `waitpid(-1)`):
    /// neither exit code nor signal is known.
    pub status_lost: bool,
    /// From spawn until the result was final.
    pub duration: Duration,
    /// The main process's id (it may belong to another process by now).
    pub pid: u32,
    /// The main process's resource use.
    pub rusage: Rusage,
    /// The signals sup sent to the group, in order (`SIGCONT` sent beside
    /// an interrupt signal is not listed).
    pub signals_sent: Vec<SentSignal>,
    /// For an [`IdleTimeout`](Outcome::IdleTimeout): which limit fired;
    /// `None` for other outcomes.
    pub phase: Option<Phase>,
    /// How the tree was contained: [`Contain::Group`] or
    /// [`Contain::Cgroup`] (an [`Auto`](Contain::Auto) that fell back says
    /// `Group`).
    pub contained: Contain,
    /// In a cgroup: the processes of the tree still alive when the main
    /// process had ended, which sup then killed; `None` in group mode.
    pub leftovers_ended: Option<u64>,
    /// In a cgroup: the CPU time of the whole tree (where
    /// [`rusage`](Output::rusage) has the main process's only); `None` in
    /// group mode.
    pub tree_cpu: Option<CpuTime>,
    /// What would have ended with the host had it died while the child ran.
    pub host_death: HostDeath,
    /// Why a [`Contain::Auto`] ran in group mode; `None` when it did not
    /// fall back (or was not asked).
    pub contain_fallback: Option<String>,
    /// The child's cgroup directory when it could not be removed (a process
    /// stuck in uninterruptible sleep; sup tries again later); else `None`.
    pub cgroup_left: Option<std::path::PathBuf>,

    /// Whether the child was waiting for input at its end, whatever ended
    /// it (`"waiting_for_input"`); `None` when nobody asked (neither
    /// [`input_wait_timeout`](crate::Command::input_wait_timeout) nor
    /// [`Child::input_wanted`](crate::Child::input_wanted)), when sup could
    /// not see, or when it ended within ~30 ms of its last output.
    ///
    /// ```
    /// use std::time::Duration;
    /// let child = sup::Command::new("sh").args(["-c", "read x"]).stdin(sup::Stdio::piped())
    ///     .input_wait_timeout(Duration::from_millis(300)).spawn()?;
    /// let out = child.wait()?; // its stdin stays open, unwritten
    /// assert_eq!((out.phase, out.waiting_for_input), (Some(sup::Phase::Input), Some(true)));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub waiting_for_input: Option<bool>,
    /// What confined the child ([`limits`](crate::Command::limits),
    /// [`sandbox`](crate::Command::sandbox), [`uid`](crate::Command::uid)
    /// and the groups) and how; `None` without them.
    pub confined: Option<Confined>,
    /// The limit that ended the child; `None` when none did.
    pub limit: Option<LimitHit>,
    /// The errno name with which the copy of a [`Stdio::tee`](crate::Stdio::tee)
    /// stdout to the host's failed (`"EPIPE"`: its reader had gone, and the
    /// child's next write failed too); `None` when it did not.
    pub stdout_tee_error: Option<String>,
    /// As [`stdout_tee_error`](Output::stdout_tee_error), for stderr.
    pub stderr_tee_error: Option<String>,
    /// With [`tty_foreground`](crate::Command::tty_foreground): whether the
    /// child was given the terminal's foreground; `None` when not asked.
    pub tty_foreground: Option<bool>,
    /// Why the foreground was not given, when it was not.
    pub tty_refused: Option<String>,

    /// The captured stdout, exactly as written (head and newest tail when
    /// more than `max_output_bytes` were written).
    pub stdout: Vec<u8>,
    /// The captured stderr, exactly as written.
    pub stderr: Vec<u8>,
    /// Bytes of stdout written but not kept (dropped from the middle).
    pub stdout_omitted: u64,
    /// Bytes of stderr written but not kept.
    pub stderr_omitted: u64,
}

impl Output {
    /// Exited by itself with code 0.
    ///
    /// ```
    /// assert!(sup::Command::new("true").output()?.success());
    /// assert!(!sup::Command::new("false").output()?.success());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn success(&self) -> bool {
        self.outcome == Outcome::Exited && self.exit_code == Some(0)
    }

    /// The wait status as std's [`ExitStatus`] (with `code()`, `signal()`,
    /// `success()` and `std::os::unix::process::ExitStatusExt`); `None`
    /// when the status was lost.
    ///
    /// ```
    /// use std::os::unix::process::ExitStatusExt;
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// child.abort()?;
    /// let status = child.wait()?.status().unwrap();
    /// assert_eq!((status.code(), status.signal()), (None, Some(libc::SIGKILL)));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn status(&self) -> Option<ExitStatus> {
        match (self.exit_code, self.signal) {
            (Some(code), _) => Some(ExitStatus::from_raw((code & 0xff) << 8)),
            (None, Some(sig)) => Some(ExitStatus::from_raw(sig.as_raw() & 0x7f)),
            (None, None) => None,
        }
    }

    /// Reads the final result of a handle; with `json`, the fields that only
    /// the result's JSON carries too (building that text escapes the
    /// captured streams, so it is done only when the spawn asked for
    /// something that fills them).
    pub(crate) fn read(h: &Handle, json: bool) -> Result<Output> {
        let p = h.raw();
        // SAFETY: p is live and its result final; pointers returned by
        // sup_result_output / sup_result stay valid until sup_release, which
        // cannot happen while &Handle exists.
        unsafe {
            let raw = cvt(sup_sys::sup_result_outcome(p))?;
            let outcome = Outcome::from_raw(raw).ok_or_else(|| Error::from_code(sup_sys::SUP_EINTERNAL))?;
            let optional = |rc: i32| -> Result<Option<i32>> {
                if rc == sup_sys::SUP_ENODATA { Ok(None) } else { cvt(rc).map(Some) }
            };
            let exit_code = optional(sup_sys::sup_result_exit_code(p))?;
            let signal = optional(sup_sys::sup_result_term_signal(p))?.map(Signal::from_raw);
            let forced_kill = cvt(sup_sys::sup_result_forced_kill(p))? == 1;
            let status_lost = cvt(sup_sys::sup_result_status_lost(p))? == 1;
            let ms = sup_sys::sup_result_duration_ms(p);
            if ms < 0.0 {
                return Err(Error::from_code(ms as i32));
            }
            let (mut user_ms, mut sys_ms, mut rss) = (0.0f64, 0.0f64, 0i64);
            cvt(sup_sys::sup_result_rusage(p, &mut user_ms, &mut sys_ms, &mut rss))?;
            let count = cvt(sup_sys::sup_result_signals(p, std::ptr::null_mut(), std::ptr::null_mut(), 0))? as usize;
            let (mut sigs, mut at) = (vec![0i32; count], vec![0f64; count]);
            let count = (cvt(sup_sys::sup_result_signals(p, sigs.as_mut_ptr(), at.as_mut_ptr(), count))? as usize).min(count);
            let signals_sent = (0..count)
                .map(|i| SentSignal { signal: Signal::from_raw(sigs[i]), at: ms_duration(at[i]) })
                .collect();
            let bytes = |stream| -> Result<Vec<u8>> {
                let mut len = 0usize;
                let ptr = sup_sys::sup_result_output(p, stream, &mut len);
                if ptr.is_null() {
                    return Err(Error::from_code(sup_sys::SUP_EBUSY));
                }
                Ok(std::slice::from_raw_parts(ptr.cast::<u8>(), len).to_vec())
            };
            let omitted = |stream| -> Result<u64> {
                let n = sup_sys::sup_result_omitted_bytes(p, stream);
                if n < 0 { Err(Error::from_code(n as i32)) } else { Ok(n as u64) }
            };
            let stdout = bytes(sup_sys::SUP_STDOUT)?;
            let stderr = bytes(sup_sys::SUP_STDERR)?;
            let phase = match cvt(sup_sys::sup_result_phase(p))? {
                sup_sys::SUP_PHASE_FIRST_OUTPUT => Some(Phase::FirstOutput),
                sup_sys::SUP_PHASE_IDLE => Some(Phase::Idle),
                sup_sys::SUP_PHASE_INPUT => Some(Phase::Input),
                _ => None,
            };
            let contained = match cvt(sup_sys::sup_result_contained(p))? {
                sup_sys::SUP_CONTAIN_CGROUP => Contain::Cgroup,
                _ => Contain::Group,
            };
            let leftovers_ended = match sup_sys::sup_result_leftovers_ended(p) {
                n if n >= 0 => Some(n as u64),
                n if n == i64::from(sup_sys::SUP_ENODATA) => None,
                n => return Err(Error::from_code(n as i32)),
            };
            let host_death = match cvt(sup_sys::sup_result_host_death(p))? {
                sup_sys::SUP_HOST_DEATH_TREE => HostDeath::Tree,
                _ => HostDeath::MainProcess,
            };
            let (mut tree_user, mut tree_sys) = (0.0f64, 0.0f64);
            let tree_cpu = match sup_sys::sup_result_tree_cpu(p, &mut tree_user, &mut tree_sys) {
                sup_sys::SUP_ENODATA => None,
                rc => {
                    cvt(rc)?;
                    Some(CpuTime { user: ms_duration(tree_user), sys: ms_duration(tree_sys) })
                }
            };
            let mut out = Output {
                outcome,
                exit_code,
                signal,
                forced_kill,
                status_lost,
                duration: ms_duration(ms),
                pid: sup_sys::sup_pid(p).max(0) as u32,
                rusage: Rusage { user: ms_duration(user_ms), sys: ms_duration(sys_ms), max_rss_kb: rss.max(0) as u64 },
                signals_sent,
                phase,
                contained,
                leftovers_ended,
                tree_cpu,
                host_death,
                stdout,
                stderr,
                stdout_omitted: omitted(sup_sys::SUP_STDOUT)?,
                stderr_omitted: omitted(sup_sys::SUP_STDERR)?,
                contain_fallback: None,
                cgroup_left: None,
                waiting_for_input: None,
                confined: None,
                limit: None,
                stdout_tee_error: None,
                stderr_tee_error: None,
                tty_foreground: None,
                tty_refused: None,
            };
            if json {
                let text = sup_sys::sup_result(p);
                if text.is_null() {
                    return Err(Error::from_code(sup_sys::SUP_ENOMEM));
                }
                out.read_json(CStr::from_ptr(text).to_bytes())?;
            }
            Ok(out)
        }
    }

    /// Takes the fields without a C accessor from the library's result text.
    fn read_json(&mut self, text: &[u8]) -> Result<()> {
        let want = |path: &[&str]| {
            matches!(
                path,
                ["contain_fallback" | "cgroup_left" | "waiting_for_input" | "confined" | "limit" | "tty_foreground" | "tty_refused", ..]
                    | ["stdout" | "stderr"]
                    | ["stdout" | "stderr", "tee_error"]
            )
        };
        let bad = || Error::new(sup_sys::SUP_EINTERNAL, None, "sup_result: not the result object this shim reads".to_owned());
        let v = json::parse_object(text, &want).ok_or_else(bad)?;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        self.contain_fallback = text(v.get("contain_fallback"));
        self.cgroup_left = text(v.get("cgroup_left")).map(std::path::PathBuf::from);
        self.waiting_for_input = v.get("waiting_for_input").and_then(Value::as_bool);
        self.confined = match v.get("confined") {
            None | Some(Value::Null) => None,
            Some(c) => Some(Confined::from_json(c).ok_or_else(bad)?),
        };
        self.limit = v.get("limit").and_then(Value::as_str).and_then(LimitHit::from_name);
        self.stdout_tee_error = text(v.get("stdout").and_then(|s| s.get("tee_error")));
        self.stderr_tee_error = text(v.get("stderr").and_then(|s| s.get("tee_error")));
        self.tty_foreground = v.get("tty_foreground").and_then(Value::as_bool);
        self.tty_refused = text(v.get("tty_refused"));
        Ok(())
    }
}

fn ms_duration(ms: f64) -> Duration {
    Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default()
}

impl fmt::Display for Output {
    /// One line: `exited with code 3 after 0.012 s`, `killed by SIGSEGV
    /// after ...`, `idle_timeout: SIGTERM after ...`, `aborted: SIGKILL
    /// (SIGKILL needed) after ...`, `exited: status lost after ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.outcome, self.exit_code, self.signal) {
            (Outcome::Exited, Some(c), _) => write!(f, "exited with code {c}")?,
            (Outcome::Signaled, _, Some(s)) => write!(f, "killed by {s}")?,
            (o, Some(c), _) => write!(f, "{o}: exited with code {c}")?,
            (o, None, Some(s)) => write!(f, "{o}: {s}")?,
            (o, None, None) => write!(f, "{o}: status lost")?,
        }
        if self.forced_kill && self.outcome != Outcome::Signaled {
            f.write_str(" (SIGKILL needed)")?;
        }
        write!(f, " after {:.3} s", self.duration.as_secs_f64())
    }
}
