// The library's event-loop thread: one libuv loop that clones every child,
// watches every pidfd, pipe and deadline, and runs whether or not the host
// calls in. API threads reach it through one uv_async_t.
#pragma once

#include <uv.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "launch.hpp"

namespace sup {

class Process;

class Engine {
 public:
  // Starts the engine on first use. Throws std::system_error or bad_alloc.
  static Engine& instance();

  // Runs the clone on the loop thread and starts supervising. Blocks the
  // caller until the child has exec'd or failed. Throws LaunchError.
  void spawn(Process& proc, const LaunchPlan& plan, SpawnFds fds);

  // Queues proc for Process::handle_requests on the loop. Lock-free and
  // async-signal-safe.
  void wake_for(Process& proc) noexcept;

  // Hands a released process to the loop, which frees it.
  void dispose(Process& proc);

  // The loop thread's scratch buffer for pipe reads.
  char* read_buffer() noexcept { return read_buffer_.data(); }
  size_t read_buffer_size() const noexcept { return read_buffer_.size(); }

  // An fd open on /dev/null, for children whose stdin is "null".
  int dev_null() const noexcept { return dev_null_.get(); }

  // False once the library is being unloaded.
  static bool alive() noexcept;

  ~Engine();

 private:
  struct SpawnJob;

  Engine();
  void run();
  void on_wake();
  void drain_requests();
  void run_spawn_jobs();
  void run_disposals();
  void shut_down();

  uv_loop_t loop_{};
  uv_async_t wake_{};
  std::thread thread_;
  ChildStack child_stack_;
  std::vector<char> read_buffer_;
  UniqueFd dev_null_;

  std::atomic<Process*> queued_head_{nullptr};

  std::mutex mu_;
  std::condition_variable spawn_done_;
  std::vector<SpawnJob*> spawn_jobs_;
  std::vector<Process*> disposals_;
  bool stopping_ = false;

  // Loop thread only: every process not yet freed, for shutdown.
  std::unordered_set<Process*> live_;
};

}  // namespace sup
