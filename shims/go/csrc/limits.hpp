// "limits": resource limits of one child, as rlimits set in the child before
// exec and, in cgroup mode where the controllers allow, memory.max and
// pids.max of its cgroup; and, at the end, which limit ended it.
#pragma once

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "confine_spec.hpp"

namespace sup {

class ChildCgroup;

// One rlimit for the child to set (prlimit64 on itself).
struct RlimitSetting {
  int resource;
  struct rlimit value;
  const char* step;  // for a failure's detail: "limits.open_files: setrlimit"
};

// How one limit was applied, for the result's "confined".
struct LimitApplied {
  const char* name;           // "memory_bytes", ...
  std::string value;          // as JSON: a number, or false
  const char* mechanism;      // "rlimit", "cgroup" or nullptr (none)
  const char* scope;          // "process", "user", "tree" or nullptr
  std::string reason;         // why not the cgroup, or why nothing; may be empty
};

class Limits {
 public:
  // On the caller's thread, before the clone. cgroup: the child's cgroup in
  // cgroup mode (null otherwise), whose memory.max, memory.swap.max and
  // pids.max are written here where its parent offers the controllers.
  // child_is_root: RLIMIT_NPROC does not bind the child (root is exempt).
  // contain_fallback: why an "auto" spec has no cgroup ("" otherwise), for
  // the result's reasons. Throws LaunchError when a cgroup file exists but
  // cannot be written.
  Limits(const LimitsSpec& spec, ChildCgroup* cgroup, bool child_is_root, const std::string& contain_fallback);

  // What the child sets on itself when it starts in its cgroup (or in
  // group mode from the outset).
  const std::vector<RlimitSetting>& rlimits() const noexcept { return rlimits_; }
  // What it sets when "auto" starts it in group mode after all (the kernel
  // refused the cgroup): the rlimits that stand in for the cgroup's files.
  const std::vector<RlimitSetting>& group_rlimits() const noexcept { return group_rlimits_; }
  // The child started outside its cgroup ("auto"'s fallback, why): the
  // result names the rlimits that applied, with why as their reason.
  void fall_back_to_group(const std::string& why);
  void append_json(std::string& out) const;

  // Once the main process has ended, before its cgroup is removed: the
  // limit that ended it ("memory", "cpu", "file_size", "processes"), or
  // nullptr. status: its waitid status; usage: its rusage.
  const char* limit_hit(const siginfo_t& status, const struct rusage& usage, ChildCgroup* cgroup) const noexcept;

 private:
  // Chooses each limit's mechanism: the cgroup's file where cgroup offers
  // it (written here), else the rlimit, no_cgroup saying why not.
  void plan(ChildCgroup* cgroup, const std::string& no_cgroup, std::vector<RlimitSetting>& rlimits,
            std::vector<LimitApplied>& applied);

  LimitsSpec spec_;
  bool child_is_root_;
  std::vector<RlimitSetting> rlimits_;
  std::vector<RlimitSetting> group_rlimits_;
  std::vector<LimitApplied> applied_;
  bool memory_in_cgroup_ = false;
  bool pids_in_cgroup_ = false;
};

}  // namespace sup
