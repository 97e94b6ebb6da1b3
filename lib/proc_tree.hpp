// Which processes make up a child's tree, listed from /proc and cgroupfs:
// the main process's descendants, its group's members that left that line
// (reparented when their parent ended), a cgroup's processes. What each of
// them does is proc_look.hpp's.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace sup {

// A tree larger than this is looked at in part: the cost of a look must
// stay in milliseconds. What is not looked at cannot count as waiting.
constexpr int kMaxProcesses = 256;

// The main process and its descendants, by each thread's "children" (a
// process whose parent ended is reparented out of this tree: the group scan
// finds it). Falls back to false where the kernel has no such file.
bool descendants(int proc_dir, pid_t pid, std::vector<pid_t>& out);
// Every process's group as of one scan of /proc, shared by the looks of
// every child of one engine (engine.hpp owns it, so that it goes with the
// engine: at dlclose, and after a fork, where the child's new engine starts
// with a new index rather than a mutex another thread held at the fork).
// Guarded by its mutex, only ever try_locked: a thread that finds a scan
// under way goes on without.
struct GroupIndex {
  std::mutex mu;
  int64_t scanned_at = 0;
  std::vector<std::pair<pid_t, pid_t>> by_group;  // (pgrp, pid), sorted
};
// Every process of group pgid but those in `known`, from one scan of every
// process in /proc that all children's looks share, taken again when older
// than max_age ns: with a thousand children a scan each would read a
// million stat files. Returns false, out untouched, while another thread
// scans: a look never waits for another's; else sets scanned_at to when the
// scan it used was taken.
bool group_members(GroupIndex& index, int proc_dir, pid_t pgid, const std::vector<pid_t>& known,
                   std::vector<pid_t>& out, int64_t max_age, int64_t& scanned_at);
// cgroup.procs of the cgroup and of each sub-cgroup, a few levels down.
void cgroup_members(int cgroup_dir, std::vector<pid_t>& out);

}  // namespace sup
