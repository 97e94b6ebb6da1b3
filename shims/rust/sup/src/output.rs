use std::ffi::CStr;
use std::fmt;
use std::time::Duration;

/// What ended the main process, decided once by the library with the
/// priority aborted > idle_timeout / max_runtime > interrupted > signaled >
/// exited.
///
/// ```
/// assert_eq!(sup::Outcome::IdleTimeout.as_str(), "idle_timeout");
/// assert_eq!(sup::Outcome::Exited.to_string(), "exited");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

/// The final result of a supervised child; immutable once the library
/// decided it.
///
/// ```
/// let out = sup::Command::new("sh").args(["-c", "printf out; exit 7"]).run()?;
/// assert_eq!((out.outcome, out.exit_code, out.signal), (sup::Outcome::Exited, Some(7), None));
/// assert_eq!(out.stdout, b"out");
/// assert!(out.json.contains("\"outcome\": \"exited\""));
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// What ended the main process.
    pub outcome: Outcome,
    /// The exit code (0..=255), when it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, when it died from one (sent by sup or not).
    pub signal: Option<i32>,
    /// sup had to send SIGKILL (after grace, on kill-on-timeout, abort, or to
    /// end what the main process left behind).
    pub forced_kill: bool,
    /// The host reaped the child itself (SIGCHLD ignored, or `waitpid(-1)`):
    /// neither exit code nor signal is known.
    pub status_lost: bool,
    /// From spawn until the result was final.
    pub duration: Duration,
    /// The captured stdout, exactly as written (head and newest tail when
    /// more than `max_output_bytes` were written).
    pub stdout: Vec<u8>,
    /// The captured stderr, exactly as written.
    pub stderr: Vec<u8>,
    /// Bytes of stdout written but not kept (dropped from the middle).
    pub stdout_omitted: u64,
    /// Bytes of stderr written but not kept.
    pub stderr_omitted: u64,
    /// The library's result JSON, verbatim (rusage, signals sent, pid, ...).
    pub json: String,
}

impl Output {
    /// Exited by itself with code 0.
    ///
    /// ```
    /// assert!(sup::Command::new("true").run()?.success());
    /// assert!(!sup::Command::new("false").run()?.success());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn success(&self) -> bool {
        self.outcome == Outcome::Exited && self.exit_code == Some(0)
    }
}
