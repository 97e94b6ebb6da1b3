// Callers in sup_poll that watch the exit and read the pipes themselves while the loop stands back.
#pragma once

#include <atomic>

#include "clock.hpp"
#include "unique_fd.hpp"

namespace sup {

// A caller waiting for the result in sup_poll watches the pidfd and both
// pipes itself, and the loop stops its own watches meanwhile (a second
// thread asleep on them costs the dying child an interprocessor wake-up;
// Process::drive_to_exit). This holds who drives and what the loop did
// about it:
// - the drivers: callers inside drive_to_exit;
// - whether the loop stepped back: its exit and pipe watches are stopped
//   (or were never started) because a caller drives;
// - descriptors the loop closed while a driver may still poll them, kept
//   open until the last driver leaves (a closed number could be reused
//   under that poll): the pidfd and both pipes at most.
// All of it under Process's work_mu_, on any thread; but the exit
// waiters, an atomic: callers in wait_leader_exit, whom the loop lets run
// first once the main process has exited.
class CallerDrivers {
 public:
  // How long a caller waits awake for the loop's next step when that step
  // is microseconds away (the result after the exit, the reap after the
  // result), before it sleeps on a condition variable: a sleep there costs
  // a second wake-up in series. Yielding, not busy: on one CPU the loop runs.
  static constexpr Nanos kAwakeWait = 50'000;

  // ---- Drivers (under work_mu_) --------------------------------------------
  // A caller starts driving. True when the loop, started (loop_started) and
  // watching, must be woken to step back: the first driver's.
  bool enter(bool loop_started) noexcept { return ++drivers_ == 1 && loop_started && !stepped_back_; }
  // A caller stops driving. True when the loop, having stepped back, must
  // be woken to watch again: the last driver's. What was retired meanwhile
  // is closed once none is left.
  bool leave() noexcept;
  bool any() const noexcept { return drivers_ > 0; }

  // ---- The loop's side (under work_mu_) ------------------------------------
  bool stepped_back() const noexcept { return stepped_back_; }
  // What the loop is to do with its watches now that callers came or went:
  // stop them (back), start them again (in), or nothing. Records the step.
  enum class Step { none, back, in };
  Step sync() noexcept;
  // start(): a caller was driving before the loop had the process; its
  // watches are made but not started.
  void stand_back() noexcept { stepped_back_ = true; }
  // Closes fd, unless a driver may be polling it: then keeps it open until
  // the last driver leaves.
  void retire(UniqueFd& fd) noexcept;

  // ---- Exit waiters (any thread) -------------------------------------------
  void exit_waiter_enters() noexcept { exit_waiters_.fetch_add(1, std::memory_order_acq_rel); }
  void exit_waiter_leaves() noexcept { exit_waiters_.fetch_sub(1, std::memory_order_acq_rel); }
  bool exit_awaited() const noexcept { return exit_waiters_.load(std::memory_order_acquire) > 0; }

 private:
  int drivers_ = 0;
  bool stepped_back_ = false;
  UniqueFd retired_[3];
  std::atomic<int> exit_waiters_{0};
};

}  // namespace sup
