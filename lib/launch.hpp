// Starting a child: the clone runs on the library's spawner thread so that
// PR_SET_PDEATHSIG ties the child to a thread that lives as long as the
// library; the plan it carries out is made before, on the caller's thread
// (launch_plan.hpp). The descriptors of a spawn and their helpers are here.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "clock.hpp"
// The plan launch() carries out, and LaunchError, which every step throws.
#include "launch_plan.hpp"
#include "unique_fd.hpp"

// Marks the code the clone runs before exec (launch.cpp, child_fds.cpp,
// confine.cpp): no sanitizer hooks, as it runs on the parent's memory.
#define SUP_CHILD_CODE __attribute__((no_sanitize("address", "undefined", "thread")))

namespace sup {

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
