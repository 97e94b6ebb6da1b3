// Setting the child's signal dispositions before its exec (child_signals.hpp).
#include "child_signals.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sup {
namespace {

// The kernel's struct sigaction (not glibc's): the child calls the system
// call directly.
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

}  // namespace

// Runs on the child's stack before exec: no sanitizer hooks (see launch.cpp).
__attribute__((no_sanitize("address", "undefined", "thread"))) void apply_child_signals(
    const ChildSignals& signals) noexcept {
  KernelSigaction dfl{};
  dfl.handler = SIG_DFL;
  for (int sig = 1; sig <= 64; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    const uint64_t bit = uint64_t{1} << (sig - 1);
    if (signals.keep_ignored && (signals.reset & bit) == 0) {
      KernelSigaction now{};
      if (syscall(SYS_rt_sigaction, sig, nullptr, &now, sizeof(uint64_t)) == 0 && now.handler == SIG_IGN) continue;
    }
    // A handler would be reset by the exec anyway; SIG_IGN would not be.
    syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(uint64_t));
  }
}

}  // namespace sup
