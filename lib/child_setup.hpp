// What sup_spawn makes for a child before its clone, handed to its Process whole at construction.
#pragma once

#include <memory>
#include <string>

#include "cgroup.hpp"
#include "confine.hpp"
#include "foreground.hpp"
#include "proc_look.hpp"
#include "unique_fd.hpp"

namespace sup {

// Made on the caller's thread (api_spawn.cpp), before anything else can
// see the process; each field goes to the part that owns it.
struct ChildSetup {
  // The file the child's stdin is, which a reader waiting for input waits
  // on (InputWait).
  StdinFile stdin_file;
  // The host's end of the child's stdin: the pipe's write end ("stdin":
  // "pipe") or the terminal's master ("pty"), else none (ChildInput).
  UniqueFd input;
  // The child's cgroup, or why "auto" fell back to group mode (Containment).
  std::unique_ptr<ChildCgroup> cgroup;
  std::string contain_fallback;
  // "limits", "sandbox", "user" (confine.hpp); null without them.
  std::unique_ptr<Confinement> confinement;
  // "tty_foreground": asked, and refused why (HostTerminal).
  ForegroundGrant foreground;
};

}  // namespace sup
