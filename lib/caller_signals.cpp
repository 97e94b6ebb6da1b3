// The window, the latches and sup_signal's slots that callers write and the loop adopts.
#include "caller_signals.hpp"

#include <sched.h>
#include <signal.h>

#include <algorithm>

namespace sup {

void CallerSignals::close_for_reap() noexcept {
  inside_.fetch_or(kReaping, std::memory_order_acq_rel);
  while ((inside_.load(std::memory_order_acquire) & ~kReaping) != 0) sched_yield();
}

unsigned CallerSignals::host_claimed() const noexcept {
  return std::min(host_count_.load(std::memory_order_acquire), kHostSlots);
}

void CallerSignals::record_host(int sig, Nanos at) noexcept {
  const unsigned slot = host_count_.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= kHostSlots) return;
  host_[slot].at.store(at, std::memory_order_relaxed);
  host_[slot].signal.store(sig, std::memory_order_release);
}

bool CallerSignals::last_stop_on_terminal() const noexcept {
  for (unsigned i = host_claimed(); i-- > 0;) {
    const int sig = host_[i].signal.load(std::memory_order_acquire);
    if (sig == SIGTTIN || sig == SIGTTOU) return true;
    if (sig == SIGCONT || sig == SIGSTOP || sig == SIGTSTP) return false;
  }
  return false;
}

}  // namespace sup
