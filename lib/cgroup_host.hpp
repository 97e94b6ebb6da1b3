// Where sup makes its cgroups: one directory per host in each parent,
// <parent>/sup-<host pid>-<host start time>, which the children's cgroups
// (cgroup.hpp) go in. This process's record of them is one object, made on
// first use, that outlives every child's cgroup until the engine's end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sup {

class Sentinel;

// Throws LaunchError SUP_ENOTSUP "contain: WHY": cgroup containment cannot
// be had here, for that reason.
[[noreturn]] void contain_unsupported(const std::string& why);

// The host's directory for a new child's cgroup. The parent is parent_key
// (the spec's "cgroup_parent") if set, else $SUP_CGROUP_PARENT, else the
// host's own cgroup (from /proc/self/cgroup, on the cgroup2 mount found in
// /proc/self/mountinfo). The host's directory in that parent is made on
// first use and reported to the sentinel, which removes it if the host
// dies. Throws LaunchError: SUP_ENOTSUP with the reason ("contain: ...")
// when no directory can be made there, or another code. Any thread.
std::string host_cgroup_for(const std::optional<std::string>& parent_key, Sentinel& sentinel);

// A number for the next child's cgroup in its host directory ("c<N>"),
// unique in this process. Any thread.
uint64_t next_child_cgroup() noexcept;

// At the engine's end: the host directories this process made, as
// (parent, host directory), for their removal; the record of them is freed
// (a later engine starts afresh). Nothing else may run then.
std::vector<std::pair<std::string, std::string>> take_host_cgroups() noexcept;

// In a forked child (the engine's atfork handler): the parent's record of
// its host directories is the parent's, and its lock may have been held by
// a thread that does not exist here. Dropped, not freed (its memory may be
// mid-change); the child's first cgroup spawn starts a record of its own.
// Async-signal-safe.
void forget_host_cgroups_after_fork() noexcept;

}  // namespace sup
