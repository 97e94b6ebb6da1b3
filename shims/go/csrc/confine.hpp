// A child's confinement: its limits, sandbox and credentials, planned on the
// caller's thread (ConfinePlan), applied by the child between clone and exec
// (confine_child), and kept by the process for its result ("confined",
// "limit") and to remove the private "tmp" directory at release.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "confine_spec.hpp"
#include "credentials.hpp"
#include "limits.hpp"
#include "sandbox.hpp"

namespace sup {

class ChildCgroup;
struct LaunchPlan;

// What the child reads between clone and exec: plain values and pointers
// into a ConfinePlan that outlives the clone.
struct ChildConfine {
  const RlimitSetting* rlimits = nullptr;
  size_t rlimit_count = 0;
  // Those of a start outside the cgroup after all (Limits::group_rlimits).
  const RlimitSetting* group_rlimits = nullptr;
  size_t group_rlimit_count = 0;
  bool set_groups = false;
  const gid_t* groups = nullptr;
  size_t group_count = 0;
  long gid = -1;  // -1: unchanged
  long uid = -1;
  bool no_new_privs = false;
  int ruleset_fd = -1;
  const struct sock_fprog* filter = nullptr;
  // A uid or gid changes: the host keeps its dumpable flag (DumpableKeeper)
  // and the child sets its parent-death signal again.
  bool changes_ids() const noexcept { return uid >= 0 || gid >= 0; }
  // For "auto"'s start in group mode once the kernel refused the cgroup:
  // the rlimits standing in for the cgroup's limits.
  ChildConfine outside_cgroup() const noexcept {
    ChildConfine c = *this;
    c.rlimits = group_rlimits;
    c.rlimit_count = group_rlimit_count;
    return c;
  }
};

// Runs in the child (launch.cpp's child_main), after its descriptors and
// signal dispositions and before exec: rlimits, groups, gid, uid (then the
// parent-death signal again, which a change of ids clears, when
// pdeath_signal is not 0; a host gone meanwhile ends the child),
// no_new_privs, landlock_restrict_self, seccomp. Raw system calls only, no
// allocation: the child shares the host's memory. Returns 0, or the errno of
// the step that failed with *step naming it (a static string).
int confine_child(const ChildConfine& c, int pdeath_signal, pid_t host_pid, const char** step);

// The confinement of one child as its process keeps it: what the result
// says of it, the limit that ended the child, and the "tmp" directory.
class Confinement {
 public:
  Confinement() = default;
  // Removes the "tmp" directory, if this process made it.
  ~Confinement();
  Confinement(const Confinement&) = delete;
  Confinement& operator=(const Confinement&) = delete;

  // The result's "confined" value (an object), made at the spawn.
  const std::string& json() const noexcept { return json_; }
  // At the end, before the cgroup is removed: "memory", "cpu",
  // "file_size", "processes" or nullptr (Limits::limit_hit).
  const char* limit_hit(const siginfo_t& status, const struct rusage& usage, ChildCgroup* cgroup) const noexcept;
  // "auto" started the child in group mode after all (why): the limits
  // the cgroup was to hold are the rlimits it set, and "confined" says so.
  // Out of memory, "confined" stays as it was.
  void fall_back_to_group(const std::string& why) noexcept;
  // Removes the "tmp" directory and all in it (sup_release, on the
  // releasing thread). Idempotent; nothing in a forked child, whose
  // parent's directory it is.
  void remove_tmp() noexcept;

 private:
  friend class ConfinePlan;
  // json_ from the limits' entries and rest_ (the sandbox's and user's).
  void render();
  std::string json_;
  std::string rest_;
  std::unique_ptr<Limits> limits_;
  std::string tmp_;
  pid_t owner_ = 0;
};

// The whole confinement of one spawn, made on the caller's thread before
// the clone: the ruleset and filter built once, the ids resolved, the
// cgroup limits written. Lives until the launch has returned.
class ConfinePlan {
 public:
  // terminal_fd: the child's PTY slave (-1: none). cgroup: the child's
  // cgroup (null in group mode); contain_fallback: why an "auto" spec has
  // none ("" otherwise). Adds TMPDIR to plan's environment for "tmp", and
  // the limits' signals to its reset_signals. Throws SpecError (an unknown
  // name) or LaunchError.
  ConfinePlan(const ConfineSpec& spec, LaunchPlan& plan, ChildCgroup* cgroup, int terminal_fd,
              const std::string& contain_fallback);
  const ChildConfine* child() const noexcept { return &child_; }
  // The Landlock ruleset in the host (-1: none), and the number the child
  // gets it under (the caller places it among the child's descriptors).
  int ruleset_fd() const noexcept;
  void place_ruleset(int child_fd) noexcept { child_.ruleset_fd = child_fd; }
  // For the process, once: the part it keeps.
  std::unique_ptr<Confinement> take() noexcept { return std::move(kept_); }

 private:
  std::unique_ptr<Confinement> kept_;
  Credentials credentials_;
  std::unique_ptr<Sandbox> sandbox_;
  std::vector<RlimitSetting> rlimits_;
  std::vector<RlimitSetting> group_rlimits_;
  std::vector<gid_t> groups_;
  ChildConfine child_;
};

}  // namespace sup
