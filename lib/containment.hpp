// Containment of one child's tree ("contain"): its process group, or its
// cgroup; what the sentinel covers should the host die; and, in cgroup mode,
// the tree's end once the main process has ended (counted, killed, waited
// for, measured, removed). cgroup.cpp does the cgroup work; Process signals
// the group itself and asks this part for the rest of the tree.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cgroup.hpp"
#include "clock.hpp"
#include "sentinel.hpp"
#include "sup.h"

namespace sup {

// The result's containment keys: "contained", "leftovers_ended",
// "tree_cpu", "contain_fallback", "cgroup_left". The result (Result in
// process.hpp) is one of these, so that the part fills them and the API
// reads them where they always were.
struct ContainOutcome {
  int contained = SUP_CONTAIN_GROUP;  // enum sup_contain
  // Cgroup mode: what the end found of the tree and did.
  std::optional<int64_t> leftovers_ended;
  std::optional<TreeCpu> tree_cpu;
  // The reason an "auto" spec ran in group mode.
  std::optional<std::string> contain_fallback;
  // A cgroup directory that could not be removed.
  std::optional<std::string> cgroup_left;
};

// Locking: a member of Process (containment_). set(), fall_back_to_group()
// and set_host_death() come before anything but the spawning thread can see
// the process; afterwards the cgroup (or its absence), the fallback and
// host_death are immutable and read by any thread. signal() is
// async-signal-safe, from any thread (the cgroup's own atomics). The end
// (end_tree(), tree_ended(), close()) is under the process's work_mu_: the
// loop thread, or a caller finishing the process.
class Containment {
 public:
  // After cgroup.kill, how long the end waits for the tree to be gone, and
  // then for its directory to be removed: a process in uninterruptible
  // sleep dies only when it wakes. Beyond that the result says so
  // ("cgroup_left").
  static constexpr Nanos kTreeEmptyWait = 100 * kNanosPerMs;
  static constexpr Nanos kRemoveWait = 100 * kNanosPerMs;

  // Before the spawn: the child's cgroup ("contain": "cgroup", or "auto"
  // where possible; null in group mode), or why "auto" fell back to group
  // mode ("" otherwise).
  void set(std::unique_ptr<ChildCgroup> cgroup, std::string fallback) noexcept;
  // Right after the clone: "auto" ran the child in group mode after all,
  // the kernel having refused it its cgroup. The cgroup, empty (the child
  // never entered it), is removed.
  void fall_back_to_group(std::string why) noexcept;
  // At the clone: what the sentinel covers of this child ("host_death").
  void set_host_death(HostDeath how) noexcept { host_death_ = how; }

  bool in_cgroup() const noexcept { return cgroup_ != nullptr; }
  HostDeath host_death() const noexcept { return host_death_; }
  // The cgroup's directory (to look at its processes), or -1 in group mode.
  int cgroup_dir() const noexcept { return cgroup_ ? cgroup_->dir_fd() : -1; }
  // The cgroup, for the confinement's look at its event counts at the end
  // (Confinement::limit_hit); nullptr in group mode.
  ChildCgroup* cgroup() const noexcept { return cgroup_.get(); }

  // Cgroup mode: sig (then then_sig, if not 0) to every process of the tree
  // but pid (the main process) and, when group_signalled, the members of
  // its group (pid is its id), which the caller signalled itself; SIGKILL
  // as cgroup.kill, to all. Group mode: nothing. Async-signal-safe.
  // Returns how many processes it reached.
  int signal(int sig, int then_sig, pid_t pid, bool group_signalled) noexcept;

  // Cgroup mode, once the main process (pid) has ended: what is left of its
  // tree is counted (unless it was killed already, with the main process)
  // and killed, and waited for, briefly. Once; nothing in group mode.
  void end_tree(pid_t pid) noexcept;
  // end_tree() has run: nothing of the tree holds the pipes any more.
  bool tree_ended() const noexcept { return tree_ended_; }
  // Into the result, once, at the end: the tree ended (end_tree()), its
  // CPU, the cgroup removed. After the confinement's look (cgroup()).
  void close(pid_t pid, ContainOutcome& r) noexcept;
  // In a forked child: the parent's cgroup is the parent's to end and
  // remove.
  void disown() noexcept {
    if (cgroup_) cgroup_->disown();
  }

  // The result's containment keys and "host_death", each after ", ".
  void append_json(std::string& out, const ContainOutcome& r) const;

 private:
  std::unique_ptr<ChildCgroup> cgroup_;
  std::string fallback_;
  HostDeath host_death_ = HostDeath::main_process;
  bool tree_ended_ = false;
  int64_t leftovers_ = 0;  // what end_tree() counted
};

}  // namespace sup
