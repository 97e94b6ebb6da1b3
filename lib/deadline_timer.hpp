// The loop's one timer for the deadlines of every process.
#pragma once

#include <uv.h>

#include "clock.hpp"
#include "engine_links.hpp"
#include "unique_fd.hpp"
#include "uv_handle.hpp"

namespace sup {

// One timerfd carries the earliest deadline of every process, in monotonic
// nanoseconds (libuv's timers count milliseconds). Loop thread only, but
// for the constructor (the engine's start) and forget (a forked child).
class DeadlineTimer {
 public:
  // A thread woken from a long sleep pays the CPU's deepest idle exit: about
  // 130 us at p50 on a 2-core VM, against about 20 us after a sleep of 100
  // us. So the timer wakes the loop this much before a deadline, and the
  // process waits the rest awake (Process::on_deadline). A 100 ms max
  // runtime, by sup's own clock, signal sent past the deadline (100 runs):
  // p50 43 -> 1 us, p90 62 -> 1 us, against a lead of 100 us asleep.
  static constexpr Nanos kLead = 250'000;

  // Throws LaunchError (timerfd_create).
  DeadlineTimer();
  // The engine's start: watches the timer on loop. Returns 0 or libuv's
  // error, the watch then undone.
  int watch(uv_loop_t* loop) noexcept;
  void set(Process& proc, Nanos when);
  void clear(Process& proc);
  // The engine's end: no deadline is left, and the watch is closed.
  void close() noexcept;
  // In a forked child: closes the timerfd, leaves libuv's handle alone.
  void forget() noexcept;

 private:
  // Every deadline due (or within kLead) goes to its process, earliest
  // first (Process::on_deadline): the timer's one entry into a process.
  void on_timer();
  void program();

  UniqueFd fd_;
  UvHandle<uv_poll_t> watch_;
  DeadlineSet deadlines_;
  Nanos armed_for_ = 0;
};

}  // namespace sup
