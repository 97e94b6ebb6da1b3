// The signal dispositions a child starts with ("keep_ignored_signals",
// "reset_signals"), set in the child between clone and exec.
#pragma once

#include <cstdint>

namespace sup {

// What the child's dispositions become; a plain value, copied into the
// child's arguments before the clone.
struct ChildSignals {
  // The host's SIG_IGN dispositions stay (as fork and exec keep them), as
  // shells, nohup and GNU timeout pass an ignored signal on.
  bool keep_ignored = false;
  // Bit sig - 1: SIG_DFL in the child even when the host ignores it.
  uint64_t reset = 0;
};

// In the child, sharing the host's memory until exec: every signal but
// SIGKILL and SIGSTOP back to SIG_DFL, except, with keep_ignored, one the
// host ignores (the child's copy of the dispositions is the host's at the
// clone) that reset does not name. Raw system calls only; every signal is
// blocked meanwhile, so no host handler can run in the child.
void apply_child_signals(const ChildSignals& signals) noexcept;

}  // namespace sup
