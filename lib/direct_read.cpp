// A live reader that reads the child's pipe itself: the descriptor
// sup_output_fd gives is an epoll set holding the pipe and the stream's
// eventfd, the loop stops watching the pipe, and sup_output_read takes the
// bytes from the pipe straight into the reader's buffer (keeping capture,
// the idle clock and the first-output limit as the loop does). The loop
// takes the pipe back at its end of file, when a thread waits with
// sup_output_wait instead, and once sup is ending the child or the main
// process has exited; without backpressure_bytes also when the reader
// leaves bytes unread (reader_leases.hpp), until it has caught up again.
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "engine.hpp"
#include "process.hpp"

namespace sup {
namespace {

// Half a default pipe (64 KiB): a read this big found the pipe well filled.
constexpr ssize_t kBehindBytes = 32 * 1024;

// Under work_mu_, the counter's only writers: no read-modify-write needed.
void count_direct_read(OutputPipe& pipe) noexcept {
  pipe.direct_reads.store(pipe.direct_reads.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace

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

bool Process::leasable(const OutputPipe& pipe) const noexcept {
  // A terminal's EIO end and a tee's copies are the loop's to handle; once
  // the backpressure is lifted the loop drains everything itself.
  return pipe.open() && !pipe.terminal && !pipe.tee && lifecycle_ == Lifecycle::running && !backpressure_lifted_;
}

bool Process::can_read_directly(const OutputPipe& pipe) const noexcept {
  // A caller in sup_poll polls the pipes itself (drive_to_exit).
  return leasable(pipe) && drivers_ == 0;
}

void Process::offer_direct(OutputPipe& pipe) noexcept {
  if (!leasable(pipe)) return;
  int ep = fd_above_stdio(epoll_create1(EPOLL_CLOEXEC));
  if (ep < 0) return;  // the eventfd alone: the loop reads
  UniqueFd set(ep);
  epoll_event ready{};
  ready.events = EPOLLIN;
  ready.data.u32 = 0;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, pipe.ready_fd.get(), &ready) != 0) return;
  pipe.reader_set = std::move(set);
  if (!can_read_directly(pipe) || !take_lease(pipe))
    pipe.lease_lapsed.store(true, std::memory_order_relaxed);
}

bool Process::take_lease(OutputPipe& pipe) noexcept {
  epoll_event bytes{};
  bytes.events = EPOLLIN;
  bytes.data.u32 = 1;
  if (epoll_ctl(pipe.reader_set.get(), EPOLL_CTL_ADD, pipe.fd.get(), &bytes) != 0 && errno != EEXIST) return false;
  // A read for the sweep: a new lease is not in doubt at the first look.
  count_direct_read(pipe);
  pipe.direct_full.store(false, std::memory_order_relaxed);
  pipe.lease_lapsed.store(false, std::memory_order_relaxed);
  pipe.direct.store(true, std::memory_order_release);
  // The loop stops its watch at its next turn; until then either side may
  // read, each under work_mu_, in the pipe's order.
  request(kReader);
  return true;
}

bool Process::retake_lease(OutputPipe& pipe) {
  std::lock_guard<std::mutex> work(work_mu_);
  if (pipe.direct.load(std::memory_order_relaxed)) return true;
  if (!pipe.lease_lapsed.load(std::memory_order_relaxed)) return false;
  if (!pipe.reader_set.valid() || !leasable(pipe)) {
    pipe.lease_lapsed.store(false, std::memory_order_relaxed);  // for good
    return false;
  }
  // A caller driving the process: tried again at the reader's next read.
  return can_read_directly(pipe) && take_lease(pipe);
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
  count_direct_read(pipe);
  // Big reads: the pipe was well filled, the reader perhaps behind.
  if (static_cast<size_t>(n) == cap || n >= kBehindBytes) pipe.direct_full.store(true, std::memory_order_relaxed);
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
  // Without backpressure the pipes are lent, and looked at by the sweep.
  if (backpressure_bytes_ == 0) {
    if (!any_direct()) {
      engine_.drop_lease(*this);
    } else {
      try {
        engine_.hold_lease(*this);
      } catch (...) {
        // No sweep to take it back: the pipes stay the loop's.
        for (OutputPipe* pipe : {&out_, &err_}) end_direct(*pipe);
      }
    }
  }
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

bool Process::lease_in_doubt(OutputPipe& pipe) noexcept {
  const uint64_t reads = pipe.direct_reads.load(std::memory_order_relaxed);
  if (reads == pipe.reads_at_sweep || pipe.direct_full.load(std::memory_order_relaxed)) return true;
  pipe.reads_at_sweep = reads;
  pipe.unread_seen = false;
  return false;
}

bool Process::reader_left_bytes(OutputPipe& pipe) noexcept {
  const uint64_t reads = pipe.direct_reads.load(std::memory_order_relaxed);
  const bool idle = reads == pipe.reads_at_sweep;
  const bool full = pipe.direct_full.exchange(false, std::memory_order_relaxed);
  pipe.reads_at_sweep = reads;
  if (!idle) pipe.unread_seen = false;
  if (!idle && !full) return false;
  int unread = 0;
  if (ioctl(pipe.fd.get(), FIONREAD, &unread) != 0) return false;
  // Half a default pipe still unread after big reads: the reader keeps
  // the child waiting.
  if (!idle) return unread >= kBehindBytes;
  // Bytes waiting at two sweeps with no read between: the reader has gone,
  // or polls slower than the child writes. (At one, they may have come a
  // moment before, the reader on its way.)
  const bool left = unread > 0 && pipe.unread_seen;
  pipe.unread_seen = unread > 0;
  return left;
}

bool Process::check_reader_leases() {
  // Most readers keep up: their reads since the last sweep say so, read
  // without the lock (a sweep over 2,000 lent pipes then touches a cache
  // line or two of each, and makes no system call).
  OutputPipe* const pipes[2] = {&out_, &err_};
  bool doubt[2] = {false, false};
  for (int i = 0; i < 2; ++i)
    doubt[i] = pipes[i]->direct.load(std::memory_order_acquire) && lease_in_doubt(*pipes[i]);
  if (!doubt[0] && !doubt[1] && any_direct()) return true;
  std::lock_guard<std::mutex> work(work_mu_);
  if (final_on_loop()) return false;
  bool held = false;
  for (int i = 0; i < 2; ++i) {
    OutputPipe* pipe = pipes[i];
    if (!pipe->direct.load(std::memory_order_relaxed)) continue;
    if (!doubt[i] || !reader_left_bytes(*pipe)) {
      held = true;
      continue;
    }
    end_direct(*pipe);
    pipe->lease_lapsed.store(true, std::memory_order_relaxed);
    if (stepped_back_ || !pipe->poll) continue;
    try {
      watch_pipe(*pipe, /*probe=*/true);
    } catch (...) {
      end_unwatched(/*drain=*/true);
      return false;
    }
  }
  return held;
}

}  // namespace sup
