// Live output: sup_output_read from what sup holds, sup_output_fd, and a
// live reader that reads the child's pipe itself: the descriptor
// sup_output_fd gives is an epoll set holding the pipe and the stream's
// eventfd, the loop stops watching the pipe, and sup_output_read takes the
// bytes from the pipe straight into the reader's buffer (keeping capture,
// the idle clock and the first-output limit as the loop does). The loop
// takes the pipe back at its end of file, when a thread waits with
// sup_output_wait instead, and once sup is ending the child or the main
// process has exited; without backpressure_bytes also when the reader
// leaves bytes unread (reader_leases.hpp), until it has caught up again.
#include <cerrno>
#include <cstdint>
#include <new>

#include "engine.hpp"
#include "event_fd.hpp"
#include "process.hpp"
#include "sup.h"

namespace sup {

// A live reader with many children finds each handle cold, and its call
// touches a dozen cache lines of it; each atomic on the way (the pin, the
// locks) waits for the misses before it. Asked for all at once first,
// they overlap. `handle` is not yet validated: a prefetch never faults.
void Process::prefetch_for_read(const void* handle, int stream) noexcept {
  // Only an address a Process could be at is looked into (a garbage handle
  // is turned away by Call, after this).
  if (handle == nullptr || reinterpret_cast<uintptr_t>(handle) % alignof(Process) != 0) return;
  const auto* self = static_cast<const Process*>(handle);
  const OutputStream& pipe = stream == SUP_STDERR ? self->streams_.err() : self->streams_.out();
  for (const void* at : {self->handle_.pins_at(), static_cast<const void*>(&self->work_mu_),
                         static_cast<const void*>(&self->deadlines_), self->result_.published_at(),
                         static_cast<const void*>(&self->mu_), self->streams_.waiters_at()})
    __builtin_prefetch(at, 1);
  // The pipe: its descriptor, the capture's fields, the reader's position.
  const char* first = reinterpret_cast<const char*>(&pipe);
  for (size_t line = 0; line < sizeof(OutputStream); line += 64) __builtin_prefetch(first + line, 1);
}

int64_t Process::read_output(int stream, uint64_t* pos, char* buf, size_t cap) {
  OutputStream& pipe = streams_.of(stream);
  bool resume = false;
  bool caught_up = false;
  size_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A position past the end would make the unread count wrap, and a
    // held-back stream would then never resume.
    Capture& capture = pipe.capture();
    if (*pos > capture.total()) return SUP_EINVAL;
    if (capture.lent() && cap > 0 && *pos < capture.total()) {
      try {
        streams_.bring_back(pipe, result_.text_if_made());
      } catch (const std::bad_alloc&) {
        return SUP_ENOMEM;
      }
    }
    n = capture.lent() ? 0 : capture.read_at(pos, buf, cap);
    if (n > 0) pipe.note_read(now_ns());
    caught_up = n == 0 && *pos == capture.total();
    pipe.reader_at(*pos);
    resume = pipe.held() && streams_.backpressure().may_resume(pipe.unread());
    pipe.clear_ready_if_caught_up(is_final());
  }
  if (resume && !is_final()) request(kResume);
  // Everything sup holds is read: the next bytes are in the pipe, for a
  // reader that reads it itself (direct_read.cpp).
  if (caught_up && cap > 0) {
    const PipeHolder holder = pipe.holder();
    if (holder == PipeHolder::reader) return read_direct(pipe, pos, buf, cap);
    // Lent before, and taken back while the reader was away or behind.
    if (holder == PipeHolder::lapsed && retake_lease(pipe)) return read_direct(pipe, pos, buf, cap);
  }
  return static_cast<int64_t>(n);
}

int Process::output_fd(int stream) {
  OutputStream& pipe = streams_.of(stream);
  // work_mu_ first: whether the reader may take the pipe is the loop's state.
  std::lock_guard<std::mutex> work(work_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  if (!pipe.has_ready_fd()) {
    if (int rc = pipe.make_ready_fd(); rc < 0) return made_fd_error(-rc);
    pipe.signal_ready(is_final());
    offer_direct(pipe);
  }
  return pipe.reader_fd();
}

// Whether a reader may ever take the pipe: a plain pipe (no terminal, no
// tee), the main process running and nothing lifted yet.
bool Process::leasable(const OutputStream& pipe) const noexcept {
  // A terminal's EIO end and a tee's copies are the loop's to handle; once
  // the backpressure is lifted the loop drains everything itself.
  return pipe.open() && !pipe.terminal() && !pipe.tee() && lifecycle_ == Lifecycle::running &&
         !streams_.backpressure().lifted();
}

// Whether it may take it now: leasable, and no caller drives the process.
bool Process::can_read_directly(const OutputStream& pipe) const noexcept {
  // A caller in sup_poll polls the pipes itself (drive_to_exit).
  return leasable(pipe) && !drivers_.any();
}

// sup_output_fd's first call (under mu_ too, the eventfd made): where the
// pipe is leasable, the reader gets an epoll set, and the pipe in it now
// or (a caller driving) later; else nothing changes.
void Process::offer_direct(OutputStream& pipe) noexcept {
  // Without a set, the eventfd alone: the loop reads.
  if (!leasable(pipe) || !pipe.make_reader_set()) return;
  if (!can_read_directly(pipe) || !take_lease(pipe)) pipe.lapse();
}

// The pipe into the reader's set, the loop's watch stopped at its next
// turn (kReader). Returns false if epoll refused it.
bool Process::take_lease(OutputStream& pipe) noexcept {
  if (!pipe.lend()) return false;
  // The loop stops its watch at its next turn; until then either side may
  // read, each under work_mu_, in the pipe's order.
  request(kReader);
  return true;
}

// read_output's step for a reader that has read all that sup holds of a
// pipe it held before: takes it again if it may (takes work_mu_).
bool Process::retake_lease(OutputStream& pipe) {
  std::lock_guard<std::mutex> work(work_mu_);
  const PipeHolder holder = pipe.holder();
  if (holder != PipeHolder::lapsed) return holder == PipeHolder::reader;
  if (!pipe.has_reader_set() || !leasable(pipe)) {
    pipe.end_lapse();  // for good
    return false;
  }
  // A caller driving the process: tried again at the reader's next read.
  return can_read_directly(pipe) && take_lease(pipe);
}

void Process::hand_back_direct(OutputStream& pipe) {
  std::lock_guard<std::mutex> work(work_mu_);
  if (pipe.take_back(/*lapse=*/false)) request(kReader);
}

// read_output's step for a reader that has read all
// that sup holds and reads the pipe itself: into buf, then into the
// capture. Returns the count (0: nothing yet, or the pipe handed back).
int64_t Process::read_direct(OutputStream& pipe, uint64_t* pos, char* buf, size_t cap) {
  std::lock_guard<std::mutex> work(work_mu_);
  // Handed back meanwhile: the loop reads the pipe, and the eventfd (in the
  // reader's set still) says when there is more.
  if (!pipe.lent() || !pipe.open()) return 0;
  // Where the bytes will be kept: asked for now, that line arrives during
  // the read(2) instead of stalling the unlock after the copy. Every append
  // holds work_mu_, and while the pipe is direct nothing else moves the
  // capture, so its position can be read here without mu_.
  if (const char* keep_at = pipe.capture().next_append()) __builtin_prefetch(keep_at, 1);
  const ssize_t n = pipe.read_some(buf, cap);
  if (n < 0 && errno == EAGAIN) return 0;
  if (n <= 0) {
    // End of file (or an error, which leaves nothing to read): the loop
    // closes the pipe as it closes any, and finishes the process if that
    // was the last thing it waited for.
    pipe.take_back(/*lapse=*/false);
    request(kReader);
    return 0;
  }
  note_output();
  pipe.count_read(n, cap);
  std::lock_guard<std::mutex> lock(mu_);
  // The loop may have read before this (its watch not yet stopped, or at an
  // idle deadline): the bytes go after those, and the reader gets the
  // oldest it has not had, as from any read.
  const bool next_in_order = *pos == pipe.capture().total();
  pipe.capture().append(buf, static_cast<size_t>(n));
  size_t got = static_cast<size_t>(n);
  if (next_in_order)
    *pos += got;
  else
    got = pipe.capture().read_at(pos, buf, cap);
  pipe.reader_at(*pos);
  pipe.signal_ready(/*final=*/false);
  streams_.wake_waiters();
  return static_cast<int64_t>(got);
}

// Loop: kReader. Stops the watch of a pipe its reader reads; watches again
// one handed back.
void Process::sync_reader_watches() {
  // Without backpressure the pipes are lent, and looked at by the sweep.
  if (!streams_.backpressure().configured()) {
    if (!streams_.any_lent()) {
      engine_.drop_lease(*this);
    } else {
      try {
        engine_.hold_lease(*this);
      } catch (...) {
        // No sweep to take it back: the pipes stay the loop's.
        for (OutputStream* pipe : streams_.both()) pipe->take_back(/*lapse=*/false);
      }
    }
  }
  for (OutputStream* pipe : streams_.both()) {
    if (!pipe->watch() || !pipe->open()) continue;
    if (pipe->lent()) {
      uv_poll_stop(pipe->watch().get());
      continue;
    }
    if (pipe->held() || drivers_.stepped_back()) continue;
    try {
      watch_pipe(*pipe, /*probe=*/true);
    } catch (...) {
      // As when a held-back stream cannot be watched again.
      end_unwatched(/*drain=*/true);
      return;
    }
  }
}

// ReaderLeases' sweep, the loop's one entry for it: takes back each pipe
// whose reader left bytes unread since the last sweep, or fell behind
// the child. Returns whether a reader still holds one.
bool Process::check_reader_leases() {
  // Most readers keep up: their reads since the last sweep say so, read
  // without the lock (a sweep over 2,000 lent pipes then touches a cache
  // line or two of each, and makes no system call).
  const std::array<OutputStream*, 2> pipes = streams_.both();
  bool doubt[2] = {false, false};
  for (int i = 0; i < 2; ++i)
    doubt[i] = pipes[i]->lent() && pipes[i]->lease_in_doubt();
  if (!doubt[0] && !doubt[1] && streams_.any_lent()) return true;
  std::lock_guard<std::mutex> work(work_mu_);
  if (final_on_loop()) return false;
  bool held = false;
  for (int i = 0; i < 2; ++i) {
    OutputStream* pipe = pipes[i];
    if (!pipe->lent()) continue;
    if (!doubt[i] || !pipe->reader_left_bytes()) {
      held = true;
      continue;
    }
    pipe->take_back(/*lapse=*/true);
    if (drivers_.stepped_back() || !pipe->watch()) continue;
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
