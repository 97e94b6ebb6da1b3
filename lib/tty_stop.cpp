// The main process's stop on its terminal (tty_stop.hpp): the checks'
// schedule, and what waitid says stopped it.
#include "tty_stop.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "proc_look.hpp"

namespace sup {

TtyStop::TtyStop(Nanos timeout, bool pty) noexcept
    : timeout_(timeout),
      // /proc/self/stat read once, at the spawn, and only when asked for.
      reachable_(timeout > 0 && (pty || session_has_terminal())) {}

Nanos TtyStop::max_gap() const noexcept {
  // The limit's precision: a stop is seen at most half the limit late
  // (kInterval at least, kMaxGap at most).
  return std::min(kMaxGap, std::max(kInterval, timeout_ / 2));
}

Nanos TtyStop::next_check(Nanos last_output) const noexcept {
  if (!reachable_) return kNever;
  const Nanos checked_at = checked_at_.load(std::memory_order_relaxed);
  const Nanos quiet_for = checked_at - last_output;  // at the last check
  Nanos next;
  if (checked_at == 0 || quiet_for < kBrisk) {
    next = checked_at + kInterval;
  } else {
    next = checked_at + std::min(max_gap(), std::max(kInterval, quiet_for / 2));
    next += kGrid - next % kGrid;
  }
  next = std::max(next, last_output + kQuiet);
  const Nanos since = since_.load(std::memory_order_relaxed);
  if (since != 0) next = std::min(next, since + timeout_);
  return next;
}

int TtyStop::stop_signal(int pidfd) noexcept {
  // WNOWAIT: the stop stays reportable for the next check (and for a host
  // that waits for it). A main process that has exited is not reported:
  // WEXITED is not asked. __WALL: the child was cloned without an exit
  // signal until its exec.
  siginfo_t info{};
  if (syscall(SYS_waitid, P_PIDFD, pidfd, &info, WSTOPPED | WNOHANG | WNOWAIT | __WALL, nullptr) != 0) return 0;
  if (info.si_pid == 0 || info.si_code != CLD_STOPPED) return 0;
  return info.si_status;
}

void TtyStop::checked(bool stopped_on_terminal, Nanos now) noexcept {
  checked_at_.store(now, std::memory_order_relaxed);
  // Counted from the first check that saw it: the stop may have begun up
  // to a gap earlier, but never later, so the end never comes early.
  if (!stopped_on_terminal)
    since_.store(0, std::memory_order_relaxed);
  else if (since_.load(std::memory_order_relaxed) == 0)
    since_.store(now, std::memory_order_relaxed);
}

bool TtyStop::timed_out(Nanos now) const noexcept {
  const Nanos since = since_.load(std::memory_order_relaxed);
  return reachable_ && since != 0 && now - since >= timeout_;
}

bool TtyStop::stopped_at_end(Nanos ended_at, Nanos last_output, bool exited_by_itself) const noexcept {
  const Nanos since = since_.load(std::memory_order_relaxed);
  if (exited_by_itself || since == 0) return false;
  const Nanos checked_at = checked_at_.load(std::memory_order_relaxed);
  // The limit ran out at the last check: that check ended it (ended_at may
  // be a caller's signal that came before, as a SIGTTIN of its own).
  if (checked_at - since >= timeout_) return true;
  if (since > ended_at) return false;
  return !(last_output > checked_at && last_output <= ended_at);
}

}  // namespace sup
