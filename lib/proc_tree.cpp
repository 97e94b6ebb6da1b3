// Listing a child's tree (proc_tree.hpp): walks of /proc's children files,
// one shared scan of every process's group, and a cgroup's procs files.
#include "proc_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "clock.hpp"
#include "dirents.hpp"
#include "proc_read.hpp"
#include "unique_fd.hpp"

namespace sup {
namespace {

// Appends the pids in text ("1 2 3\n" or one a line) to out.
void parse_pids(const char* text, std::vector<pid_t>& out) {
  for (const char* at = text; *at != '\0';) {
    char* end;
    long pid = std::strtol(at, &end, 10);
    if (end == at) break;
    if (pid > 0) out.push_back(static_cast<pid_t>(pid));
    at = end;
  }
}

}  // namespace

bool descendants(int proc_dir, pid_t pid, std::vector<pid_t>& out) {
  char path[48];
  std::snprintf(path, sizeof path, "%d/task/%d/children", static_cast<int>(pid), static_cast<int>(pid));
  if (faccessat(proc_dir, path, R_OK, 0) != 0 && errno == ENOENT) return false;  // no such file here
  out.push_back(pid);
  std::string list;
  for (size_t next = 0; next < out.size() && out.size() < static_cast<size_t>(kMaxProcesses); ++next) {
    std::snprintf(path, sizeof path, "%d/task", static_cast<int>(out[next]));
    UniqueFd tasks(openat(proc_dir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!tasks.valid()) continue;  // gone meanwhile
    for_each_dirent(tasks.get(), [&](const char* tid, unsigned char) {
      if (tid[0] < '1' || tid[0] > '9') return true;
      char file[48];
      std::snprintf(file, sizeof file, "%s/children", tid);
      list.clear();
      if (read_whole(tasks.get(), file, list) >= 0) parse_pids(list.c_str(), out);
      return true;
    });
  }
  return true;
}

bool group_members(GroupIndex& index, int proc_dir, pid_t pgid, const std::vector<pid_t>& known,
                   std::vector<pid_t>& out, int64_t max_age, int64_t& scanned_at) {
  std::unique_lock<std::mutex> lock(index.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  const Nanos now = now_ns();
  if (index.scanned_at == 0 || now - index.scanned_at >= max_age) {
    index.by_group.clear();
    UniqueFd listing(openat(proc_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing.valid()) return false;
    char text[1024];
    for_each_dirent(listing.get(), [&](const char* name, unsigned char) {
      if (name[0] < '1' || name[0] > '9') return true;
      char path[40];
      std::snprintf(path, sizeof path, "%s/stat", name);
      ProcStat ps;
      if (read_file(proc_dir, path, text, sizeof text) > 0 && parse_stat(text, ps))
        index.by_group.emplace_back(ps.pgrp, static_cast<pid_t>(std::strtol(name, nullptr, 10)));
      return true;
    });
    std::sort(index.by_group.begin(), index.by_group.end());
    index.scanned_at = now;
  }
  auto at = std::lower_bound(index.by_group.begin(), index.by_group.end(), std::make_pair(pgid, pid_t{0}));
  for (; at != index.by_group.end() && at->first == pgid && out.size() < static_cast<size_t>(kMaxProcesses); ++at)
    if (std::find(known.begin(), known.end(), at->second) == known.end()) out.push_back(at->second);
  scanned_at = index.scanned_at;
  return true;
}

void cgroup_members(int cgroup_dir, std::vector<pid_t>& out) {
  std::vector<std::pair<int, int>> dirs;  // (fd, depth)
  int top = openat(cgroup_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top >= 0) dirs.emplace_back(top, 0);
  std::string procs;
  while (!dirs.empty()) {
    // Plain locals, not a structured binding: the lambda below captures
    // them, which C++17 (and clang 14) refuses for bindings.
    const int dir = dirs.back().first;
    const int depth = dirs.back().second;
    dirs.pop_back();
    UniqueFd owned(dir);
    procs.clear();
    if (read_whole(dir, "cgroup.procs", procs) > 0) parse_pids(procs.c_str(), out);
    if (depth >= 8 || out.size() >= static_cast<size_t>(kMaxProcesses)) continue;
    UniqueFd listing(openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing.valid()) continue;
    for_each_dirent(listing.get(), [&](const char* name, unsigned char type) {
      if (type != DT_DIR || name[0] == '.') return true;
      int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (sub >= 0) dirs.emplace_back(sub, depth + 1);
      return true;
    });
  }
}

}  // namespace sup
