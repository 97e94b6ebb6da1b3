// A process's places in the engine's lists, carried by the process for the engine.
#pragma once

#include <atomic>
#include <set>
#include <utility>

#include "clock.hpp"

namespace sup {

class Process;

// The deadlines of every process, earliest first. Each process owns one node
// (made when the handle is, on the caller's thread), which moves in and out
// of the set: the loop thread never allocates for a deadline.
using DeadlineSet = std::set<std::pair<Nanos, Process*>>;

// The engine's parts alone read and write these (each field says under
// what); the process only carries them, so that queueing it allocates
// nothing.
struct EngineLinks {
  // Seeds deadline_node. Throws std::bad_alloc.
  explicit EngineLinks(Process* self) {
    DeadlineSet seed;
    seed.emplace(0, self);
    deadline_node = seed.extract(seed.begin());
  }
  // Under Lifetimes' lock: cloned, for the loop to start (newest first);
  // and released, for the loop to free.
  Process* next_start = nullptr;
  Process* next_disposal = nullptr;
  // Loop thread: the loop has taken it to start (none is freed before).
  bool started_by_loop = false;
  // The lock-free list of processes with new requests (LoopWake).
  std::atomic<bool> queued{false};
  Process* next_queued = nullptr;
  // Loop thread (DeadlineTimer): when the process's deadline is due (0:
  // none), its node of the deadline set while it has none, and the list of
  // deadlines due now.
  Nanos deadline_at = 0;
  DeadlineSet::node_type deadline_node;
  Process* next_due = nullptr;
  // Loop thread (ReaderLeases): a reader reads a pipe of it itself, and the
  // sweep looks at it; its neighbours in that list.
  bool leased = false;
  Process* prev_lease = nullptr;
  Process* next_lease = nullptr;
};

}  // namespace sup
