//! Run child processes under supervision, over libsup's C ABI.
//!
//! [`Command`] reads like [`std::process::Command`] and adds what std, tokio
//! and duct lack: an **idle timeout** reset by every byte of stdout or stderr,
//! a maximum runtime, an interrupt signal followed by SIGKILL after a grace
//! period (to the whole process group), head+tail bounded capture, and a
//! [`Child`] that is `Send + Sync`, so another thread can
//! [`abort`](Child::abort) or [`interrupt`](Child::interrupt) it while one
//! thread waits. The result is one immutable [`Output`] whose [`Outcome`]
//! says what ended the child. **Dropping a [`Child`] ends it** (unlike std).
//!
//! ```
//! use std::time::Duration;
//! let out = sup::Command::new("sh")
//!     .args(["-c", "echo working; sleep 30"])
//!     .idle_timeout(Duration::from_millis(200))
//!     .grace(Duration::from_secs(1))
//!     .output()?;
//! assert_eq!(out.outcome, sup::Outcome::IdleTimeout);
//! assert_eq!(out.stdout, b"working\n");
//! assert_eq!(out.signal, Some(sup::Signal::TERM));
//! # Ok::<(), sup::Error>(())
//! ```
//!
//! Waiting: [`Child::wait`] blocks the calling thread; with the `tokio`
//! feature, `Child::wait_async` waits on tokio's reactor (no thread per
//! wait), `Child::stdout_async` gives an `AsyncOutputReader` (`AsyncRead`) and
//! `Child::take_stdin_async` an `AsyncChildStdin` (`AsyncWrite`);
//! other event loops watch [`Child::fd`] (also `AsFd`/`AsRawFd`) and call
//! [`Child::try_wait`] when it is readable.
//!
//! Features: `tokio` (the async API above), `bundled` (compile libsup from
//! its sources instead of linking a built one: see the `sup-sys` crate).
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod child;
mod command;
mod confine;
mod error;
mod handle;
mod io;
mod json;
mod output;
mod signal;

pub use child::Child;
pub use confine::{AppliedLimit, AppliedSandbox, AppliedUser, Confined, LimitHit, Limits, Mechanism, Sandbox, Scope};
pub use command::{Command, Contain, Stdio};
pub use error::{Error, Part, Result};
pub use io::{ChildStdin, Gap, OutputReader};
#[cfg(feature = "tokio")]
pub use io::{AsyncChildStdin, AsyncOutputReader};
pub use output::{CpuTime, HostDeath, Outcome, Output, Phase, Rusage, SentSignal};
pub use signal::Signal;

/// The version of the loaded libsup (`MAJOR * 10000 + MINOR * 100 + PATCH`).
///
/// ```
/// assert!(sup::library_version() >= 200);
/// ```
pub fn library_version() -> i32 {
    // SAFETY: no arguments, thread-safe.
    unsafe { sup_sys::sup_version() }
}
