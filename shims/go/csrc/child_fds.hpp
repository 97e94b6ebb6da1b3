// The child's descriptors: 0, 1, 2 and the spec's "fds", each a copy of the
// host descriptor named, placed between clone and exec whatever order the
// copies need, and every other descriptor closed. Planned (and allocated)
// before the clone; the child itself only makes system calls.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace sup {

struct Spec;

// Every host descriptor the spec names ({"fd": N}, "fds") must be open.
// Throws LaunchError (SUP_EBADF, SUP_PART_SPEC) naming the key and the number
// of the first one that is not.
void check_host_fds(const Spec& spec);

// The child's descriptor `target` becomes a copy of the host's `source`.
struct FdMove {
  int target;
  int source;
};

// What the child reads (moves) and the one array it writes (parked), as
// raw pointers into a ChildFdPlan, taken before the clone so that the
// child calls no library code to reach them.
struct ChildFds {
  const FdMove* moves = nullptr;  // sorted by target; targets unique
  int* parked = nullptr;          // per move: the descriptor the copy is made from
  size_t count = 0;
  int park_from = 0;  // above every target
};

// Invariants: the targets are unique and 0, 1, 2 are always among them (a
// default plan, with none, is refused by launch()). Owned by one
// LaunchPlan, used by one launch at a time.
class ChildFdPlan {
 public:
  ChildFdPlan() = default;
  // stdio: the host descriptors the child gets as 0, 1, 2; extra: "fds"
  // (child -> host, children >= 3 and unique, as parse_spec checks).
  ChildFdPlan(const int stdio[3], const std::vector<std::pair<int, int>>& extra);

  bool planned() const noexcept { return !moves_.empty(); }
  ChildFds view() const noexcept;

 private:
  std::vector<FdMove> moves_;
  // Written by the child only, while the thread that cloned it waits (the
  // clone is vfork-style), so that the child needs no memory of its own.
  mutable std::vector<int> parked_;
};

// In the child, after anything that still uses the host's descriptors
// (the cgroup's procs file, the sentinel's socket) and before the rest of
// its setup: places every move and closes every other descriptor. Raw
// system calls only, no allocation, async-signal-safe. The clone does not
// share the descriptor table (no CLONE_FILES): the host's table, and the
// flags of its entries, are never touched; only what the descriptions
// themselves hold (offset, O_NONBLOCK) is shared, as with any inherited
// descriptor. Returns false with errno set on the first step that failed.
bool place_child_fds(const ChildFds& fds) noexcept;

}  // namespace sup
