// sup_signal: any signal from the host to the child's process group, from
// any thread or a signal handler. It is the host's, not an ending: it never
// changes the outcome, only appears in signals_sent.
#include <errno.h>
#include <signal.h>
#include <unistd.h>


#include "process.hpp"
#include "sup.h"

namespace sup {

// sup_signal: sig (0: only whether the result is final yet) to the group,
// recorded for signals_sent. Async-signal-safe. Returns 0 or an error.
int Process::signal_from_caller(int sig) noexcept {
  const int saved_errno = errno;
  int rc = SUP_ESRCH;
  // The window kill_from_caller uses: until the loop is about to reap the
  // main process (kReaping), its pid, and so the group id, is ours.
  const CallerSignals::Window window(signals_);
  if (window.open() && !is_final()) {
    // Running, or exited and not reaped (its group may still hold what it
    // left): signaled. Reaped by the host (waitid fails): its pid may be a
    // stranger's by now.
    if (main_.unreaped()) {
      rc = 0;
      if (sig != 0) {
        const Nanos at = now_ns();
        // The group, and the main process if it left it (escalation.cpp).
        const bool to_child = send_to_child(sig);
        const int child_errno = errno;
        // Cgroup mode: the rest of the tree too (setsid'd descendants).
        const bool delivered = signal_tree(sig, 0, to_child) > 0 || to_child;
        if (!delivered) rc = child_errno == EPERM ? SUP_EPERM : SUP_ESRCH;
        if (delivered) signals_.record_host(sig, at);
      }
    }
  }
  errno = saved_errno;
  return rc;
}

// sup_signal's records, taken into the signals sent by the loop
// (adopt_caller_signals), and put in time order at the end.
void Process::adopt_host_signals() noexcept {
  // A slot claimed but not yet written is taken at a later look (at the
  // latest in publish_final, which waits for every caller to leave).
  signals_.adopt_host([this](int sig, Nanos at) {
    try {
      escalation_.record(sig, at);
    } catch (...) {
      // Out of memory: sent, not listed.
    }
  });
}

void Process::order_signals_sent() {
  // The host's signals are adopted when the loop next looks, after signals
  // it may have sent itself meanwhile: the list is put in time order.
  if (!signals_.any_host_adopted()) return;
  escalation_.sort_signals();
}

}  // namespace sup
