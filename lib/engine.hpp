// The library's engine: one libuv loop on its own thread that watches every
// pidfd, pipe and deadline and runs whether or not the host calls in, and
// the parts it is made of, each in its own file: the spawner (spawner.hpp),
// the wake-ups and requests from API threads (loop_wake.hpp), the deadline
// timer (deadline_timer.hpp), the pipes lent to live readers
// (reader_leases.hpp), the processes from clone to free
// (lifetimes.hpp), the sentinel's watch (sentinel_link.hpp), and what a
// fork() does to all of it (engine_fork.cpp).
#pragma once

#include <uv.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "buffer_pool.hpp"
#include "clock.hpp"
#include "deadline_timer.hpp"
#include "engine_links.hpp"
#include "launch.hpp"
#include "lifetimes.hpp"
#include "loop_wake.hpp"
#include "proc_tree.hpp"
#include "reader_leases.hpp"
#include "sentinel.hpp"
#include "sentinel_link.hpp"
#include "spawner.hpp"
#include "unique_fd.hpp"

namespace sup {

class Process;

// One per process (engine_fork.cpp). Each part locks its own state; the
// engine's own fields are set by the constructor and then read-only, but
// for the loop (the loop thread's) and stopping_ (atomic).
class Engine {
 public:
  // Starts the engine on first use, and again in a forked child, where the
  // parent's threads do not exist (engine_fork.cpp). Throws
  // std::system_error, bad_alloc or LaunchError.
  static Engine& instance();

  // Incremented in every forked child: a handle made under another value
  // belongs to an engine whose threads are not in this process.
  static unsigned fork_generation() noexcept;

  // The timer wakes the loop this much before a deadline, and the process
  // waits the rest awake (DeadlineTimer::kLead says why).
  static constexpr Nanos kTimerLead = DeadlineTimer::kLead;

  // The one way in for a new child, and the start of the engine's ownership
  // of its process: the engine, not the process, decides when a process is
  // freed (dispose), because only the loop thread may close its libuv
  // handles and only the engine knows when none of its lists (starts,
  // requests, deadlines) still holds it.
  // Clones the child, hands it to its process (Process::adopt_child), and
  // queues the process for the loop's start (Spawner). Where the sentinel
  // runs (it ends every tree if the host dies), the clone runs on the
  // caller's thread, as posix_spawn's does; elsewhere on the spawner
  // thread, which PR_SET_PDEATHSIG ties the child to. Blocks the caller
  // until the child has exec'd or failed, not until the loop has it
  // (Process::start). Returns the process, running; throws LaunchError,
  // having freed it.
  Process* spawn(std::unique_ptr<Process> proc, LaunchPlan& plan, SpawnFds fds);
  // A spawn is coming (Spawner::prewake). Any thread.
  void prewake_spawner() noexcept { spawner_.prewake(); }

  // Queues proc for Process::handle_requests on the loop, the one entry for
  // what callers ask of a running child: at once, or, with `by` (monotonic
  // ns, not 0), by then at the latest, or sooner whenever the loop wakes
  // anyway. Lock-free and async-signal-safe.
  void wake_for(Process& proc, Nanos by = 0) noexcept { wake_.wake_for(proc, by); }

  // How late the loop may do what nobody waits for (freeing a released
  // process, closing what a finished one holds): whenever it wakes anyway,
  // at the latest this long after it was asked.
  static constexpr Nanos kLazyWithin = 5'000'000;

  // Wakes the loop now (Process::need_loop). Any thread.
  void wake_loop() noexcept { wake_.wake(); }

  // The end of a process the caller has released (Process::release): the
  // loop frees it within kLazyWithin. Once the engine is gone (exit,
  // unload), the calling thread frees it now; in a forked child, where the
  // process belongs to the parent's engine, only its memory (Process::abandon).
  // Allocates nothing.
  static void dispose(Process& proc) noexcept;

  // Loop thread only: the process's deadline (DeadlineTimer).
  void set_deadline(Process& proc, Nanos when) { deadlines_.set(proc, when); }
  void clear_deadline(Process& proc) { deadlines_.clear(proc); }

  // Loop thread only: proc's reader reads a pipe itself, lent until the
  // reader leaves bytes unread (ReaderLeases); hold throws LaunchError.
  void hold_lease(Process& proc) { leases_.hold(proc, &loop_); }
  void drop_lease(Process& proc) noexcept { leases_.drop(proc); }
  // The loop thread's scratch buffer for pipe reads.
  char* read_buffer() noexcept { return read_buffer_.data(); }
  size_t read_buffer_size() const noexcept { return read_buffer_.size(); }

  // An fd open on /dev/null, for children whose stdin is "null".
  int dev_null() const noexcept { return dev_null_.get(); }

  // Ends every tree if the host dies (sentinel.hpp). Any thread.
  Sentinel& sentinel() noexcept { return sentinel_; }

  // The scan of every process's group that input-wait looks share
  // (proc_tree.hpp). Any thread.
  GroupIndex& group_index() noexcept { return group_index_; }

  // False once the library is being unloaded.
  static bool alive() noexcept;

  ~Engine();

 private:
  friend class EngineHolder;

  Engine();
  void run_loop();
  // The loop's wake-ups (LoopWake) end here: what API threads left for
  // the loop (starts, requests, disposals, and the engine's end).
  static void on_wake(uv_poll_t* handle, int status, int events);
  static void on_caller_timer(uv_poll_t* handle, int status, int events);
  void run_pending();
  void shut_down();
  // engine_fork.cpp: the flag alive() reads; the fork handler that must
  // run after libuv's, registered once libuv has registered its own; and,
  // in a forked child, closing what the engine holds, freeing nothing
  // libuv owns.
  static void set_alive(bool alive) noexcept;
  static void release_stdio_after_libuv_fork() noexcept;
  void forget_after_fork() noexcept;

  const unsigned generation_;
  uv_loop_t loop_{};
  std::thread loop_thread_;
  std::vector<char> read_buffer_;
  UniqueFd dev_null_;
  Sentinel sentinel_;
  LoopWake wake_;
  DeadlineTimer deadlines_;
  ReaderLeases leases_;
  Lifetimes lifetimes_;
  Spawner spawner_{sentinel_, lifetimes_, wake_, dev_null_};
  SentinelLink sentinel_link_{sentinel_, spawner_, dev_null_};
  GroupIndex group_index_;
  // Capture buffers kept from one process for the next (buffer_pool.hpp).
  BufferPool buffer_pool_;
  // Set by the engine's end (or a start that failed half way), for the
  // loop thread to shut down when next woken.
  std::atomic<bool> stopping_{false};
};

}  // namespace sup
