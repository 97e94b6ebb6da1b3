// The child's stdin where sup holds its other end (child_input.hpp): the
// host's writes, never blocking and never raising SIGPIPE, and the feed of
// "stdin": "data".
#include "child_input.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "sup.h"
#include "terminal.hpp"

namespace sup {
namespace {

// write(2) to a pipe whose reader is gone raises SIGPIPE in the writing
// thread. The signal is blocked around the write and, if the write raised
// it, taken back before the mask is restored, so the host never sees it
// (unless one was already pending for another reason: that one is kept).
ssize_t write_without_sigpipe(int fd, const char* buf, size_t len) {
  sigset_t pipe_only, previous;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  sigset_t pending;
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ssize_t n;
  do {
    n = ::write(fd, buf, len);
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  if (n < 0 && saved == EPIPE && !was_pending) {
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = saved;
  return n;
}

}  // namespace

int ChildInput::write(const char* buf, size_t len, size_t* written, bool final) {
  *written = 0;
  if (!host_writes_) return SUP_EBADF;
  std::lock_guard<std::mutex> lock(mu_);
  if (!host_end_.valid() || end_written_) return SUP_EBADF;
  // A final result means the child is gone; a process that escaped the group
  // may still hold the pipe, but the child's input has ended.
  if (final) return SUP_EPIPE;
  if (len == 0) return 0;
  ssize_t n;
  if (terminal_) {
    // A terminal never raises SIGPIPE: its master says EIO once the child's
    // side is closed.
    do {
      n = ::write(host_end_.get(), buf, len);
    } while (n < 0 && errno == EINTR);
    if (n > 0) last_byte_ = static_cast<unsigned char>(buf[n - 1]);
    if (n < 0 && errno == EIO) return SUP_EPIPE;
  } else {
    n = write_without_sigpipe(host_end_.get(), buf, len);
  }
  if (n >= 0) {
    *written = static_cast<size_t>(n);
    return 0;
  }
  if (errno == EAGAIN) return SUP_EAGAIN;
  // A pipe's write fails otherwise only for a buffer the caller cannot read
  // (EFAULT) or a reader that is gone (EPIPE).
  return errno == EFAULT ? SUP_EINVAL : SUP_EPIPE;
}

int ChildInput::fd() {
  if (!host_writes_) return SUP_EBADF;
  std::lock_guard<std::mutex> lock(mu_);
  return host_end_.valid() && !end_written_ ? host_end_.get() : SUP_EBADF;
}

int ChildInput::close_host_end(bool final, bool& ended) {
  ended = false;
  if (!host_writes_) return SUP_EBADF;
  std::lock_guard<std::mutex> lock(mu_);
  if (!terminal_) {
    // Its reader reads the end of input.
    ended = host_end_.valid();
    host_end_.reset();
    return 0;
  }
  // Closing the master would hang the child up (SIGHUP) and lose what it
  // still writes: the terminal's end of input is sent instead.
  if (end_written_ || !host_end_.valid()) return 0;
  if (!final) {
    int rc = write_end_of_input(host_end_.get(), last_byte_);
    if (rc == -EAGAIN) return SUP_EAGAIN;
    // Any other failure of the write says to the host that the child's
    // input is gone.
    if (rc < 0) return SUP_EPIPE;
  }
  end_written_ = true;
  ended = true;
  return 0;
}

int ChildInput::resize(int rows, int cols, bool final) {
  if (!terminal_) return SUP_ENOTSUP;
  std::lock_guard<std::mutex> lock(mu_);
  if (final || !host_end_.valid()) return SUP_ESRCH;
  // TIOCSWINSZ on a master sup holds open fails only for a bug of sup's.
  const bool resized = set_window_size(host_end_.get(), rows, cols) == 0;
  return resized ? 0 : SUP_EINTERNAL;
}

void ChildInput::release() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  host_end_.reset();
}

bool ChildInput::feed() noexcept {
  while (written_ < data_.size()) {
    ssize_t n = ::write(feed_fd_.get(), data_.data() + written_, data_.size() - written_);
    if (n > 0) {
      written_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return false;
    // EPIPE: the child closed its stdin or exited; the rest is not wanted.
    break;
  }
  return true;
}

void ChildInput::end_feed() noexcept {
  feed_watch_.close();
  feed_fd_.reset();
  std::string().swap(data_);
}

}  // namespace sup
