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
  // Throws LaunchError when a cgroup file exists but cannot be written.
  Limits(const LimitsSpec& spec, ChildCgroup* cgroup, bool child_is_root);

  const std::vector<RlimitSetting>& rlimits() const noexcept { return rlimits_; }
  void append_json(std::string& out) const;

  // Once the main process has ended, before its cgroup is removed: the
  // limit that ended it ("memory", "cpu", "file_size", "processes"), or
  // nullptr. status: its waitid status; usage: its rusage.
  const char* limit_hit(const siginfo_t& status, const struct rusage& usage, ChildCgroup* cgroup) const noexcept;

 private:
  std::vector<RlimitSetting> rlimits_;
  std::vector<LimitApplied> applied_;
  std::optional<uint64_t> cpu_seconds_;
  bool memory_in_cgroup_ = false;
  bool pids_in_cgroup_ = false;
};

}  // namespace sup
