// Cgroup v2 containment ("contain": "cgroup"): where sup makes its cgroups,
// one per child inside one directory per host, and how a child's whole tree
// is signalled, killed, measured and removed. sup writes only into
// directories it made itself.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

// The host's directories, and forget_host_cgroups_after_fork, which the
// engine's atfork handler calls with remove_host_cgroups below.
#include "cgroup_host.hpp"
#include "clock.hpp"
#include "unique_fd.hpp"

namespace sup {

class Sentinel;

// The whole tree's CPU time, from cpu.stat.
struct TreeCpu {
  int64_t user_us = 0;
  int64_t sys_us = 0;
};

// One child's cgroup: <parent>/sup-<host pid>-<host start time>/c<N>.
class ChildCgroup {
 public:
  // Makes the cgroup of one child, in the host's directory of the parent
  // that parent_key (the spec's "cgroup_parent") chooses (cgroup_host.hpp).
  // Throws LaunchError: SUP_ENOTSUP with the reason ("contain: ...") when no
  // cgroup can be made there, or another code (out of fds, memory).
  static std::unique_ptr<ChildCgroup> create(const std::optional<std::string>& parent_key, Sentinel& sentinel);
  // Removes the directory if it is still there (a spawn that failed).
  ~ChildCgroup();
  ChildCgroup(const ChildCgroup&) = delete;
  ChildCgroup& operator=(const ChildCgroup&) = delete;

  const std::string& path() const noexcept { return path_; }
  // For clone3(CLONE_INTO_CGROUP), and for openat of its files.
  int dir_fd() const noexcept { return dir_.get(); }

  // ---- Async-signal-safe, any thread ------------------------------------
  // cgroup.kill: SIGKILL to every process of the tree, sub-cgroups
  // included, and to any it forks meanwhile. Returns true when written.
  bool kill() noexcept;
  // Some thread has written cgroup.kill.
  bool killed() const noexcept { return killed_.load(std::memory_order_acquire); }
  // Sends sig to every process of the tree except skip_pid and the members
  // of process group skip_pgid (0: none), which the caller signals itself:
  // the tree is frozen first (cgroup.freeze, waited for up to 50 ms), so
  // that nothing forks past the listing, and thawed after. Returns how many
  // processes it reached.
  int signal(int sig, pid_t skip_pid, pid_t skip_pgid) noexcept;
  // Processes of the tree alive now (cgroup.procs of it and every
  // sub-cgroup; zombies are not listed there), except skip_pid.
  int64_t count_alive(pid_t skip_pid) noexcept;

  // ---- The end, on one thread -------------------------------------------
  // Waits until cgroup.events says "populated 0", at most budget ns.
  bool wait_empty(Nanos budget) noexcept;
  // The tree's CPU from cpu.stat (descendants included), if readable.
  std::optional<TreeCpu> cpu() noexcept;
  // Removes the directory, sub-cgroups first, retrying (cgroup.kill again
  // between tries) for at most budget ns. Returns true when it is gone.
  bool remove(Nanos budget) noexcept;
  bool removed() const noexcept { return removed_; }
  // In a forked child, on the parent's cgroup: left alone at destruction.
  void disown() noexcept { removed_ = true; }

 private:
  ChildCgroup(std::string path, UniqueFd dir, UniqueFd kill_fd) noexcept;
  void set_frozen(bool frozen) noexcept;

  const std::string path_;
  UniqueFd dir_;
  UniqueFd kill_;
  std::atomic<bool> killed_{false};
  std::atomic<int> freezers_{0};
  bool removed_ = false;
};

// Removes every host directory this process made (depth first), at the
// engine's end: each child's cgroup is gone by then unless one could not be
// removed. Forgets them either way, and frees what recorded them: nothing
// may use a ChildCgroup afterwards (a later engine starts afresh).
void remove_host_cgroups() noexcept;

}  // namespace sup
