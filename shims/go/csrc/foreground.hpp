// "tty_foreground": whether the child's group is given the host's terminal.
// Only the foreground may hand it over: TIOCSPGRP with SIGTTOU blocked is
// allowed from a background group too, and would take the terminal from the
// shell that put the host in the background.
#pragma once

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

}  // namespace sup
