// "stdin": "pipe" and "pty": the host writes the child's input itself,
// without blocking and without ever taking a SIGPIPE; with "pty", to the
// terminal's master, and sup_pty_resize sets the terminal's size.
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "process.hpp"
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
    n = write(fd, buf, len);
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

int Process::input_write(const char* buf, size_t len, size_t* written) {
  if (written != nullptr) *written = 0;
  if (!stdin_pipe_) return SUP_EBADF;
  std::lock_guard<std::mutex> lock(input_mu_);
  if (!input_fd_.valid() || input_closed_) return SUP_EBADF;
  // A final result means the child is gone; a process that escaped the group
  // may still hold the pipe, but the child's input has ended.
  if (is_final()) return SUP_EPIPE;
  if (len == 0) return 0;
  ssize_t n;
  if (terminal_) {
    // A terminal never raises SIGPIPE: its master says EIO once the child's
    // side is closed.
    do {
      n = write(input_fd_.get(), buf, len);
    } while (n < 0 && errno == EINTR);
    if (n > 0) last_input_byte_ = static_cast<unsigned char>(buf[n - 1]);
    if (n < 0 && errno == EIO) return SUP_EPIPE;
  } else {
    n = write_without_sigpipe(input_fd_.get(), buf, len);
  }
  if (n >= 0) {
    if (written != nullptr) *written = static_cast<size_t>(n);
    // A reader given input is being fed, not waiting (input_wait.cpp).
    if (n > 0) input_wait_.note_input();
    return 0;
  }
  if (errno == EAGAIN) return SUP_EAGAIN;
  // A pipe's write fails otherwise only for a buffer the caller cannot read
  // (EFAULT) or a reader that is gone (EPIPE).
  return errno == EFAULT ? SUP_EINVAL : SUP_EPIPE;
}

int Process::input_wait(int timeout_ms) {
  if (!stdin_pipe_) return SUP_EBADF;
  int final_fd = event_fd();
  if (final_fd < 0) return final_fd;
  int fd;
  {
    std::lock_guard<std::mutex> lock(input_mu_);
    if (!input_fd_.valid() || input_closed_) return SUP_EBADF;
    fd = input_fd_.get();
  }
  // input_close during the poll: the pipe's last writer goes away, which
  // wakes every poller of the pipe (pipe_release); the number may then be
  // reused, so each slice re-checks that our fd is still the one open. A
  // terminal's master stays open until release; a closed child's side makes
  // it POLLHUP, which ends the wait as a write would fail.
  pollfd fds[2] = {{fd, POLLOUT, 0}, {final_fd, POLLIN, 0}};
  constexpr int kSliceMs = 1000;
  int left = timeout_ms;
  for (;;) {
    if (released()) return SUP_ECANCELED;
    {
      std::lock_guard<std::mutex> lock(input_mu_);
      if (!input_fd_.valid() || input_closed_) return 1;  // a write now fails at once
    }
    int slice = left < 0 || left > kSliceMs ? kSliceMs : left;
    int rc = poll(fds, 2, slice);
    // With two descriptors, poll fails only for want of kernel memory.
    if (rc < 0 && errno != EINTR) return SUP_ENOMEM;
    // Even if final: release's own kill makes it so (see wait_final).
    if (released()) return SUP_ECANCELED;
    if (rc > 0) return 1;
    if (left >= 0) {
      left -= slice;
      if (left <= 0) return 0;
    }
  }
}

int Process::input_fd() {
  if (!stdin_pipe_) return SUP_EBADF;
  std::lock_guard<std::mutex> lock(input_mu_);
  return input_fd_.valid() && !input_closed_ ? input_fd_.get() : SUP_EBADF;
}

int Process::input_close() {
  if (!stdin_pipe_) return SUP_EBADF;
  std::lock_guard<std::mutex> lock(input_mu_);
  if (!terminal_) {
    // Its reader reads the end of input: not a wait any more.
    if (input_fd_.valid()) input_wait_.note_input();
    input_fd_.reset();
    return 0;
  }
  // Closing the master would hang the child up (SIGHUP) and lose what it
  // still writes: the terminal's end of input is sent instead.
  if (input_closed_ || !input_fd_.valid()) return 0;
  if (!is_final()) {
    int rc = write_end_of_input(input_fd_.get(), last_input_byte_);
    if (rc == -EAGAIN) return SUP_EAGAIN;
    // Any other failure of the write says to the host that the child's
    // input is gone.
    if (rc < 0) return SUP_EPIPE;
  }
  input_closed_ = true;
  input_wait_.note_input();
  return 0;
}

int Process::pty_resize(int rows, int cols) {
  if (!terminal_) return SUP_ENOTSUP;
  std::lock_guard<std::mutex> lock(input_mu_);
  if (is_final() || !input_fd_.valid()) return SUP_ESRCH;
  // TIOCSWINSZ on a master sup holds open fails only for a bug of sup's.
  const bool resized = set_window_size(input_fd_.get(), rows, cols) == 0;
  return resized ? 0 : SUP_EINTERNAL;
}

}  // namespace sup
