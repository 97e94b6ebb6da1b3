// What API threads ask of the loop thread for one child, latched until the loop takes it.
#pragma once

#include <atomic>

namespace sup {

// What a request asks of the loop (Process::handle_requests_locked).
// kInterrupt: sup_interrupt's second step (arm the grace's kill).
// kAbort: sup_abort or sup_release, or a pipe the loop could not watch
// again (the child is ended as one that cannot be watched).
// kResume: a reader read a held-back stream down (backpressure).
// kWatch: the callers waiting on the process changed (sync_watches).
// kRearm: the deadline moved earlier than the one armed (the first byte
// turned the first-output limit into a shorter idle limit).
// kReader: a live reader took a pipe to read itself, or gave it back
// (direct_read.cpp).
// kExpire: sup_expire, the max runtime as if it had come (escalation.cpp).
enum RequestBit : unsigned {
  kInterrupt = 1,
  kAbort = 2,
  kResume = 4,
  kWatch = 8,
  kRearm = 16,
  kReader = 32,
  kExpire = 64
};

// The requests latched for the loop, and whether the loop has been asked
// to start the process. Lock-free and async-signal-safe: any thread
// latches (a signal handler among them); the loop thread takes. Waking
// the loop is the caller's (Engine::wake_for, Engine::wake_loop).
class LoopRequests {
 public:
  void latch(unsigned bits) noexcept { bits_.fetch_or(bits); }
  bool pending() const noexcept { return bits_.load() != 0; }
  // The loop: every request latched so far; none is left latched.
  unsigned take() noexcept { return bits_.exchange(0); }
  // The loop, at a final process: nothing is left to do for them.
  void drop() noexcept { bits_.store(0); }

  // The loop has been woken for the start, or has started the process.
  void mark_start_asked() noexcept { start_asked_.store(true, std::memory_order_release); }
  // True for the one caller that is to wake the loop for the start; false
  // once anyone has.
  bool ask_start() noexcept {
    return !start_asked_.load(std::memory_order_acquire) && !start_asked_.exchange(true, std::memory_order_acq_rel);
  }

 private:
  std::atomic<unsigned> bits_{0};
  std::atomic<bool> start_asked_{false};
};

}  // namespace sup
