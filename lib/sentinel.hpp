// Host death: a small process outside the host that ends every supervised
// tree when the host dies, however it dies (SIGKILL included) or execs.
//
// The engine keeps one end of a SOCK_SEQPACKET socket pair (close-on-exec,
// so an exec counts as a death); sup-sentinel, a tiny program installed in
// libexecdir (or found next to the library), holds the other. It is started
// once per engine from the spawner thread by the same vfork-style clone as a
// child (nothing of a large host's memory is copied), execs, forks once and
// the first half exits: the sentinel is then nobody's child in the host (a
// waitpid(-1) never sees it) and leads a session of its own (kill(0, ...)
// and the terminal's signals never reach it). It needs nothing of the
// library once started, so it outlives dlclose.
//
// The sentinel reads records in batches (a record wakes nobody; the
// host's end closing does), so registering costs a spawn one send.
// Each message is one record: "+PGID" a group-mode child's process group
// (sent on the spawner thread right after the clone), "-PGID" that group
// ended (sent just before its leader is reaped, while the zombie still pins
// the id), "cPATH" a host cgroup directory sup made, "q" the engine ended
// cleanly (then the engine shuts its end down and waits, at most 100 ms,
// for the sentinel to close its own). At end of file without "q" the sentinel writes cgroup.kill of
// every directory, sends SIGKILL to every group still listed, waits for the
// directories to empty, removes them depth first, and exits.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>

#include "unique_fd.hpp"

namespace sup {

class ChildStack;

class Sentinel {
 public:
  // Makes the socket pair; without one, host death is covered by
  // PR_SET_PDEATHSIG alone.
  Sentinel() noexcept;
  // Says "q" and closes: the engine has ended every child itself.
  ~Sentinel();
  Sentinel(const Sentinel&) = delete;
  Sentinel& operator=(const Sentinel&) = delete;

  // Spawner thread, once: starts sup-sentinel and waits until the first
  // half has exited. On failure (no program found, out of processes) the
  // engine goes on without it.
  void start(ChildStack& stack, int dev_null) noexcept;
  // Any thread: the sentinel has started and holds its end.
  bool running() const noexcept { return running_.load(std::memory_order_acquire); }
  // The engine's end, for a child to register its own group before it
  // execs (launch.cpp); -1 without a sentinel.
  int fd() const noexcept { return ours_.get(); }
  // fork(2)'s child handler: closes this process's copy of the engine's
  // end, so that the parent's death is still seen. Async-signal-safe.
  static void close_in_forked_child() noexcept;
  // In a forked child: forgets the descriptors without closing them (the
  // fork handler closed ours; the numbers may be reused).
  void abandon() noexcept;

  // Any thread. One send each, never blocking: a sentinel that does not
  // read (stopped) costs a record, never the host's progress.
  void watch_group(pid_t pgid) noexcept;
  void forget_group(pid_t pgid) noexcept;
  void watch_dir(const std::string& path) noexcept;

  // The program's path: next to the library (a build tree), else
  // SUP_LIBEXECDIR. Empty if neither exists.
  static std::string program_path();

 private:
  void send(const char* record, size_t len) noexcept;
  UniqueFd ours_;
  UniqueFd theirs_;  // until start() has handed it over
  std::atomic<bool> running_{false};
};

}  // namespace sup
