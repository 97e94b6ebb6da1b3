// How API threads reach the loop: its wake-up, the caller timer, and the queue of requests.
#pragma once

#include <uv.h>

#include <atomic>

#include "clock.hpp"
#include "unique_fd.hpp"
#include "uv_handle.hpp"

namespace sup {

class Process;

// API threads reach the loop through one eventfd (wake), or, for what can
// wait (an interrupt the caller sent itself, a process to free), through a
// timerfd they arm for when it must be handled (wake_by); processes with
// requests wait in a lock-free list (wake_for). Every call but the
// constructor, watch and forget is lock-free and async-signal-safe on the
// callers' side; woken, timer_fired and drain_requests are the loop
// thread's.
class LoopWake {
 public:
  // Throws LaunchError (eventfd, timerfd_create).
  LoopWake();
  // The engine's start: watches the eventfd (on_wake) and the caller timer
  // (on_timer) on loop. Returns 0 or libuv's error, with what is watched
  // left for close().
  int watch(uv_loop_t* loop, uv_poll_cb on_wake, uv_poll_cb on_timer) noexcept;

  void wake() noexcept;
  // The loop wakes by `when` (monotonic ns) at the latest.
  void wake_by(Nanos when) noexcept;
  // Queues proc for Process::handle_requests: at once, or by `by` (not 0).
  void wake_for(Process& proc, Nanos by) noexcept;

  // Loop thread, woken through the eventfd: what callers left for later is
  // done now, and the caller timer, not needed, is disarmed.
  void woken() noexcept;
  // Loop thread, woken by the caller timer.
  void timer_fired() noexcept;
  // Loop thread: hands every queued process its requests (one entry,
  // Process::handle_requests).
  void drain_requests();

  void close() noexcept;
  // In a forked child: closes the descriptors, leaves libuv's handles alone.
  void forget() noexcept;

 private:
  void enqueue(Process& proc) noexcept;
  void stand_down_caller_timer() noexcept;

  UniqueFd wake_fd_;
  UvHandle<uv_poll_t> wake_watch_;
  // Armed by callers (wake_by), never by the loop, which disarms it when
  // woken anyway (stand_down_caller_timer): the earliest time a caller
  // needs the loop awake by, in caller_timer_at_ (kNoCallerTimer when none
  // is armed).
  UniqueFd caller_timer_fd_;
  UvHandle<uv_poll_t> caller_timer_watch_;
  std::atomic<Nanos> caller_timer_at_;
  std::atomic<Process*> queued_head_{nullptr};
};

}  // namespace sup
