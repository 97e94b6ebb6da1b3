// "backpressure_bytes": when a stream its reader does not keep up with is held back, and when it resumes.
#pragma once

#include <cstdint>

namespace sup {

// The window from the spec (0: every pipe is always drained) and whether it
// still applies: once the main process has exited or sup is ending it, it
// is lifted for good and every pipe drains at full speed, read or not.
// The window is immutable (any thread reads it); lifted under Process's
// work_mu_. Holding a stream back and resuming it (its held flag, its
// watch stopped) is Streams' (streams.hpp); this decides when.
class Backpressure {
 public:
  explicit Backpressure(uint64_t window) noexcept : window_(window) {}
  // "backpressure_bytes" is set: the live reader's pace may hold the child.
  bool configured() const noexcept { return window_ != 0; }
  // It holds streams back now: set, and not lifted.
  bool applies() const noexcept { return window_ != 0 && !lifted_; }
  bool lifted() const noexcept { return lifted_; }
  // A stream is held back once more than the window is unread...
  bool over(uint64_t unread) const noexcept { return unread > window_; }
  // ...and resumes once its unread bytes fall to half the window, not just
  // below it: each resume then refills half a window instead of one read,
  // and the loop and the reader stop trading a wake-up (and two epoll_ctl)
  // for every read.
  bool may_resume(uint64_t unread) const noexcept { return unread <= window_ / 2; }
  // Lifts it for good. False if it was lifted already.
  bool lift() noexcept {
    if (lifted_) return false;
    lifted_ = true;
    return true;
  }

 private:
  const uint64_t window_;
  bool lifted_ = false;
};

}  // namespace sup
