use std::fmt;
use std::io;
use std::sync::Arc;

use crate::error::cvt;
use crate::handle::Handle;

/// Bytes a live reader lost: the child wrote more than `max_output_bytes`
/// and the reader fell behind the kept window, so the library dropped
/// `skipped` bytes starting at byte `at` of the stream.
///
/// [`OutputReader`] reports a gap once, as an [`io::Error`] of kind
/// [`Other`](io::ErrorKind::Other) carrying a `Gap`, then reading goes on
/// with the first byte still kept. No single read returns bytes from both
/// sides of a gap.
///
/// ```
/// use std::io::Read;
/// let child = sup::Command::new("seq").arg("10000").max_output_bytes(100).spawn()?;
/// child.wait()?;
/// let (mut r, mut got, mut lost) = (child.stdout(), Vec::new(), 0);
/// loop {
///     match r.read_to_end(&mut got) {
///         Ok(_) => break,
///         Err(e) => match e.get_ref().and_then(|e| e.downcast_ref::<sup::Gap>()).copied() {
///             Some(gap) => lost += gap.skipped,            // reported once; read on
///             None => return Err(e.into()),
///         },
///     }
/// }
/// assert_eq!((got.len() as u64, lost), (100, 48894 - 100));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Gap {
    /// Where the dropped bytes start, counted in all the stream's bytes.
    pub at: u64,
    /// How many bytes were dropped.
    pub skipped: u64,
    /// `"stdout"` or `"stderr"`.
    pub stream: &'static str,
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sup: {} bytes of {} dropped at byte {} (the reader fell behind the kept window; \
             backpressure_bytes holds the child back instead)",
            self.skipped, self.stream, self.at
        )
    }
}

impl std::error::Error for Gap {}

/// Live output of one stream of a [`Child`](crate::Child), as an
/// [`io::Read`] and [`io::BufRead`] (with the `tokio` feature,
/// `into_async` or `Child::stdout_async` give
/// the `AsyncRead` and `AsyncBufRead` side, `AsyncOutputReader`).
///
/// `read` returns the bytes the child wrote since the last read, waiting
/// while there are none (in `poll(2)` on the library's readiness descriptor
/// for the stream; the async reader on tokio's reactor); it returns 0 (end
/// of file) once the child has ended and every kept byte was read. If the
/// child wrote more than `max_output_bytes` and the reader fell behind, the
/// read that meets the gap fails once with a [`Gap`]; use
/// [`Command::backpressure_bytes`](crate::Command::backpressure_bytes) to
/// lose nothing.
///
/// A read into a buffer smaller than 64 KiB takes up to 64 KiB from the
/// library into the reader's own buffer and hands out the rest on the next
/// reads (so `io::copy`'s 8 KiB reads cost one library call per pipe-full);
/// a larger buffer is filled directly. That buffer is also the `BufRead`'s
/// (no `BufReader` needed). [`position`](OutputReader::position) counts
/// only bytes handed out (consumed).
///
/// The reader owns a share of the child's handle: it may move to another
/// thread or task, and keeps reading what was kept after the
/// [`Child`](crate::Child) is dropped (which ends the child). Several
/// readers of one stream each read all of it; one reader per stream keeps
/// `backpressure_bytes` meaningful.
///
/// ```
/// use std::io::{BufRead, BufReader};
/// let child = sup::Command::new("sh").args(["-c", "echo one; echo two"]).spawn()?;
/// let lines: Vec<String> = BufReader::new(child.stdout()).lines().collect::<Result<_, _>>()?;
/// assert_eq!(lines, ["one", "two"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OutputReader {
    src: Source,
    #[cfg(feature = "tokio")]
    afd: Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>,
}

/// What one `sup_output_read` asks for when the caller's buffer is smaller:
/// a pipe's capacity, so that one wake-up empties the pipe in one `read(2)`
/// however small the caller's reads (`io::copy` and `tokio::io::copy` use 8
/// KiB).
const CHUNK: usize = 64 * 1024;

/// The reader's side of the library: where it is in the stream, and the
/// bytes it took but has not handed out.
struct Source {
    h: Arc<Handle>,
    stream: i32,
    /// Position after the last sup_output_read.
    pos: u64,
    /// Taken from the library, not handed out yet: `ahead[at..end]` (read
    /// ahead for a small buffer, or the bytes after a gap until the gap was
    /// reported). Allocated at the first small read.
    ahead: Box<[u8]>,
    at: usize,
    end: usize,
}

impl Source {
    fn held(&self) -> usize {
        self.end - self.at
    }

    fn stream_name(&self) -> &'static str {
        if self.stream == sup_sys::SUP_STDERR { "stderr" } else { "stdout" }
    }

    /// Bytes into the `len` bytes at `dst`, without waiting: the held bytes
    /// first, else one sup_output_read, straight into `dst` when it takes a
    /// [`CHUNK`] or more, else into `ahead` and copied from there. 0 when
    /// there is nothing new yet (or, once final, at the end). A gap the read
    /// jumped is an error; the bytes after it are held for the next read,
    /// so that no read returns bytes from both sides.
    ///
    /// # Safety
    /// `dst` is valid for writes of `len` bytes (which may be uninitialized).
    unsafe fn read(&mut self, dst: *mut u8, len: usize) -> io::Result<usize> {
        if len == 0 {
            return Ok(0);
        }
        if self.held() == 0 {
            if len >= CHUNK {
                // SAFETY: the caller's promise.
                let (n, gap) = unsafe { Source::take(&self.h, self.stream, &mut self.pos, dst, len) }?;
                if let Some(gap) = gap {
                    // SAFETY: the library wrote these n bytes.
                    self.hold(unsafe { std::slice::from_raw_parts(dst, n) });
                    return Err(io::Error::other(gap));
                }
                return Ok(n);
            }
            if self.fill_ahead()? == 0 {
                return Ok(0);
            }
        }
        let n = len.min(self.held());
        // SAFETY: ahead[at..at + n] is initialized, dst valid for n <= len
        // bytes; the caller's buffer is not ahead (private to this reader).
        unsafe { std::ptr::copy_nonoverlapping(self.ahead.as_ptr().add(self.at), dst, n) };
        self.at += n;
        Ok(n)
    }

    /// One sup_output_read into the `cap` bytes at `buf`, from `*pos`: the
    /// count, and the gap it jumped, if any. (Not a method: `buf` may be
    /// `ahead`, which a `&mut self` would cover.)
    ///
    /// # Safety
    /// `buf` is valid for writes of `cap` bytes.
    unsafe fn take(h: &Handle, stream: i32, pos: &mut u64, buf: *mut u8, cap: usize) -> io::Result<(usize, Option<crate::Gap>)> {
        let before = *pos;
        let mut n = 0usize;
        // SAFETY: live handle (shared); buf is valid for cap bytes.
        cvt(unsafe { sup_sys::sup_output_read(h.raw(), stream, pos, buf.cast(), cap, &mut n) })?;
        // The library never copies across a gap in one call, but a call may
        // jump it and then copy what follows.
        let skipped = *pos - before - n as u64;
        let stream = if stream == sup_sys::SUP_STDERR { "stderr" } else { "stdout" };
        Ok((n, (skipped > 0).then_some(crate::Gap { at: before, skipped, stream })))
    }

    fn hold(&mut self, bytes: &[u8]) {
        if self.ahead.len() < bytes.len() {
            self.ahead = vec![0; bytes.len().max(CHUNK)].into_boxed_slice();
        }
        self.ahead[..bytes.len()].copy_from_slice(bytes);
        (self.at, self.end) = (0, bytes.len());
    }

    /// With nothing held: one sup_output_read into `ahead` (allocated at
    /// the first), which then holds what it took. 0 when there is nothing
    /// new yet (or, once final, at the end); a gap it jumped is an error,
    /// the bytes after it held.
    fn fill_ahead(&mut self) -> io::Result<usize> {
        debug_assert_eq!(self.held(), 0);
        if self.ahead.is_empty() {
            self.ahead = vec![0; CHUNK].into_boxed_slice();
        }
        let (buf, cap) = (self.ahead.as_mut_ptr(), self.ahead.len());
        // SAFETY: ahead is valid for its length.
        let (n, gap) = unsafe { Source::take(&self.h, self.stream, &mut self.pos, buf, cap) }?;
        (self.at, self.end) = (0, n);
        match gap {
            Some(gap) => Err(io::Error::other(gap)),
            None => Ok(n),
        }
    }

    /// Calls `attempt` (non-blocking; 0: nothing new) until it finds bytes
    /// or the end, waiting in `poll(2)` on the stream's descriptor. When an
    /// attempt finds nothing: sup_poll, and if final one more attempt, so
    /// that bytes which landed in between are not taken for the end.
    fn blocking(&mut self, mut attempt: impl FnMut(&mut Source) -> io::Result<usize>) -> io::Result<usize> {
        loop {
            let n = attempt(self)?;
            if n > 0 {
                return Ok(n);
            }
            if self.h.poll(0)? {
                return attempt(self);
            }
            let mut pfd = libc::pollfd { fd: self.output_fd()?, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }

    fn output_fd(&self) -> io::Result<i32> {
        // SAFETY: live handle; the fd is owned by it and stays open.
        Ok(cvt(unsafe { sup_sys::sup_output_fd(self.h.raw(), self.stream) })?)
    }
}

impl OutputReader {
    pub(crate) fn new(h: Arc<Handle>, stream: i32) -> OutputReader {
        OutputReader {
            src: Source { h, stream, pos: 0, ahead: Box::default(), at: 0, end: 0 },
            #[cfg(feature = "tokio")]
            afd: None,
        }
    }

    /// The offset, in everything the child wrote to the stream, up to which
    /// this reader has read (bytes lost in a gap count as read).
    ///
    /// ```
    /// use std::io::Read;
    /// let child = sup::Command::new("echo").arg("abc").spawn()?;
    /// let mut r = child.stdout();
    /// std::io::copy(&mut r, &mut std::io::sink())?;
    /// assert_eq!(r.position(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn position(&self) -> u64 {
        self.src.pos - self.src.held() as u64
    }
}

impl fmt::Debug for OutputReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputReader").field("stream", &self.src.stream_name()).field("position", &self.position()).finish()
    }
}

impl io::Read for OutputReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let (dst, len) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: buf is valid for its length.
        self.src.blocking(|src| unsafe { src.read(dst, len) })
    }
}

/// The reader's own 64 KiB buffer, without a `BufReader` around it.
///
/// ```
/// use std::io::BufRead;
/// let child = sup::Command::new("sh").args(["-c", "echo one; echo two"]).spawn()?;
/// let lines: Vec<String> = child.stdout().lines().collect::<Result<_, _>>()?;
/// assert_eq!(lines, ["one", "two"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl io::BufRead for OutputReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.src.held() == 0 {
            self.src.blocking(Source::fill_ahead)?;
        }
        Ok(&self.src.ahead[self.src.at..self.src.end])
    }

    fn consume(&mut self, amt: usize) {
        self.src.at = (self.src.at + amt).min(self.src.end);
    }
}

#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl tokio::io::AsyncRead for AsyncOutputReader {
    /// Waits on tokio's reactor (a `dup` of the stream's readiness
    /// descriptor, registered at the first wait); no thread is parked. Each
    /// read fills as much of `buf` as the library holds (reading the pipe
    /// itself with `backpressure_bytes`); a dropped read future has taken
    /// nothing.
    ///
    /// ```
    /// use tokio::io::AsyncReadExt;
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
    /// let child = sup::Command::new("sh").args(["-c", "echo a; sleep 0.1; echo b"]).spawn()?;
    /// let mut r = child.stdout_async();
    /// let task = tokio::spawn(async move {
    ///     let mut s = String::new();
    ///     r.read_to_string(&mut s).await.map(|_| s)
    /// });
    /// assert_eq!(task.await.unwrap()?, "a\nb\n");
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        let this = &mut self.get_mut().0;
        // Straight into the unfilled part, initialized or not: the library
        // only writes there.
        // SAFETY: nothing uninitialized is written or read through it.
        let (dst, len) = unsafe {
            let unfilled = buf.unfilled_mut();
            (unfilled.as_mut_ptr().cast::<u8>(), unfilled.len())
        };
        if len == 0 {
            return Poll::Ready(Ok(()));
        }
        let n = if this.src.held() > 0 {
            // SAFETY: dst is valid for len bytes.
            unsafe { this.src.read(dst, len) }?
        } else {
            // SAFETY: as above.
            std::task::ready!(this.poll_with(cx, |src| unsafe { src.read(dst, len) }))?
        };
        // SAFETY: the library (or the copy from the reader's buffer) wrote
        // the first n bytes of the unfilled part.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

/// The reader's own 64 KiB buffer, without a `BufReader` around it:
/// `tokio::io::copy_buf` copies from it with no copy in between.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
/// let child = sup::Command::new("seq").arg("100000").backpressure_bytes(1 << 20).spawn()?;
/// let mut got = Vec::new();
/// tokio::io::copy_buf(&mut child.stdout_async(), &mut got).await?;
/// assert_eq!(got, child.wait_async().await?.stdout);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl tokio::io::AsyncBufRead for AsyncOutputReader {
    fn poll_fill_buf(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<&[u8]>> {
        let this = &mut self.get_mut().0;
        if this.src.held() == 0 {
            std::task::ready!(this.poll_with(cx, Source::fill_ahead))?;
        }
        std::task::Poll::Ready(Ok(&this.src.ahead[this.src.at..this.src.end]))
    }

    fn consume(self: std::pin::Pin<&mut Self>, amt: usize) {
        let src = &mut self.get_mut().0.src;
        src.at = (src.at + amt).min(src.end);
    }
}

#[cfg(feature = "tokio")]
impl OutputReader {
    /// Calls `attempt` (non-blocking; 0: nothing new) until it finds bytes
    /// or the end, waiting on tokio's reactor in between; nothing is taken
    /// when it returns `Pending`.
    fn poll_with(
        &mut self,
        cx: &mut std::task::Context<'_>,
        mut attempt: impl FnMut(&mut Source) -> io::Result<usize>,
    ) -> std::task::Poll<io::Result<usize>> {
        use std::task::Poll;
        if self.afd.is_none() {
            // No reactor registration for a read that need not wait.
            let n = attempt(&mut self.src)?;
            if n > 0 {
                return Poll::Ready(Ok(n));
            }
            if self.src.h.poll(0)? {
                return Poll::Ready(attempt(&mut self.src));
            }
            // The reactor owns what it watches: a duplicate, never the
            // handle's own descriptor (several readers may watch it).
            // SAFETY: the fd is open while the handle lives.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(self.src.output_fd()?) };
            let owned = fd.try_clone_to_owned()?;
            // SAFETY: the AsyncFd owns `owned`, which stays open and is the
            // same descriptor for the AsyncFd's whole life.
            let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
                .map_err(io::Error::from)?;
            self.afd = Some(afd);
        }
        let afd = self.afd.as_ref().expect("registered above");
        loop {
            // Readiness stays set while attempts find bytes: each costs one
            // sup_output_read. Only one that finds none asks whether the
            // result is final, then clears readiness (tokio keeps it if an
            // event came in meanwhile) and waits.
            let mut guard = match afd.poll_read_ready(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(r) => r?,
            };
            let n = attempt(&mut self.src)?;
            if n > 0 {
                return Poll::Ready(Ok(n));
            }
            if self.src.h.poll(0)? {
                return Poll::Ready(attempt(&mut self.src));
            }
            guard.clear_ready();
        }
    }
}

/// The writer of a child's stdin, from
/// [`Child::take_stdin`](crate::Child::take_stdin): an [`io::Write`] (and,
/// with the `tokio` feature, `into_async` or `Child::take_stdin_async` give
/// the `tokio::io::AsyncWrite` side, `AsyncChildStdin`).
///
/// Writes block while the pipe is full (the async writer waits on tokio's
/// reactor instead), never raise `SIGPIPE`, and fail with
/// [`BrokenPipe`](io::ErrorKind::BrokenPipe) once the child closed its stdin
/// or ended. Dropping the writer (or the async `shutdown`) closes the
/// child's stdin. Owned: it may move to another thread or task.
///
/// ```
/// use std::io::Write;
/// let child = sup::Command::new("sh").args(["-c", "read a; echo got $a"]).stdin(sup::Stdio::piped()).spawn()?;
/// let mut stdin = child.take_stdin().unwrap();
/// std::thread::spawn(move || writeln!(stdin, "it")).join().unwrap()?;
/// assert_eq!(child.wait()?.stdout, b"got it\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ChildStdin {
    h: Arc<Handle>,
    closed: bool,
    #[cfg(feature = "tokio")]
    afd: Option<tokio::io::unix::AsyncFd<InputFd>>,
    /// A `dup` of `sup_fd`: a full pipe whose reader outlived the child
    /// never turns writable, but the result turning final ends the write.
    #[cfg(feature = "tokio")]
    final_fd: Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>,
}

/// The library's stdin descriptor, watched by tokio but not owned: a
/// duplicate would keep the pipe open after `sup_input_close`.
#[cfg(feature = "tokio")]
struct InputFd(std::os::fd::RawFd);

#[cfg(feature = "tokio")]
impl std::os::fd::AsRawFd for InputFd {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0
    }
}

impl ChildStdin {
    pub(crate) fn new(h: Arc<Handle>) -> ChildStdin {
        ChildStdin {
            h,
            closed: false,
            #[cfg(feature = "tokio")]
            afd: None,
            #[cfg(feature = "tokio")]
            final_fd: None,
        }
    }

    /// One non-blocking write: `None` when the pipe is full.
    fn try_write(&self, buf: &[u8]) -> io::Result<Option<usize>> {
        let mut written = 0usize;
        // SAFETY: live handle; buf is valid for buf.len() bytes.
        let rc = unsafe { sup_sys::sup_input_write(self.h.raw(), buf.as_ptr().cast(), buf.len(), &mut written) };
        match rc {
            sup_sys::SUP_EAGAIN => Ok(None),
            sup_sys::SUP_EPIPE => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
            rc => cvt(rc).map(|_| Some(written)).map_err(io::Error::from),
        }
    }

    /// One attempt at closing: `false` when a terminal's input queue has no
    /// room for the end of input yet.
    fn try_close(&mut self) -> io::Result<bool> {
        if self.closed {
            return Ok(true);
        }
        // Unregister from the reactor before the descriptor is closed.
        #[cfg(feature = "tokio")]
        {
            self.afd = None;
            self.final_fd = None;
        }
        // SAFETY: live handle.
        match unsafe { sup_sys::sup_input_close(self.h.raw()) } {
            sup_sys::SUP_EAGAIN if self.h.poll(0)? => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
            sup_sys::SUP_EAGAIN => Ok(false),
            rc => {
                cvt(rc)?;
                self.closed = true;
                Ok(true)
            }
        }
    }

    /// Closes the child's stdin (it reads end of file), waiting, with a
    /// [`pty`](crate::Command::pty) whose input queue is full, until the end
    /// of input fits; dropping the writer does the same.
    ///
    /// ```
    /// let child = sup::Command::new("cat").stdin(sup::Stdio::piped()).spawn()?;
    /// child.take_stdin().unwrap().close()?;
    /// assert!(child.wait()?.success());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn close(mut self) -> io::Result<()> {
        self.close_blocking()
    }

    fn close_blocking(&mut self) -> io::Result<()> {
        while !self.try_close()? {
            // SAFETY: live handle. Returns once there is room or the
            // result is final.
            cvt(unsafe { sup_sys::sup_input_wait(self.h.raw(), -1) })?;
        }
        Ok(())
    }

    /// Registers the input descriptor and `sup_fd` with tokio's reactor.
    #[cfg(feature = "tokio")]
    fn register(&mut self) -> io::Result<()> {
        if self.afd.is_some() {
            return Ok(());
        }
        // SAFETY: live handle.
        let fd = cvt(unsafe { sup_sys::sup_input_fd(self.h.raw()) })?;
        // SAFETY: the library keeps this descriptor open until
        // sup_input_close or sup_release; `try_close` drops the AsyncFd
        // before sup_input_close, and the handle (this writer holds a share)
        // outlives it.
        let afd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(InputFd(fd), tokio::io::Interest::WRITABLE) }
            .map_err(io::Error::from)?;
        // SAFETY: live handle; sup_fd stays open while it lives.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(cvt(sup_sys::sup_fd(self.h.raw()))?) };
        let owned = fd.try_clone_to_owned()?;
        // SAFETY: the AsyncFd owns `owned` for its whole life.
        let final_fd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
            .map_err(io::Error::from)?;
        self.afd = Some(afd);
        self.final_fd = Some(final_fd);
        Ok(())
    }

    /// Ready when the input may have room, or the result is final (a
    /// process that left the child's group may hold a full pipe without
    /// reading it: it never turns writable, but the next write then fails).
    #[cfg(feature = "tokio")]
    fn poll_room(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        self.register()?;
        let (afd, final_fd) = (self.afd.as_ref().expect("registered"), self.final_fd.as_ref().expect("registered"));
        let room = match afd.poll_write_ready(cx) {
            Poll::Pending => false,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(mut guard)) => {
                guard.clear_ready();
                true
            }
        };
        // Final stays readable for good: never cleared.
        let ended = match final_fd.poll_read_ready(cx) {
            Poll::Pending => false,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(_)) => true,
        };
        if room || ended { Poll::Ready(Ok(())) } else { Poll::Pending }
    }
}

impl fmt::Debug for ChildStdin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildStdin").finish_non_exhaustive()
    }
}

impl io::Write for ChildStdin {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(n) = self.try_write(buf)? {
                return Ok(n);
            }
            // SAFETY: live handle. Returns once a write can make progress or
            // would fail at once.
            cvt(unsafe { sup_sys::sup_input_wait(self.h.raw(), -1) })?;
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl tokio::io::AsyncWrite for AsyncChildStdin {
    /// Waits for room on tokio's reactor (the pipe's descriptor, registered
    /// at the first wait); no thread is parked.
    ///
    /// ```
    /// use tokio::io::AsyncWriteExt;
    /// # tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap().block_on(async {
    /// let child = sup::Command::new("wc").arg("-c").stdin(sup::Stdio::piped()).spawn()?;
    /// let mut stdin = child.take_stdin_async().unwrap();
    /// stdin.write_all(&vec![b'x'; 1 << 20]).await?;   // more than a pipe holds
    /// stdin.shutdown().await?;
    /// assert_eq!(String::from_utf8_lossy(&child.wait_async().await?.stdout).trim(), "1048576");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        use std::task::Poll;
        let this = &mut self.get_mut().0;
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        loop {
            if let Some(n) = this.try_write(buf)? {
                return Poll::Ready(Ok(n));
            }
            match this.poll_room(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(r) => r?,
            }
        }
    }

    fn poll_flush(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    /// Closes the child's stdin (it reads end of file); with a
    /// [`pty`](crate::Command::pty) whose input queue is full, once the end
    /// of input fits.
    fn poll_shutdown(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        let this = &mut self.get_mut().0;
        loop {
            if this.try_close()? {
                return Poll::Ready(Ok(()));
            }
            match this.poll_room(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(r) => r?,
            }
        }
    }
}

impl Drop for ChildStdin {
    fn drop(&mut self) {
        let _ = self.close_blocking();
    }
}

/// The async side of an [`OutputReader`] (feature `tokio`): tokio's
/// `AsyncRead` and `AsyncBufRead`, waiting on tokio's reactor. A separate
/// type, so that std's `BufRead`/`Write` and tokio's `AsyncBufReadExt`/
/// `AsyncWriteExt` in scope together do not make `.lines()` or
/// `.write_all()` ambiguous (E0034). From
/// [`Child::stdout_async`](crate::Child::stdout_async) or
/// [`OutputReader::into_async`].
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Debug)]
pub struct AsyncOutputReader(OutputReader);

#[cfg(feature = "tokio")]
impl OutputReader {
    /// This reader as tokio's `AsyncRead`/`AsyncBufRead`, where it is.
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub fn into_async(self) -> AsyncOutputReader {
        AsyncOutputReader(self)
    }
}

#[cfg(feature = "tokio")]
impl AsyncOutputReader {
    /// Bytes handed out so far (see [`OutputReader::position`]).
    pub fn position(&self) -> u64 {
        self.0.position()
    }

    /// Back to the blocking reader, where it is.
    pub fn into_sync(self) -> OutputReader {
        self.0
    }
}

/// The async side of a [`ChildStdin`] (feature `tokio`): tokio's
/// `AsyncWrite`, waiting for room on tokio's reactor; a separate type for
/// the reason [`AsyncOutputReader`] is. From
/// [`Child::take_stdin_async`](crate::Child::take_stdin_async) or
/// [`ChildStdin::into_async`]. Dropped or shut down: closed.
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Debug)]
pub struct AsyncChildStdin(ChildStdin);

#[cfg(feature = "tokio")]
impl ChildStdin {
    /// This writer as tokio's `AsyncWrite`.
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub fn into_async(self) -> AsyncChildStdin {
        AsyncChildStdin(self)
    }
}
