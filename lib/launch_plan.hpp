// What a child will run, resolved on the caller's thread before anything is
// cloned: the program found on the child's PATH, its argv, its environment
// (the host's merged with the spec's), and what the spawn adds to that plan
// before launch() carries it out (launch.hpp). A failure is a LaunchError.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "child_fds.hpp"
#include "child_signals.hpp"
#include "spec.hpp"
#include "sup.h"

namespace sup {

struct ChildConfine;

// A spawn that failed, with the code for the caller, the human detail and
// which part failed (enum sup_part).
struct LaunchError {
  int code;
  std::string message;
  int part = SUP_PART_SYSTEM;
};

// A user-supplied string for a message, shortened in the middle so that any
// detail stays within SUP_ERRBUF_SIZE.
std::string quoted(const std::string& s, size_t max_bytes = 600);

// Everything the child needs, resolved before the clone so that the child
// itself only makes system calls.
struct LaunchPlan {
  std::string exec_path;
  std::string argv0;
  std::optional<std::string> cwd;
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;  // empty: the host's environ, read at clone time
  bool tty_foreground = false;
  // "contain": "cgroup": the child's cgroup directory (ChildCgroup), which
  // the child starts in; -1 for none.
  int cgroup_fd = -1;
  // "contain": "auto": where the kernel refuses to start the child in the
  // cgroup (clone3 CLONE_INTO_CGROUP, or the child's own move into it), it
  // is started again without, in group mode (Launched::cgroup_refused).
  bool cgroup_optional = false;
  // PR_SET_PDEATHSIG to the spawner thread: false for the sentinel, and
  // for a child cloned on the caller's thread, which registers with the
  // sentinel instead.
  bool die_with_host = true;
  // Group mode on the caller's thread: the sentinel's socket, to which the
  // child sends its own group ("+PGID") before it execs, so that no
  // moment of its life is outside the sentinel's reach; -1 for none.
  int sentinel_fd = -1;
  // "pty": stdio is the slave of a new terminal, which the child, leading a
  // new session, makes its controlling terminal.
  bool terminal = false;
  // The child's signal dispositions ("keep_ignored_signals", "reset_signals").
  ChildSignals signals;
  // The child's 0, 1, 2 and "fds": set by the caller once the stdio
  // descriptors exist; a plan without it is not launched.
  ChildFdPlan fds;
  // "limits", "sandbox", "user": what the child applies before exec
  // (confine.hpp); null for none. Its Landlock ruleset descriptor stays
  // open in the child until then.
  const ChildConfine* confine = nullptr;
};

// Resolves argv[0] through the child's PATH and builds its environment.
// Throws LaunchError (SUP_ENOENT, SUP_EACCES).
LaunchPlan plan_launch(const Spec& spec);

}  // namespace sup
