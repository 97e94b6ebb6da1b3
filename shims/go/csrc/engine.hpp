// The library's two threads. The loop thread runs one libuv loop that
// watches every pidfd, pipe and deadline and runs whether or not the host
// calls in; the spawner thread starts the sentinel, and clones children
// only until it runs (elsewhere callers clone their own), so that a child
// whose exec or chdir is slow (a FUSE cwd, an automount) stalls no other
// child's supervision. API threads reach the loop through one eventfd, or, for a
// request that can wait (an interrupt the caller sent itself), through a
// timerfd they arm for when it must be handled.
#pragma once

#include <uv.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "clock.hpp"
#include "launch.hpp"
#include "proc_look.hpp"
#include "sentinel.hpp"
#include "uv_handle.hpp"

namespace sup {

class Process;

// The deadlines of every process, earliest first. Each process owns one node
// (made when the handle is, on the caller's thread), which moves in and out
// of the set: the loop thread never allocates for a deadline.
using DeadlineSet = std::set<std::pair<Nanos, Process*>>;

// A process's places in the engine's lists, which the engine alone reads and
// writes (each field says under what); the process only carries them, so that
// queueing it allocates nothing.
struct EngineLinks {
  // Seeds deadline_node. Throws std::bad_alloc.
  explicit EngineLinks(Process* self);
  // Under Engine::mu_: cloned, for the loop to start (newest first); and
  // released, for the loop to free.
  Process* next_start = nullptr;
  Process* next_disposal = nullptr;
  // Loop thread: run_starts has taken it (run_disposals frees none before).
  bool started_by_loop = false;
  // The lock-free list of processes with new requests.
  std::atomic<bool> queued{false};
  Process* next_queued = nullptr;
  // Loop thread: when the process's deadline is due (0: none), its node of
  // the deadline set while it has none, and the list of deadlines due now.
  Nanos deadline_at = 0;
  DeadlineSet::node_type deadline_node;
  Process* next_due = nullptr;
};

class Engine {
 public:
  // Starts the engine on first use, and again in a forked child, where the
  // parent's threads do not exist. Throws std::system_error, bad_alloc or
  // LaunchError.
  static Engine& instance();

  // Incremented in every forked child: a handle made under another value
  // belongs to an engine whose threads are not in this process.
  static unsigned fork_generation() noexcept;

  // A thread woken from a long sleep pays the CPU's deepest idle exit: about
  // 130 us at p50 on a 2-core VM, against about 20 us after a sleep of 100
  // us. So the timer wakes the loop this much before a deadline, and the
  // process waits the rest awake (Process::on_deadline). A 100 ms max
  // runtime, by sup's own clock, signal sent past the deadline (100 runs):
  // p50 43 -> 1 us, p90 62 -> 1 us, against a lead of 100 us asleep.
  static constexpr Nanos kTimerLead = 250'000;

  // The one way in for a new child, and the start of the engine's ownership
  // of its process: the engine, not the process, decides when a process is
  // freed (dispose), because only the loop thread may close its libuv
  // handles and only the engine knows when none of its lists (starts,
  // requests, deadlines) still holds it.
  // Clones the child, hands it to its process (Process::adopt_child), and
  // queues the process for the loop's start. Where the sentinel runs (it
  // ends every tree if the host dies), the clone runs on the caller's
  // thread, as posix_spawn's does; elsewhere on the spawner thread, which
  // PR_SET_PDEATHSIG ties the child to. Blocks the caller until the child
  // has exec'd or failed, not until the loop has it (Process::start).
  // Returns the process, running; throws LaunchError, having freed it.
  Process* spawn(std::unique_ptr<Process> proc, LaunchPlan& plan, SpawnFds fds);
  // Tells the spawner a job is coming: an idle one wakes now and waits for
  // the job awake (up to 50 us) instead of being woken by spawn(). Any
  // thread. Does nothing where the spawner can only run on the caller's
  // CPU: there it could only take the CPU from the caller.
  void prewake_spawner() noexcept;

  // Queues proc for Process::handle_requests on the loop, the one entry for
  // what callers ask of a running child: at once, or, with `by` (monotonic
  // ns, not 0), by then at the latest, or sooner whenever the loop wakes
  // anyway. Lock-free and async-signal-safe.
  void wake_for(Process& proc, Nanos by = 0) noexcept;

  // How late the loop may do what nobody waits for (freeing a released
  // process, closing what a finished one holds): whenever it wakes anyway,
  // at the latest this long after it was asked.
  static constexpr Nanos kLazyWithin = 5'000'000;

  // Wakes the loop now (Process::need_loop). Any thread.
  void wake_loop() noexcept { wake(); }

  // The end of a process the caller has released (Process::release): the
  // loop frees it within kLazyWithin. Once the engine is gone (exit,
  // unload), the calling thread frees it now; in a forked child, where the
  // process belongs to the parent's engine, only its memory (Process::abandon).
  // Allocates nothing.
  static void dispose(Process& proc) noexcept;

  // Loop thread only: one timerfd carries the earliest deadline of every
  // process, in monotonic nanoseconds (libuv's timers count milliseconds).
  void set_deadline(Process& proc, Nanos when);
  void clear_deadline(Process& proc);

  // The loop thread's scratch buffer for pipe reads.
  char* read_buffer() noexcept { return read_buffer_.data(); }
  size_t read_buffer_size() const noexcept { return read_buffer_.size(); }

  // An fd open on /dev/null, for children whose stdin is "null".
  int dev_null() const noexcept { return dev_null_.get(); }

  // Ends every tree if the host dies (sentinel.hpp). Any thread.
  Sentinel& sentinel() noexcept { return sentinel_; }

  // The scan of every process's group that input-wait looks share
  // (proc_look.hpp). Any thread.
  GroupIndex& group_index() noexcept { return group_index_; }

  // False once the library is being unloaded.
  static bool alive() noexcept;

  ~Engine();

 private:
  struct SpawnJob;
  friend class EngineHolder;

  Engine();
  void run_loop();
  void run_spawner();
  // spawn() on the caller's thread.
  void spawn_here(Process& proc, LaunchPlan& plan, SpawnFds fds);
  // Queues the cloned child's process for the loop's start, under mu_.
  void queue_start(Process& proc) noexcept;
  // Once queued: wakes the loop when proc needs it (by, from
  // Process::adopt_child; 0: now).
  void wake_for_start(Nanos by) noexcept;
  // dispose() while the engine runs: for the loop to free.
  void queue_disposal(Process& proc) noexcept;
  // Stacks for clones on callers' threads, one per clone in progress.
  std::unique_ptr<ChildStack> take_stack();
  void give_back_stack(std::unique_ptr<ChildStack> stack) noexcept;
  // Spawner thread: records whether it is pinned to one CPU.
  void note_affinity() noexcept;
  void wake() noexcept;
  // The loop wakes by `when` at the latest (the caller timer). Lock-free
  // and async-signal-safe.
  void wake_by(Nanos when) noexcept;
  // Loop thread, woken anyway: disarms the caller timer before a drain.
  void stand_down_caller_timer() noexcept;
  void enqueue(Process& proc) noexcept;
  void on_wake();
  // What API threads left for the loop: starts, requests, disposals, and
  // the engine's end.
  void run_pending();
  void on_timer();
  void on_caller_timer();
  void program_timer();
  void drain_requests();
  void run_starts();
  void run_disposals();
  void shut_down();
  // Loop thread: watches the engine's end of the sentinel's socket for the
  // hang-up of a sentinel that died; on it, starts another (Sentinel::restart).
  void watch_sentinel();
  void on_sentinel_gone();
  // In a forked child: closes what the engine holds, frees nothing libuv owns.
  void forget_after_fork() noexcept;

  const unsigned generation_;
  uv_loop_t loop_{};
  UniqueFd wake_fd_;
  UvHandle<uv_poll_t> wake_watch_;
  UniqueFd timer_fd_;
  UvHandle<uv_poll_t> timer_watch_;
  // Armed by callers (wake_by), never by the loop, which disarms it when
  // woken anyway (stand_down_caller_timer): the earliest time a
  // caller needs the loop awake by, in caller_timer_at_ (kNoCallerTimer
  // when none is armed).
  UniqueFd caller_timer_fd_;
  UvHandle<uv_poll_t> caller_timer_watch_;
  std::atomic<Nanos> caller_timer_at_;
  UvHandle<uv_poll_t> sentinel_watch_;
  bool sentinel_watched_ = false;  // loop thread: watched, or given up on
  std::thread loop_thread_;
  std::thread spawner_thread_;
  std::vector<char> read_buffer_;
  UniqueFd dev_null_;
  Sentinel sentinel_;

  std::atomic<Process*> queued_head_{nullptr};

  std::mutex mu_;
  std::condition_variable spawn_cv_;    // the spawner waits for jobs
  std::condition_variable spawn_done_;  // callers wait for their job
  std::deque<SpawnJob*> spawn_queue_;   // for the spawner
  Process* starts_ = nullptr;           // cloned, for the loop to start (newest first, EngineLinks::next_start)
  Process* disposals_ = nullptr;        // released, for the loop to free (EngineLinks::next_disposal)
  bool stopping_ = false;
  bool prewake_ = false;  // a job is coming (prewake_spawner)
  std::atomic<unsigned> posted_{0};  // jobs queued so far: what a woken spawner spins on
  // The one CPU the spawner may run on, or -1 when it may run on several;
  // the spawner looks again each time it goes idle (sched_setaffinity).
  std::atomic<int> spawner_only_cpu_{-1};
  std::mutex stacks_mu_;
  std::vector<std::unique_ptr<ChildStack>> free_stacks_;
  GroupIndex group_index_;

  // Loop thread only.
  std::unordered_set<Process*> live_;
  DeadlineSet deadlines_;
  Nanos timer_armed_for_ = 0;
};

}  // namespace sup
