// Monotonic time in nanoseconds. Deadlines are kept in ns from this clock, not
// in libuv's cached millisecond loop time, so that a timeout is never early.
#pragma once

#include <sched.h>
#include <sys/time.h>
#include <time.h>

#include <cstdint>
#include <limits>

namespace sup {

using Nanos = int64_t;
constexpr Nanos kNanosPerMs = 1000000;
// No deadline: the largest time, so that min() of deadlines needs no case.
constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

inline Nanos now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Waits awake for done(), at most `budget` ns past `from`, yielding the CPU
// (on one CPU the thread being waited for runs meanwhile). Returns the time
// it stopped at.
template <class Done>
Nanos yield_until(Nanos from, Nanos budget, Done done) noexcept {
  Nanos now = from;
  for (const Nanos until = from + budget; now < until && !done(); now = now_ns()) sched_yield();
  return now;
}

inline double ns_to_ms(Nanos ns) noexcept { return static_cast<double>(ns) / 1e6; }

// Whole microseconds, to the nearest: for text that shows three decimals of
// a millisecond.
inline int64_t ns_to_us(Nanos ns) noexcept { return ns >= 0 ? (ns + 500) / 1000 : -((-ns + 500) / 1000); }

inline double timeval_ms(const timeval& tv) noexcept {
  return static_cast<double>(tv.tv_sec) * 1e3 + static_cast<double>(tv.tv_usec) / 1e3;
}

inline int64_t timeval_us(const timeval& tv) noexcept {
  return static_cast<int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
}

}  // namespace sup
