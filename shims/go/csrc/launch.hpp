// Starting a child: the plan is made on the caller's thread, the clone runs on
// the library's spawner thread so that PR_SET_PDEATHSIG ties the child to a
// thread that lives as long as the library.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "child_signals.hpp"
#include "child_fds.hpp"
#include "clock.hpp"
#include "spec.hpp"
#include "sup.h"
#include "unique_fd.hpp"

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

// Descriptors the child gets as 0, 1 and 2: sup's pipe ends and /dev/null
// (>= 3), or the host's own.
struct ChildStdio {
  int fd[3];
};

// The descriptors of one spawn, on both sides of the child's pipes.
struct SpawnFds {
  ChildStdio stdio{};
  // The child's ends: closed on the spawner thread right after the clone, before
  // any exit is watched, or a fast child's EOF would look like a leftover
  // still holding the pipe.
  UniqueFd child_out, child_err, child_stdin;
  // Ours.
  UniqueFd out_read, err_read, stdin_write, tty;
  pid_t host_pgrp = 0;
};

// The memory the cloned child runs on until it execs. One for the spawner
// thread: spawns there are serialized.
class ChildStack {
 public:
  ChildStack();
  ~ChildStack();
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  void* top() const noexcept;

 private:
  void* base_ = nullptr;
  size_t size_ = 0;
};

struct Launched {
  pid_t pid;
  Nanos started_at;  // taken at the exec: where the first idle period starts
  UniqueFd pidfd;
  // cgroup_optional: why the child runs outside its cgroup ("" when it is
  // inside, or none was asked for).
  std::string cgroup_refused;
  // tty_foreground: the child's group has the terminal.
  bool took_terminal = false;
};

// Clones and execs, every signal blocked around the clone, the child's
// descriptors placed as plan.fds says. Runs on the spawner thread, whose
// life PR_SET_PDEATHSIG ties the child to.
// Throws LaunchError with the errno of the step that failed (cwd, exec, ...).
Launched launch(const LaunchPlan& plan, ChildStack& stack);

// A close-on-exec pipe, both ends above stdio. Throws LaunchError.
struct PipeEnds {
  UniqueFd read_end;
  UniqueFd write_end;
};
PipeEnds make_pipe();

// O_NONBLOCK on fd (its open file description). Throws LaunchError.
void set_nonblocking(int fd);

// Moves fd to a number >= 3 if it is 0, 1 or 2 (a host that closed its own
// stdio would otherwise get our pipes there). Returns the fd to use.
UniqueFd above_stdio(UniqueFd fd);

}  // namespace sup
