// How long the main process has been stopped on its terminal (SIGTTIN or
// SIGTTOU), for "tty_stop_timeout_ms": from waitid on its pidfd, not /proc.
#pragma once

#include <atomic>

#include "clock.hpp"

namespace sup {

// A main process stopped by SIGTTIN or SIGTTOU read, wrote or configured
// its controlling terminal from a background group and can never go on by
// itself. The kernel tells only the parent which signal stopped it (waitid,
// WSTOPPED), and only by SIGCHLD (the host's, which a library must not
// take) or a blocked waitid (a thread parked per child); the pidfd shows
// exits alone. So the loop asks waitid (WNOHANG | WNOWAIT, a system call,
// no /proc read), and only while the child's output is quiet: a stopped
// main process writes nothing. Locking: written by the loop thread under
// Process::work_mu_; atomics so that next_check() may be read from the
// spawning thread too (Process::loop_needed_by).
class TtyStop {
 public:
  // The first check comes kQuiet after the last output; then every
  // kInterval while the child has been quiet under kBrisk; after that each
  // check comes half the quiet time so far after the previous one, at most
  // max_gap() apart, on kGrid ticks (the checks of many quiet children
  // share a wake-up).
  static constexpr Nanos kQuiet = 30 * kNanosPerMs;
  static constexpr Nanos kInterval = 50 * kNanosPerMs;
  static constexpr Nanos kBrisk = 1000 * kNanosPerMs;
  static constexpr Nanos kMaxGap = 4000 * kNanosPerMs;
  static constexpr Nanos kGrid = 100 * kNanosPerMs;

  // timeout: 0 for off. pty: the child has a terminal of its own as its
  // controlling one; else it shares the host's session, and when that has
  // no controlling terminal nothing can stop on one: no check is ever made.
  TtyStop(Nanos timeout, bool pty) noexcept;
  TtyStop(const TtyStop&) = delete;
  TtyStop& operator=(const TtyStop&) = delete;

  bool on() const noexcept { return reachable_; }
  // When the next check is due (kNever when off): the schedule above, and
  // the limit's end while the main process is stopped.
  Nanos next_check(Nanos last_output) const noexcept;
  // The signal that stopped the main process behind pidfd (0: it is not
  // stopped, or its stop was already collected by another waitid without
  // WNOWAIT, the host's own waitpid(WUNTRACED) for example).
  static int stop_signal(int pidfd) noexcept;
  // A check's finding at now: stopped on the terminal (and not by a caller's
  // own SIGTTIN or SIGTTOU), or not.
  void checked(bool stopped_on_terminal, Nanos now) noexcept;
  // The limit ran out: stopped on the terminal, as seen by the checks, for
  // at least the limit.
  bool timed_out(Nanos now) const noexcept;
  // For the result's "waiting_for_input": the last check before ended_at
  // saw it stopped, with no output read between that check and the end,
  // and the main process did not exit by itself (it was continued).
  bool stopped_at_end(Nanos ended_at, Nanos last_output, bool exited_by_itself) const noexcept;

 private:
  Nanos max_gap() const noexcept;

  const Nanos timeout_;
  const bool reachable_;
  std::atomic<Nanos> checked_at_{0};  // the last check, 0 for none yet
  std::atomic<Nanos> since_{0};       // the first check of this stop, 0: not stopped
};

}  // namespace sup
