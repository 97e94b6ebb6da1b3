// Cloning children: on the spawner thread, or on the caller's where the sentinel runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "clock.hpp"
#include "launch.hpp"
#include "unique_fd.hpp"

namespace sup {

class Lifetimes;
class LoopWake;
class Process;
class Sentinel;

// The spawner thread starts the sentinel, and clones children only until
// it runs (elsewhere callers clone their own), so that a child whose exec
// or chdir is slow (a FUSE cwd, an automount) stalls no other child's
// supervision. Either way a clone ends the same: the process takes its
// child over (Process::adopt_child), and is queued for the loop's start
// (Lifetimes) and the loop woken when it needs to be (LoopWake).
// Its queue, flags and stacks are under its own locks; everything else it
// touches belongs to the parts it was given.
class Spawner {
 public:
  Spawner(Sentinel& sentinel, Lifetimes& lifetimes, LoopWake& wake, const UniqueFd& dev_null) noexcept;
  ~Spawner() { stop(); }
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;

  // Starts the thread, its signals as the caller's (the engine blocks them
  // all first). Throws std::system_error.
  void start();
  // The engine's end: queued jobs and new ones fail (ESHUTDOWN), and the
  // thread is joined. Idempotent.
  void stop() noexcept;

  // Clones proc's child and hands it to the loop (Engine::spawn). Blocks
  // until the child has exec'd or failed. Throws LaunchError.
  void spawn(Process& proc, LaunchPlan& plan, SpawnFds fds);
  // A job is coming: an idle spawner wakes now and waits for it awake (up
  // to 50 us) instead of being woken by spawn(). Any thread. Does nothing
  // where the spawner can only run on the caller's CPU: there it could
  // only take the CPU from the caller.
  void prewake() noexcept;

  // Stacks for clones off the spawner thread (callers', the sentinel's
  // restart), one per clone in progress. take_stack throws std::bad_alloc.
  std::unique_ptr<ChildStack> take_stack();
  void give_back_stack(std::unique_ptr<ChildStack> stack) noexcept;

 private:
  struct Job;

  void run();
  // spawn() on the caller's thread.
  void spawn_here(Process& proc, LaunchPlan& plan, SpawnFds fds);
  // Once the process is queued: wakes the loop when it needs it (by, from
  // Process::adopt_child; 0: now).
  void wake_for_start(Nanos by) noexcept;
  // Spawner thread: records whether it is pinned to one CPU.
  void note_affinity() noexcept;

  Sentinel& sentinel_;
  Lifetimes& lifetimes_;
  LoopWake& wake_;
  const UniqueFd& dev_null_;
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable cv_;    // the spawner waits for jobs
  std::condition_variable done_;  // callers wait for their job
  std::deque<Job*> queue_;
  bool stopping_ = false;
  bool prewake_ = false;             // a job is coming (prewake)
  std::atomic<unsigned> posted_{0};  // jobs queued so far: what a woken spawner spins on
  // The one CPU the spawner may run on, or -1 when it may run on several;
  // the spawner looks again each time it goes idle (sched_setaffinity).
  std::atomic<int> only_cpu_{-1};

  std::mutex stacks_mu_;
  std::vector<std::unique_ptr<ChildStack>> free_stacks_;
};

}  // namespace sup
