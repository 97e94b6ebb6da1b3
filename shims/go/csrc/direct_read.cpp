// A live reader that reads the child's pipe itself: with backpressure_bytes
// set, the descriptor sup_output_fd gives is an epoll set holding the pipe
// and the stream's eventfd, the loop stops watching the pipe, and
// sup_output_read takes the bytes from the pipe straight into the reader's
// buffer (keeping capture, the idle clock and the first-output limit as the
// loop does). The loop takes the pipe back at its end of file, when a
// thread waits with sup_output_wait instead, and once sup is ending the
// child or the main process has exited.
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "engine.hpp"
#include "process.hpp"

namespace sup {

void Process::prefetch_for_read(const void* handle, int stream) noexcept {
  // Only an address a Process could be at is looked into (a garbage handle
  // is turned away by Call, after this).
  if (handle == nullptr || reinterpret_cast<uintptr_t>(handle) % alignof(Process) != 0) return;
  const auto* self = static_cast<const Process*>(handle);
  const OutputPipe& pipe = stream == SUP_STDERR ? self->err_ : self->out_;
  for (const void* at : {static_cast<const void*>(&self->pins_), static_cast<const void*>(&self->work_mu_),
                         static_cast<const void*>(&self->deadlines_), static_cast<const void*>(&self->published_),
                         static_cast<const void*>(&self->mu_), static_cast<const void*>(&self->waiters_)})
    __builtin_prefetch(at, 1);
  // The pipe: its descriptor, the capture's fields, the reader's position.
  const char* first = reinterpret_cast<const char*>(&pipe);
  for (size_t line = 0; line < sizeof(OutputPipe); line += 64) __builtin_prefetch(first + line, 1);
}

bool Process::can_read_directly(const OutputPipe& pipe) const noexcept {
  // A terminal's EIO end and a tee's copies are the loop's to handle; once
  // the backpressure is lifted the loop drains everything itself.
  return backpressure_bytes_ > 0 && pipe.open() && !pipe.terminal && !pipe.tee &&
         lifecycle_ == Lifecycle::running && !backpressure_lifted_ && drivers_ == 0;
}

void Process::offer_direct(OutputPipe& pipe) noexcept {
  if (!can_read_directly(pipe)) return;
  int ep = fd_above_stdio(epoll_create1(EPOLL_CLOEXEC));
  if (ep < 0) return;  // the eventfd alone: the loop reads, as without backpressure
  UniqueFd set(ep);
  epoll_event ready{};
  ready.events = EPOLLIN;
  ready.data.u32 = 0;
  epoll_event bytes{};
  bytes.events = EPOLLIN;
  bytes.data.u32 = 1;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, pipe.ready_fd.get(), &ready) != 0 ||
      epoll_ctl(ep, EPOLL_CTL_ADD, pipe.fd.get(), &bytes) != 0)
    return;
  pipe.reader_set = std::move(set);
  pipe.direct.store(true, std::memory_order_release);
  // The loop stops its watch at its next turn; until then either side may
  // read, each under work_mu_, in the pipe's order.
  request(kReader);
}

void Process::end_direct(OutputPipe& pipe) noexcept {
  if (!pipe.direct.load(std::memory_order_relaxed)) return;
  pipe.direct.store(false, std::memory_order_release);
  // Out of the reader's set before the loop reads it, or a reader would be
  // woken for bytes it may no longer take (level-triggered: a busy loop).
  if (pipe.reader_set.valid() && pipe.fd.valid()) epoll_ctl(pipe.reader_set.get(), EPOLL_CTL_DEL, pipe.fd.get(), nullptr);
}

void Process::hand_back_direct(OutputPipe& pipe) {
  std::lock_guard<std::mutex> work(work_mu_);
  if (!pipe.direct.load(std::memory_order_relaxed)) return;
  end_direct(pipe);
  request(kReader);
}

int64_t Process::read_direct(OutputPipe& pipe, uint64_t* pos, char* buf, size_t cap) {
  std::lock_guard<std::mutex> work(work_mu_);
  // Handed back meanwhile: the loop reads the pipe, and the eventfd (in the
  // reader's set still) says when there is more.
  if (!pipe.direct.load(std::memory_order_relaxed) || !pipe.open()) return 0;
  // Where the bytes will be kept: asked for now, that line arrives during
  // the read(2) instead of stalling the unlock after the copy. Every append
  // holds work_mu_, and while the pipe is direct nothing else moves the
  // capture, so its position can be read here without mu_.
  if (const char* keep_at = pipe.capture.next_append()) __builtin_prefetch(keep_at, 1);
  ssize_t n;
  while ((n = read(pipe.fd.get(), buf, cap)) < 0 && errno == EINTR) {
  }
  if (n < 0 && errno == EAGAIN) return 0;
  if (n <= 0) {
    // End of file (or an error, which leaves nothing to read): the loop
    // closes the pipe as it closes any, and finishes the process if that
    // was the last thing it waited for.
    end_direct(pipe);
    request(kReader);
    return 0;
  }
  note_output();
  std::lock_guard<std::mutex> lock(mu_);
  // The loop may have read before this (its watch not yet stopped, or at an
  // idle deadline): the bytes go after those, and the reader gets the
  // oldest it has not had, as from any read.
  const bool next_in_order = *pos == pipe.capture.total();
  pipe.capture.append(buf, static_cast<size_t>(n));
  size_t got = static_cast<size_t>(n);
  if (next_in_order)
    *pos += got;
  else
    got = pipe.capture.read_at(pos, buf, cap);
  if (*pos > pipe.consumer_pos) pipe.consumer_pos = *pos;
  signal_ready(pipe);
  if (waiters_ > 0) changed_.notify_all();
  return static_cast<int64_t>(got);
}

void Process::sync_reader_watches() {
  for (OutputPipe* pipe : {&out_, &err_}) {
    if (!pipe->poll || !pipe->open()) continue;
    if (pipe->direct.load(std::memory_order_relaxed)) {
      uv_poll_stop(pipe->poll.get());
      continue;
    }
    if (pipe->paused || stepped_back_) continue;
    try {
      watch_pipe(*pipe, /*probe=*/true);
    } catch (...) {
      // As when a held-back stream cannot be watched again.
      end_unwatched(/*drain=*/true);
      return;
    }
  }
}

}  // namespace sup
