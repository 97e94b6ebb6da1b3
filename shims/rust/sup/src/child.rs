use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use crate::error::{Error, Result, cvt};
use crate::output::{Outcome, Output};

/// A running (or finished) supervised child.
///
/// Every method takes `&self`: share the child in an [`Arc`](std::sync::Arc)
/// and [`abort`](Child::abort) or [`interrupt`](Child::interrupt) it from
/// another thread while one thread [`wait`](Child::wait)s.
///
/// Dropping a `Child` releases it: a child still running is aborted (SIGKILL
/// to its process group) and reaped first, so nothing is left behind. That
/// drop blocks briefly, for as long as the kill takes effect (milliseconds).
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
    p: NonNull<sup_sys::sup_proc>,
    pid: u32,
}

// SAFETY: `sup_proc` is built for concurrent use (include/sup.h, THREAD
// MODEL): every function on a handle may be called from any thread and
// concurrently, except that no call may *begin* once sup_release has begun.
// The only sup_release is in `Drop`, which needs ownership of the `Child`, so
// no `&Child` (and no reader borrowing it) exists any more then: no call can
// begin after it. The handle's memory is not tied to the creating thread.
unsafe impl Send for Child {}
// SAFETY: as above; all methods take `&self` and only call functions the
// header declares safe to call concurrently on one handle.
unsafe impl Sync for Child {}

impl std::fmt::Debug for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Child").field("pid", &self.pid).finish()
    }
}

impl Child {
    pub(crate) fn from_raw(p: NonNull<sup_sys::sup_proc>) -> Child {
        // SAFETY: p is a live handle.
        let pid = unsafe { sup_sys::sup_pid(p.as_ptr()) };
        Child { p, pid: pid.max(0) as u32 }
    }

    fn raw(&self) -> *mut sup_sys::sup_proc {
        self.p.as_ptr()
    }

    /// The raw handle, for calls of `sup-sys` this crate does not wrap. It
    /// stays valid while `self` lives; do not release it.
    ///
    /// ```
    /// let child = sup::Command::new("true").spawn()?;
    /// child.wait()?;
    /// let mut user_ms = 0.0;
    /// let rc = unsafe {
    ///     sup_sys::sup_result_rusage(child.as_raw(), &mut user_ms, std::ptr::null_mut(), std::ptr::null_mut())
    /// };
    /// assert_eq!(rc, 0);
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

    /// `sup_poll`: true when final.
    fn poll(&self, timeout_ms: i32) -> Result<bool> {
        // SAFETY: the handle is live (see the Send/Sync comment).
        Ok(cvt(unsafe { sup_sys::sup_poll(self.raw(), timeout_ms) })? == 1)
    }

    /// Waits until the result is final and returns it; may be called again
    /// (and from several threads) and returns the same result.
    ///
    /// This blocks the calling thread; with the `tokio` feature,
    /// [`wait_async`](Child::wait_async) does not.
    ///
    /// ```
    /// let child = sup::Command::new("echo").arg("hi").spawn()?;
    /// let out = child.wait()?;
    /// assert_eq!(out.stdout, b"hi\n");
    /// assert_eq!(child.wait()?, out);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn wait(&self) -> Result<Output> {
        while !self.poll(-1)? {}
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
    pub fn try_wait(&self) -> Result<Option<Output>> {
        if self.poll(0)? { self.output().map(Some) } else { Ok(None) }
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
    pub fn wait_timeout(&self, timeout: Duration) -> Result<Option<Output>> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            let ms = left.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
            if self.poll(ms)? {
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
    /// assert_eq!(out.signal, Some(libc::SIGKILL));
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn abort(&self) -> Result<()> {
        // SAFETY: live handle; sup_abort is safe from any thread.
        cvt(unsafe { sup_sys::sup_abort(self.raw()) }).map(drop)
    }

    /// A reader of the child's stdout as it is written (see [`OutputReader`]).
    ///
    /// ```
    /// use std::io::Read;
    /// let child = sup::Command::new("echo").arg("live").spawn()?;
    /// let mut s = String::new();
    /// child.stdout_reader().read_to_string(&mut s).unwrap();
    /// assert_eq!(s, "live\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn stdout_reader(&self) -> OutputReader<'_> {
        OutputReader { child: self, stream: sup_sys::SUP_STDOUT, pos: 0 }
    }

    /// A reader of the child's stderr as it is written (see [`OutputReader`]).
    ///
    /// ```
    /// use std::io::Read;
    /// let child = sup::Command::new("sh").args(["-c", "echo err >&2"]).spawn()?;
    /// let mut s = String::new();
    /// child.stderr_reader().read_to_string(&mut s).unwrap();
    /// assert_eq!(s, "err\n");
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn stderr_reader(&self) -> OutputReader<'_> {
        OutputReader { child: self, stream: sup_sys::SUP_STDERR, pos: 0 }
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
    /// leaves the child running. Needs the `tokio` feature and a tokio
    /// runtime with IO enabled.
    ///
    /// ```
    /// # #[cfg(feature = "tokio")]
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
    /// let child = sup::Command::new("echo").arg("async").spawn()?;
    /// let out = child.wait_async().await?;
    /// assert_eq!(out.stdout, b"async\n");
    /// # Ok::<(), sup::Error>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn wait_async(&self) -> Result<Output> {
        use std::os::fd::{FromRawFd, OwnedFd};
        use tokio::io::{Interest, unix::AsyncFd};
        if self.poll(0)? {
            return self.output();
        }
        let fd = self.fd()?.as_raw_fd();
        // The reactor takes ownership of what it watches: give it a duplicate
        // (still readable once final), never the handle's own descriptor.
        // SAFETY: fd is open while self lives.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(io_error(io::Error::last_os_error()));
        }
        // SAFETY: dup is a fresh descriptor we own.
        let owned = unsafe { OwnedFd::from_raw_fd(dup) };
        // SAFETY: the AsyncFd owns `owned`, which stays open and is the same
        // descriptor for the AsyncFd's whole life.
        let afd = unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }
            .map_err(|e| io_error(e.into()))?;
        loop {
            let mut guard = afd.readable().await.map_err(io_error)?;
            // Never read the descriptor: the non-blocking poll is the check.
            if self.poll(0)? {
                return self.output();
            }
            guard.clear_ready();
        }
    }

    fn output(&self) -> Result<Output> {
        let p = self.raw();
        // SAFETY: p is live and its result final; pointers returned by
        // sup_result_output / sup_result stay valid until sup_release, which
        // cannot happen while &self exists.
        unsafe {
            let raw = cvt(sup_sys::sup_result_outcome(p))?;
            let outcome = Outcome::from_raw(raw).ok_or_else(|| Error::from_code(sup_sys::SUP_EINTERNAL))?;
            let optional = |rc: i32| -> Result<Option<i32>> {
                if rc == sup_sys::SUP_ENODATA { Ok(None) } else { cvt(rc).map(Some) }
            };
            let exit_code = optional(sup_sys::sup_result_exit_code(p))?;
            let signal = optional(sup_sys::sup_result_term_signal(p))?;
            let forced_kill = cvt(sup_sys::sup_result_forced_kill(p))? == 1;
            let status_lost = cvt(sup_sys::sup_result_status_lost(p))? == 1;
            let ms = sup_sys::sup_result_duration_ms(p);
            if ms < 0.0 {
                return Err(Error::from_code(ms as i32));
            }
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
            let json = sup_sys::sup_result(p);
            if json.is_null() {
                return Err(Error::from_code(sup_sys::SUP_ENOMEM));
            }
            Ok(Output {
                outcome,
                exit_code,
                signal,
                forced_kill,
                status_lost,
                duration: Duration::from_secs_f64(ms / 1000.0),
                stdout: bytes(sup_sys::SUP_STDOUT)?,
                stderr: bytes(sup_sys::SUP_STDERR)?,
                stdout_omitted: omitted(sup_sys::SUP_STDOUT)?,
                stderr_omitted: omitted(sup_sys::SUP_STDERR)?,
                json: CStr::from_ptr(json).to_string_lossy().into_owned(),
            })
        }
    }
}

#[cfg(feature = "tokio")]
fn io_error(e: io::Error) -> Error {
    match e.raw_os_error() {
        Some(errno) => Error::new(-errno, None, e.to_string()),
        None => Error::new(sup_sys::SUP_EINTERNAL, None, e.to_string()),
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
        // SAFETY: we own the handle and no borrow of self remains, so no call
        // on it is in progress or can begin. Blocks briefly if it still runs.
        unsafe { sup_sys::sup_release(self.raw()) }
    }
}

/// Live output of one stream of a [`Child`], as an [`io::Read`].
///
/// `read` returns the bytes the child wrote since the last read, blocking
/// (in `poll(2)` on the library's readiness descriptor for the stream) while
/// there are none; it returns 0 (end of file) once the child has ended and
/// every byte was read. If the child wrote more than `max_output_bytes` and
/// the reader fell behind, the dropped middle is skipped (see
/// [`position`](OutputReader::position)); use
/// [`Command::backpressure_bytes`](crate::Command::backpressure_bytes) to lose
/// nothing. Use one reader per stream.
///
/// ```
/// use std::io::{BufRead, BufReader};
/// let child = sup::Command::new("sh").args(["-c", "echo one; echo two"]).spawn()?;
/// let lines: Vec<String> = BufReader::new(child.stdout_reader()).lines().map(Result::unwrap).collect();
/// assert_eq!(lines, ["one", "two"]);
/// # Ok::<(), sup::Error>(())
/// ```
pub struct OutputReader<'a> {
    child: &'a Child,
    stream: i32,
    pos: u64,
}

impl OutputReader<'_> {
    /// The offset in everything the child wrote to the stream up to which
    /// this reader has read (including bytes skipped because they were
    /// dropped).
    ///
    /// ```
    /// use std::io::Read;
    /// let child = sup::Command::new("echo").arg("abc").spawn()?;
    /// let mut r = child.stdout_reader();
    /// std::io::copy(&mut r, &mut std::io::sink()).unwrap();
    /// assert_eq!(r.position(), 4);
    /// # Ok::<(), sup::Error>(())
    /// ```
    pub fn position(&self) -> u64 {
        self.pos
    }
}

impl std::fmt::Debug for OutputReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputReader").field("stream", &self.stream).field("pos", &self.pos).finish()
    }
}

impl io::Read for OutputReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let p = self.child.raw();
        loop {
            // Final first, then read: bytes that land in between are not lost.
            let final_ = self.child.poll(0)?;
            let mut n = 0usize;
            // SAFETY: live handle (borrowed); buf is valid for buf.len() bytes.
            cvt(unsafe {
                sup_sys::sup_output_read(p, self.stream, &mut self.pos, buf.as_mut_ptr().cast(), buf.len(), &mut n)
            })?;
            if n > 0 {
                return Ok(n);
            }
            if final_ {
                return Ok(0);
            }
            // SAFETY: live handle; the fd is owned by it and stays open.
            let fd = cvt(unsafe { sup_sys::sup_output_fd(p, self.stream) })?;
            let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}
