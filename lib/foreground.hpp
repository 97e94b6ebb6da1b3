// "tty_foreground": whether the child's group is given the host's terminal,
// and its hand-back at the end. Only the foreground may hand it over:
// TIOCSPGRP with SIGTTOU blocked is allowed from a background group too, and
// would take the terminal from the shell that put the host in the background.
#pragma once

#include <sys/types.h>

#include <utility>

#include "unique_fd.hpp"

namespace sup {

// As it went for one child: not asked, given, or refused with the reason (a
// static string). Decided before the caller has the handle (the child's
// side may refuse at the last moment, launch.cpp), then immutable.
struct ForegroundGrant {
  bool asked = false;
  const char* refused = nullptr;
};

// The host's side of the decision, on the caller's thread: given when fd 0
// is the host's controlling terminal and the host's group its foreground.
ForegroundGrant decide_foreground(bool asked) noexcept;

// The child found the host's group no longer in the foreground.
constexpr const char* kLeftForeground =
    "the host's process group left the terminal's foreground before the child started";

// The host's terminal as lent to one child: the grant as it went, and,
// while the child's group is the terminal's foreground, the terminal and the
// host's group it goes back to.
// Locking: a member of Process (host_terminal_). set_grant() and lend() come
// before anything but the spawning thread can see the process (the grant is
// immutable afterwards and read by any thread). From then on the terminal is
// under the process's work_mu_: lent() is asked there by the loop and by a
// caller, who leaves a lent terminal to the loop; hand_back() is the loop
// thread's, whose signal mask blocks SIGTTOU (a caller's finish finds
// nothing lent, or does not finish).
class HostTerminal {
 public:
  // Before the spawn, and the child's last-moment refusal before lend().
  void set_grant(ForegroundGrant grant) noexcept { grant_ = grant; }
  const ForegroundGrant& grant() const noexcept { return grant_; }
  // At the exec: the host's terminal (invalid: none lent), whose foreground
  // the child's group now is, and the host's group, whose it was.
  void lend(UniqueFd tty, pid_t host_pgrp) noexcept {
    tty_ = std::move(tty);
    host_pgrp_ = host_pgrp;
  }
  bool lent() const noexcept { return tty_.valid(); }
  // The terminal back to the host's group if the child's group (pgid)
  // still has it; the terminal is not the child's any more either way.
  void hand_back(pid_t pgid) noexcept;

 private:
  ForegroundGrant grant_;
  UniqueFd tty_;
  pid_t host_pgrp_ = 0;
};

}  // namespace sup
