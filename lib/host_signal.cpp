// sup_signal: any signal from the host to the child's process group, from
// any thread or a signal handler. It is the host's, not an ending: it never
// changes the outcome, only appears in signals_sent.
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "process.hpp"
#include "sup.h"

namespace sup {

int Process::signal_from_caller(int sig) noexcept {
  const int saved_errno = errno;
  int rc = SUP_ESRCH;
  // The window kill_from_caller uses: until the loop is about to reap the
  // main process (kReaping), its pid, and so the group id, is ours.
  const unsigned before = caller_kills_.fetch_add(1, std::memory_order_acq_rel);
  if ((before & kReaping) == 0 && !is_final()) {
    // Running, or exited and not reaped (its group may still hold what it
    // left): signaled. Reaped by the host (waitid fails): its pid may be a
    // stranger's by now.
    siginfo_t info{};
    if (syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &info, WEXITED | WNOHANG | WNOWAIT | __WALL, nullptr) == 0) {
      rc = 0;
      if (sig != 0) {
        const Nanos at = now_ns();
        // The group, and the main process if it left it (escalation.cpp).
        const bool to_child = send_to_child(sig);
        const int child_errno = errno;
        // Cgroup mode: the rest of the tree too (setsid'd descendants).
        const bool delivered = signal_tree(sig, 0, to_child) > 0 || to_child;
        if (!delivered) rc = child_errno == EPERM ? SUP_EPERM : SUP_ESRCH;
        const unsigned slot = delivered ? host_sent_count_.fetch_add(1, std::memory_order_acq_rel) : kHostSignalSlots;
        if (slot < kHostSignalSlots) {
          host_sent_[slot].at.store(at, std::memory_order_relaxed);
          host_sent_[slot].signal.store(sig, std::memory_order_release);
        }
      }
    }
  }
  caller_kills_.fetch_sub(1, std::memory_order_acq_rel);
  errno = saved_errno;
  return rc;
}

void Process::adopt_host_signals() noexcept {
  const unsigned claimed = std::min(host_sent_count_.load(std::memory_order_acquire), kHostSignalSlots);
  // A slot claimed but not yet written is taken at a later look (at the
  // latest in publish_final, which waits for every caller to leave).
  while (host_sent_adopted_ < claimed) {
    const HostSignal& s = host_sent_[host_sent_adopted_];
    const int sig = s.signal.load(std::memory_order_acquire);
    if (sig == 0) break;
    try {
      escalation_.record(sig, s.at.load(std::memory_order_relaxed));
    } catch (...) {
      // Out of memory: sent, not listed.
    }
    ++host_sent_adopted_;
  }
}

void Process::order_signals_sent() {
  // The host's signals are adopted when the loop next looks, after signals
  // it may have sent itself meanwhile: the list is put in time order.
  if (host_sent_adopted_ == 0) return;
  escalation_.sort_signals();
}

}  // namespace sup
