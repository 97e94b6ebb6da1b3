// The engine's processes from clone to free: to start, started, released to free.
#pragma once

#include <uv.h>

#include <mutex>
#include <unordered_set>

namespace sup {

class Process;

// The engine owns every process it spawned until it frees it (Engine::spawn
// says why the engine and not the process). The lists of processes to start
// and to free are under mu_ (any thread queues); what the loop started is
// the loop thread's alone (live_).
class Lifetimes {
 public:
  // Any thread: the process of a child just cloned, for the loop to start.
  void queue_start(Process& proc) noexcept;
  // Any thread: a released process, for the loop to free.
  void queue_disposal(Process& proc) noexcept;

  // Loop thread: starts every queued process, oldest first (its one entry,
  // Process::start).
  void start_queued(uv_loop_t* loop);
  // Loop thread: frees every released process the loop no longer holds
  // (Process::before_disposal, then delete). Returns true if some must
  // wait for a later turn: the caller wakes the loop again.
  bool free_released();
  // Loop thread, the engine's end, after start_queued: every process is
  // ended now (Process::shutdown) and the released ones are freed. Handles
  // the host never released stay allocated: a host thread may still be
  // waiting on one while the process exits.
  void end_all();

 private:
  std::mutex mu_;
  Process* starts_ = nullptr;     // newest first, EngineLinks::next_start
  Process* disposals_ = nullptr;  // EngineLinks::next_disposal
  std::unordered_set<Process*> live_;
};

}  // namespace sup
