// The process's side of the child's input (child_input.hpp): sup_input_*
// and sup_pty_resize as the handle answers them, the wait for a writable
// end, and the reader fed (input_wait.hpp).
#include <poll.h>

#include <cerrno>

#include "process.hpp"
#include "sup.h"

namespace sup {

int Process::input_write(const char* buf, size_t len, size_t* written) {
  size_t n = 0;
  int rc = input_.write(buf, len, &n, is_final());
  if (written != nullptr) *written = n;
  // A reader given input is being fed, not waiting (input_wait.cpp).
  if (n > 0) input_wait_.note_input();
  return rc;
}

int Process::input_wait(int timeout_ms) {
  if (!input_.host_writes()) return SUP_EBADF;
  int final_fd = event_fd();
  if (final_fd < 0) return final_fd;
  const int fd = input_.fd();
  if (fd < 0) return SUP_EBADF;
  // input_close during the poll: the pipe's last writer goes away, which
  // wakes every poller of the pipe (pipe_release); the number may then be
  // reused, so each slice re-checks that our fd is still the one open. A
  // terminal's master stays open until release; a closed child's side makes
  // it POLLHUP, which ends the wait as a write would fail.
  pollfd fds[2] = {{fd, POLLOUT, 0}, {final_fd, POLLIN, 0}};
  constexpr int kSliceMs = 1000;
  int left = timeout_ms;
  for (;;) {
    if (handle_.released()) return SUP_ECANCELED;
    if (input_.fd() < 0) return 1;  // a write now fails at once
    int slice = left < 0 || left > kSliceMs ? kSliceMs : left;
    int rc = poll(fds, 2, slice);
    // With two descriptors, poll fails only for want of kernel memory.
    if (rc < 0 && errno != EINTR) return SUP_ENOMEM;
    // Even if final: release's own kill makes it so (see wait_final).
    if (handle_.released()) return SUP_ECANCELED;
    if (rc > 0) return 1;
    if (left >= 0) {
      left -= slice;
      if (left <= 0) return 0;
    }
  }
}

int Process::input_fd() { return input_.fd(); }

int Process::input_close() {
  bool ended = false;
  int rc = input_.close_host_end(is_final(), ended);
  // Its reader has its end of input: not a wait any more.
  if (ended) input_wait_.note_input();
  return rc;
}

int Process::pty_resize(int rows, int cols) { return input_.resize(rows, cols, is_final()); }

}  // namespace sup
