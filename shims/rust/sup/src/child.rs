use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Error, Result, cvt};
use crate::handle::Handle;
use crate::io::{ChildStdin, OutputReader};
use crate::output::Output;
use crate::signal::Signal;

/// A running (or finished) supervised child.
///
/// Every method takes `&self`: share the child in an [`Arc`] and
/// [`abort`](Child::abort) or [`interrupt`](Child::interrupt) it from another
/// thread while one thread [`wait`](Child::wait)s.
///
/// **Dropping a `Child` ends it**, unlike [`std::process::Child`]: a child
/// still running is aborted (SIGKILL to its process group) and reaped, so
/// nothing is left behind. The drop blocks for as long as the kill takes
/// effect (milliseconds). Readers ([`stdout`](Child::stdout)) and the stdin
/// writer may outlive the `Child`: they then read what was kept, and end.
///
/// ```
/// use std::{sync::Arc, thread, time::Duration};
/// let child = Arc::new(sup::Command::new("sleep").arg("30").spawn()?);
/// let waiter = { let c = Arc::clone(&child); thread::spawn(move || c.wait()) };
/// thread::sleep(Duration::from_millis(50));
/// child.abort()?;                                   // from another thread
/// assert_eq!(waiter.join().unwrap()?.outcome, sup::Outcome::Aborted);
/// # Ok::<(), sup::Error>(())
/// ```
pub struct Child {
    h: Arc<Handle>,
    pid: u32,
    stdin_piped: AtomicBool,
    /// The result's JSON is read for the fields only it carries: set at
    /// spawn when the command asked for something that fills them, and by
    /// input_wanted (which makes "waiting_for_input" known).
    read_json: AtomicBool,
    output: OnceLock<Arc<Output>>,
}

impl std::fmt::Debug for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Child").field("pid", &self.pid).finish()
    }
}

impl Child {
    pub(crate) fn from_raw(p: NonNull<sup_sys::sup_proc>, stdin_piped: bool, read_json: bool) -> Child {
        // SAFETY: p is a live handle.
        let pid = unsafe { sup_sys::sup_pid(p.as_ptr()) };
        Child {
            h: Arc::new(Handle::new(p)),
            pid: pid.max(0) as u32,
            stdin_piped: AtomicBool::new(stdin_piped),
            read_json: AtomicBool::new(read_json),
            output: OnceLock::new(),
        }
    }

    fn raw(&self) -> *mut sup_sys::sup_proc {
        self.h.raw()
    }

    /// The raw handle, for calls of `sup-sys` this crate does not wrap. It
    /// stays valid while `self` lives; do not release it.
    ///
    /// ```
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// assert_eq!(unsafe { sup_sys::sup_output_total(child.as_raw(), sup_sys::SUP_STDOUT) }, 0);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn as_raw(&self) -> *mut sup_sys::sup_proc {
        self.raw()
    }

    /// The child's process id, for display. Do not signal it yourself: once
    /// the child ended the pid may belong to another process.
    ///
    /// ```
    /// let child = sup::Command::new("true").spawn()?;
    /// assert!(child.id() > 0);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Waits until the result is final and returns it; may be called again
    /// (and from several threads) and returns the same shared result.
    ///
    /// This blocks the calling thread; with the `tokio` feature,
    /// `wait_async` (feature `tokio`) does not.
    ///
    /// ```
    /// let child = sup::Command::new("echo").arg("hi").spawn()?;
    /// let out = child.wait()?;
    /// assert_eq!(out.stdout, b"hi\n");
    /// assert!(std::sync::Arc::ptr_eq(&child.wait()?, &out));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn wait(&self) -> Result<Arc<Output>> {
        while !self.h.poll(-1)? {}
        self.output()
    }

    /// The result if final, `None` while the child runs. Does not block.
    ///
    /// ```
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// assert!(child.try_wait()?.is_none());
    /// child.abort()?;
    /// child.wait()?;
    /// assert!(child.try_wait()?.is_some());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn try_wait(&self) -> Result<Option<Arc<Output>>> {
        if self.h.poll(0)? { self.output().map(Some) } else { Ok(None) }
    }

    /// Waits up to `timeout` for the result; `None` if the child still runs
    /// then (it is left running).
    ///
    /// ```
    /// use std::time::Duration;
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// assert!(child.wait_timeout(Duration::from_millis(50))?.is_none());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn wait_timeout(&self, timeout: Duration) -> Result<Option<Arc<Output>>> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            let ms = left.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
            if self.h.poll(ms)? {
                return self.output().map(Some);
            }
            if ms == 0 || deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(None);
            }
        }
    }

    /// Graceful stop: the interrupt signal (and SIGCONT) to the child's
    /// process group, SIGKILL after the grace period if it has not exited.
    /// From any thread; a no-op once the result is final.
    ///
    /// ```
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// child.interrupt()?;
    /// assert_eq!(child.wait()?.outcome, sup::Outcome::Interrupted);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn interrupt(&self) -> Result<()> {
        // SAFETY: live handle; sup_interrupt is safe from any thread.
        cvt(unsafe { sup_sys::sup_interrupt(self.raw()) }).map(drop)
    }

    /// Hard stop: SIGKILL to the child's process group now. From any thread;
    /// a no-op once the result is final.
    ///
    /// ```
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// child.abort()?;
    /// let out = child.wait()?;
    /// assert_eq!(out.outcome, sup::Outcome::Aborted);
    /// assert_eq!(out.signal, Some(sup::Signal::KILL));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn abort(&self) -> Result<()> {
        // SAFETY: live handle; sup_abort is safe from any thread.
        cvt(unsafe { sup_sys::sup_abort(self.raw()) }).map(drop)
    }

    /// Whether the child is waiting for input it cannot get (a process of
    /// its tree asleep reading its stdin with every thread asleep, or
    /// stopped by SIGTTIN/SIGTTOU), as the library's `sup_input_wanted`
    /// sees it: a look at `/proc`, about a millisecond (up to 40 ms the
    /// first time it sees a reader). `Err` with `SUP_EPERM` when sup may not
    /// look (unknown, never a false `false`), `SUP_ESRCH` once final.
    ///
    /// ```
    /// let child = sup::Command::new("cat").stdin(sup::Stdio::piped()).spawn()?;
    /// let t = std::time::Instant::now();
    /// while !child.input_wanted()? {
    ///     assert!(t.elapsed().as_secs() < 20);
    ///     std::thread::sleep(std::time::Duration::from_millis(20));
    /// }
    /// drop(child.take_stdin());
    /// assert!(child.wait()?.success());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn input_wanted(&self) -> Result<bool> {
        self.read_json.store(true, Ordering::Relaxed);
        // SAFETY: live handle; sup_input_wanted is safe from any thread.
        cvt(unsafe { sup_sys::sup_input_wanted(self.raw()) }).map(|r| r == 1)
    }

    /// [`abort`](Child::abort) under std's name: SIGKILL to the child's
    /// whole process group (std's `kill` reaches the main process only),
    /// and `Ok` once the result is final, where std returns `Ok` too.
    ///
    /// ```
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// child.kill()?;
    /// assert_eq!(child.wait()?.outcome, sup::Outcome::Aborted);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn kill(&self) -> Result<()> {
        self.abort()
    }

    /// Sends `sig` to the child's process group and main process (in a
    /// cgroup, to its whole tree), from any thread; listed in
    /// [`Output::signals_sent`], and the outcome stays what it would have
    /// been (a child that dies of it is [`Signaled`](crate::Outcome::Signaled)).
    /// Signal 0 sends nothing: it checks that the child still runs. `Err`
    /// with code `SUP_ESRCH` once the result is final.
    ///
    /// ```
    /// let child = sup::Command::new("sleep").arg("30").spawn()?;
    /// child.signal(0)?;                                  // still running
    /// child.signal(sup::Signal::USR1)?;
    /// let out = child.wait()?;
    /// assert_eq!((out.outcome, out.signal), (sup::Outcome::Signaled, Some(sup::Signal::USR1)));
    /// assert_eq!(child.signal(0).unwrap_err().code(), sup_sys::SUP_ESRCH);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn signal<S: Into<Signal>>(&self, sig: S) -> Result<()> {
        // SAFETY: live handle; sup_signal is safe from any thread.
        cvt(unsafe { sup_sys::sup_signal(self.raw(), sig.into().as_raw()) }).map(drop)
    }

    /// Sets the size of the child's terminal ([`Command::pty`](crate::Command::pty)); the child
    /// gets `SIGWINCH`. `Err` with code `SUP_ENOTSUP` without a pty,
    /// `SUP_ESRCH` once the result is final, `SUP_EINVAL` for 0.
    ///
    /// ```
    /// use std::io::Write;
    /// let child = sup::Command::new("sh").args(["-c", "read _; stty size"]).pty(24, 80).spawn()?;
    /// child.resize(50, 132)?;
    /// writeln!(child.take_stdin().unwrap(), "go")?;
    /// assert!(child.wait()?.stdout.ends_with(b"50 132\r\n"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resize(&self, rows: u16, cols: u16) -> Result<()> {
        // SAFETY: live handle.
        cvt(unsafe { sup_sys::sup_pty_resize(self.raw(), i32::from(rows), i32::from(cols)) }).map(drop)
    }

    /// A reader of the child's stdout from its first byte, as it is written
    /// (see [`OutputReader`]). Owned: it may move to another thread or task,
    /// and outlive the `Child`. Each call makes a new reader.
    ///
    /// ```
    /// use std::io::Read;
    /// let child = sup::Command::new("echo").arg("live").spawn()?;
    /// let mut r = child.stdout();
    /// let reader = std::thread::spawn(move || {
    ///     let mut s = String::new();
    ///     r.read_to_string(&mut s).map(|_| s)
    /// });
    /// assert_eq!(reader.join().unwrap()?, "live\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stdout(&self) -> OutputReader {
        OutputReader::new(Arc::clone(&self.h), sup_sys::SUP_STDOUT)
    }

    /// A reader of the child's stderr from its first byte (see
    /// [`stdout`](Child::stdout)).
    ///
    /// ```
    /// use std::io::Read;
    /// let child = sup::Command::new("sh").args(["-c", "echo err >&2"]).spawn()?;
    /// let mut s = String::new();
    /// child.stderr().read_to_string(&mut s)?;
    /// assert_eq!(s, "err\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stderr(&self) -> OutputReader {
        OutputReader::new(Arc::clone(&self.h), sup_sys::SUP_STDERR)
    }

    /// Takes the writer of the child's stdin, when the command had
    /// [`.stdin(Stdio::piped())`](crate::Command::stdin) or a
    /// [`pty`](crate::Command::pty): `Some` once, `None` afterwards and for
    /// any other stdin. Dropping it closes the child's stdin (it reads end
    /// of file).
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// let child = sup::Command::new("cat").stdin(sup::Stdio::piped()).spawn()?;
    /// let mut stdin = child.take_stdin().unwrap();
    /// stdin.write_all(b"fed through a pipe")?;
    /// drop(stdin);
    /// assert_eq!(child.wait()?.stdout, b"fed through a pipe");
    /// assert!(child.take_stdin().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take_stdin(&self) -> Option<ChildStdin> {
        if self.stdin_piped.swap(false, Ordering::AcqRel) {
            Some(ChildStdin::new(Arc::clone(&self.h)))
        } else {
            None
        }
    }

    /// [`stdout`](Child::stdout) as tokio's `AsyncRead`/`AsyncBufRead`.
    ///
    /// ```
    /// use tokio::io::AsyncBufReadExt;
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
    /// let child = sup::Command::new("sh").args(["-c", "echo one; echo two"]).spawn()?;
    /// let mut lines = child.stdout_async().lines();
    /// assert_eq!(lines.next_line().await?.as_deref(), Some("one"));
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub fn stdout_async(&self) -> crate::AsyncOutputReader {
        self.stdout().into_async()
    }

    /// [`stderr`](Child::stderr) as tokio's `AsyncRead`/`AsyncBufRead`.
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub fn stderr_async(&self) -> crate::AsyncOutputReader {
        self.stderr().into_async()
    }

    /// [`take_stdin`](Child::take_stdin) as tokio's `AsyncWrite`.
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub fn take_stdin_async(&self) -> Option<crate::AsyncChildStdin> {
        self.take_stdin().map(ChildStdin::into_async)
    }

    /// The library's result as JSON text (`sup_result`), for what
    /// [`Output`] does not carry; built at the first call (the captured
    /// streams escaped as text: costly for megabytes of output, which is why
    /// [`wait`](Child::wait) does not build it). `Err` with code
    /// `SUP_EBUSY` while the child runs.
    ///
    /// ```
    /// let child = sup::Command::new("true").spawn()?;
    /// child.wait()?;
    /// assert!(child.json()?.contains("\"outcome\": \"exited\""));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn json(&self) -> Result<String> {
        if !self.h.poll(0)? {
            return Err(Error::from_code(sup_sys::SUP_EBUSY));
        }
        // Bytes handed out first stay where they are: sup_result then copies
        // them into its text rather than moving them (see include/sup.h).
        self.output()?;
        // SAFETY: live handle; the text lives until sup_release, which cannot
        // happen while &self exists; it is copied out here.
        let text = unsafe { sup_sys::sup_result(self.raw()) };
        if text.is_null() {
            return Err(Error::from_code(sup_sys::SUP_ENOMEM));
        }
        Ok(unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned())
    }

    /// The descriptor that becomes readable once the result is final, for
    /// event loops other than tokio's (owned by the child: do not read or
    /// close it; `dup` it to hand it over).
    ///
    /// ```
    /// let child = sup::Command::new("true").spawn()?;
    /// let fd = child.fd()?;
    /// let mut pfd = libc::pollfd { fd: std::os::fd::AsRawFd::as_raw_fd(&fd), events: libc::POLLIN, revents: 0 };
    /// assert_eq!(unsafe { libc::poll(&mut pfd, 1, 10_000) }, 1);
    /// assert!(child.try_wait()?.is_some());
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn fd(&self) -> Result<BorrowedFd<'_>> {
        // SAFETY: live handle; the fd is owned by the handle, which outlives
        // the borrow.
        let fd = cvt(unsafe { sup_sys::sup_fd(self.raw()) })?;
        Ok(unsafe { BorrowedFd::borrow_raw(fd) })
    }

    /// Waits for the final result without blocking a thread: the library's
    /// descriptor (a `dup` of it) is watched by tokio's reactor through
    /// [`AsyncFd`](tokio::io::unix::AsyncFd). Dropping the future is safe and
    /// leaves the child running. Needs a tokio runtime with IO enabled.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
    /// let child = sup::Command::new("echo").arg("async").spawn()?;
    /// let out = child.wait_async().await?;
    /// assert_eq!(out.stdout, b"async\n");
    /// # Ok::<(), sup::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn wait_async(&self) -> Result<Arc<Output>> {
        use tokio::io::{Interest, unix::AsyncFd};
        if self.h.poll(0)? {
            return self.output();
        }
        // The reactor takes ownership of what it watches: give it a duplicate
        // (still readable once final), never the handle's own descriptor.
        let owned = self.fd()?.try_clone_to_owned().map_err(Error::from_io)?;
        // SAFETY: the AsyncFd owns `owned`, which stays open and is the same
        // descriptor for the AsyncFd's whole life.
        let afd = unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }
            .map_err(|e| Error::from_io(std::io::Error::from(e)))?;
        loop {
            let mut guard = afd.readable().await.map_err(Error::from_io)?;
            // Never read the descriptor: the non-blocking poll is the check.
            if self.h.poll(0)? {
                return self.output();
            }
            guard.clear_ready();
        }
    }

    fn output(&self) -> Result<Arc<Output>> {
        if let Some(out) = self.output.get() {
            return Ok(Arc::clone(out));
        }
        let out = Arc::new(Output::read(&self.h, self.read_json.load(Ordering::Relaxed))?);
        Ok(Arc::clone(self.output.get_or_init(|| out)))
    }
}

impl AsRawFd for Child {
    /// [`Child::fd`] as a raw descriptor.
    ///
    /// # Panics
    /// When the library cannot create the descriptor (out of descriptors or
    /// memory); use [`Child::fd`] to get that as an error.
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

impl AsFd for Child {
    /// [`Child::fd`].
    ///
    /// # Panics
    /// As [`AsRawFd::as_raw_fd`].
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self.fd() {
            Ok(fd) => fd,
            Err(e) => panic!("sup_fd: {e}"),
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Alone, the handle's release below aborts and reaps. With readers or
        // a stdin writer still holding it, end the child here: they read
        // what was kept, and the handle goes with the last of them.
        if Arc::strong_count(&self.h) > 1 {
            let _ = self.abort();
            while let Ok(false) = self.h.poll(-1) {}
        }
    }
}

impl Error {
    #[cfg(feature = "tokio")]
    pub(crate) fn from_io(e: std::io::Error) -> Error {
        match e.raw_os_error() {
            Some(errno) => Error::new(-errno, None, e.to_string()),
            None => Error::new(sup_sys::SUP_EINTERNAL, None, e.to_string()),
        }
    }
}
