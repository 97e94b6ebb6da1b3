// Placing the child's descriptors (child_fds.hpp).
#include "child_fds.hpp"

#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "launch.hpp"
#include "spec.hpp"
#include "sup.h"

namespace sup {

void check_host_fds(const Spec& spec) {
  auto require_open = [](int fd, const std::string& key) {
    if (fd < 0 || fcntl(fd, F_GETFD) >= 0) return;
    throw LaunchError{SUP_EBADF, "spec: " + key + ": host descriptor " + std::to_string(fd) + " is not open",
                      SUP_PART_SPEC};
  };
  if (spec.stdin_mode == StdinMode::fd) require_open(spec.host_fd[0], "stdin.fd");
  if (spec.stdout_route == Route::fd) require_open(spec.host_fd[1], "stdout.fd");
  if (spec.stderr_route == Route::fd) require_open(spec.host_fd[2], "stderr.fd");
  for (const auto& [child, host] : spec.extra_fds) require_open(host, "fds." + std::to_string(child));
}

ChildFdPlan::ChildFdPlan(const int stdio[3], const std::vector<std::pair<int, int>>& extra) {
  moves_.reserve(3 + extra.size());
  for (int target = 0; target < 3; ++target) moves_.push_back({target, stdio[target]});
  for (const auto& [child, host] : extra) moves_.push_back({child, host});
  std::sort(moves_.begin(), moves_.end(), [](const FdMove& a, const FdMove& b) { return a.target < b.target; });
  parked_.assign(moves_.size(), -1);
}

ChildFds ChildFdPlan::view() const noexcept {
  ChildFds v;
  v.moves = moves_.data();
  v.parked = parked_.data();
  v.count = moves_.size();
  const int last = moves_.empty() ? 2 : moves_.back().target;
  v.park_from = last < INT_MAX ? last + 1 : last;  // INT_MAX: past any limit, parking fails
  return v;
}

// The child's code (SUP_CHILD_CODE): nothing but system calls.
namespace {

SUP_CHILD_CODE bool is_target(const ChildFds& f, int fd) noexcept {
  size_t lo = 0, hi = f.count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f.moves[mid].target == fd) return true;
    if (f.moves[mid].target < fd)
      lo = mid + 1;
    else
      hi = mid;
  }
  return false;
}

// Descriptors first..last are marked close-on-exec rather than closed: the
// host, suspended until the child's exec, is released before exec closes
// them, so a host with tens of thousands of descriptors does not wait for
// every close (vfork + exec of /bin/true with 18,000 open: the parent back
// after 269 us instead of 947 us). Kernels before 5.11 do not know the flag
// (EINVAL): they close at once, as before.
SUP_CHILD_CODE bool close_at_exec(unsigned first, unsigned last) noexcept {
  if (syscall(SYS_close_range, first, last, CLOSE_RANGE_CLOEXEC) == 0) return true;
  if (errno != EINVAL) return false;
  return syscall(SYS_close_range, first, last, 0U) == 0;
}

}  // namespace

SUP_CHILD_CODE bool place_child_fds(const ChildFds& f) noexcept {
  // First every source that is also a target of the plan (and not its own)
  // is copied above all targets, so that no copy into place overwrites a
  // descriptor another move has still to copy from: with "stdout": {"fd": 3}
  // and "fds": {"3": 1} both are moved out of the way before either lands.
  for (size_t i = 0; i < f.count; ++i) {
    const int source = f.moves[i].source;
    f.parked[i] = source;
    if (source == f.moves[i].target || !is_target(f, source)) continue;
    long moved = syscall(SYS_fcntl, source, F_DUPFD_CLOEXEC, f.park_from);
    if (moved < 0) return false;
    f.parked[i] = static_cast<int>(moved);
  }
  // Into place, without close-on-exec (dup3 with no flags; a descriptor
  // already in place has the flag cleared, in the child's table only).
  for (size_t i = 0; i < f.count; ++i) {
    const int target = f.moves[i].target;
    if (f.parked[i] == target) {
      if (syscall(SYS_fcntl, target, F_SETFD, 0) != 0) return false;
    } else if (syscall(SYS_dup3, f.parked[i], target, 0) < 0) {
      return false;
    }
  }
  // Everything else: the gaps between targets, and all above the last
  // (which holds the parked copies).
  unsigned next = 0;
  for (size_t i = 0; i < f.count; ++i) {
    const unsigned target = static_cast<unsigned>(f.moves[i].target);
    if (target > next && !close_at_exec(next, target - 1)) return false;
    next = target + 1;
  }
  return close_at_exec(next, ~0U);
}

}  // namespace sup
