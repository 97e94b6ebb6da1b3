use std::ffi::CString;
use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// A signal number, named as bash's `kill -l` names it.
///
/// The constants cover the signals a supervisor sends; any other number
/// converts with [`Signal::from_raw`] or `From<i32>`, and names parse with
/// [`str::parse`] (`"SIGTERM"`, `"TERM"`, `"SIGRTMIN+3"`, `"15"`).
///
/// ```
/// use sup::Signal;
/// assert_eq!(Signal::TERM.as_raw(), libc::SIGTERM);
/// assert_eq!(Signal::TERM.to_string(), "SIGTERM");
/// assert_eq!("INT".parse::<Signal>()?, Signal::INT);
/// assert_eq!(Signal::from(9), Signal::KILL);
/// # Ok::<(), sup::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signal(i32);

impl Signal {
    /// `SIGHUP`: the terminal went away; many daemons reload on it.
    pub const HUP: Signal = Signal(libc::SIGHUP);
    /// `SIGINT`: what Ctrl-C sends.
    pub const INT: Signal = Signal(libc::SIGINT);
    /// `SIGQUIT`.
    pub const QUIT: Signal = Signal(libc::SIGQUIT);
    /// `SIGABRT`.
    pub const ABRT: Signal = Signal(libc::SIGABRT);
    /// `SIGKILL`: cannot be caught.
    pub const KILL: Signal = Signal(libc::SIGKILL);
    /// `SIGUSR1`.
    pub const USR1: Signal = Signal(libc::SIGUSR1);
    /// `SIGSEGV`.
    pub const SEGV: Signal = Signal(libc::SIGSEGV);
    /// `SIGUSR2`.
    pub const USR2: Signal = Signal(libc::SIGUSR2);
    /// `SIGPIPE`.
    pub const PIPE: Signal = Signal(libc::SIGPIPE);
    /// `SIGALRM`.
    pub const ALRM: Signal = Signal(libc::SIGALRM);
    /// `SIGTERM`: the default interrupt signal.
    pub const TERM: Signal = Signal(libc::SIGTERM);
    /// `SIGCONT`.
    pub const CONT: Signal = Signal(libc::SIGCONT);
    /// `SIGSTOP`: cannot be caught.
    pub const STOP: Signal = Signal(libc::SIGSTOP);
    /// `SIGTSTP`: what Ctrl-Z sends.
    pub const TSTP: Signal = Signal(libc::SIGTSTP);
    /// `SIGWINCH`: the terminal's size changed.
    pub const WINCH: Signal = Signal(libc::SIGWINCH);

    /// The signal with this number (not checked here: the library refuses
    /// a number out of range where it is used).
    ///
    /// ```
    /// assert_eq!(sup::Signal::from_raw(15), sup::Signal::TERM);
    /// ```
    pub const fn from_raw(signo: i32) -> Signal {
        Signal(signo)
    }

    /// The number.
    ///
    /// ```
    /// assert_eq!(sup::Signal::KILL.as_raw(), 9);
    /// ```
    pub const fn as_raw(self) -> i32 {
        self.0
    }

    /// The name bash's `kill -l` prints (`"SIGTERM"`, `"SIGRTMIN+1"`,
    /// `"SIGRTMAX-2"`, `"SIG32"`); `None` outside 1..=64.
    ///
    /// ```
    /// assert_eq!(sup::Signal::INT.name(), Some("SIGINT"));
    /// assert_eq!(sup::Signal::from_raw(0).name(), None);
    /// ```
    pub fn name(self) -> Option<&'static str> {
        // SAFETY: any int; the result is NULL or a static NUL-terminated string.
        let p = unsafe { sup_sys::sup_signal_name(self.0) };
        if p.is_null() {
            return None;
        }
        // SAFETY: static, NUL-terminated, ASCII.
        unsafe { std::ffi::CStr::from_ptr(p) }.to_str().ok()
    }
}

impl From<i32> for Signal {
    fn from(signo: i32) -> Signal {
        Signal(signo)
    }
}

impl From<Signal> for i32 {
    fn from(s: Signal) -> i32 {
        s.0
    }
}

impl FromStr for Signal {
    type Err = Error;

    /// What the library accepts as `interrupt_signal` (`sup_signal_parse`):
    /// `"SIGTERM"`, `"TERM"`, a number.
    fn from_str(s: &str) -> Result<Signal, Error> {
        let bad = || Error::new(sup_sys::SUP_EINVAL, None, format!("not a signal: {s:?}"));
        let c = CString::new(s).map_err(|_| bad())?;
        // SAFETY: c is NUL-terminated; the function only reads it.
        let n = unsafe { sup_sys::sup_signal_parse(c.as_ptr()) };
        if n > 0 { Ok(Signal(n)) } else { Err(bad()) }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "signal {}", self.0),
        }
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Signal({})", self.0),
        }
    }
}
