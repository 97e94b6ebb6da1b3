#include "engine.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>

#include <cerrno>
#include <optional>
#include <system_error>

#include "process.hpp"

namespace sup {
namespace {

std::atomic<bool> g_alive{false};

// Larger reads mean fewer system calls per byte; 64 KiB matches the default
// pipe capacity, so one read usually empties the pipe.
constexpr size_t kReadBufferSize = 64 * 1024;

}  // namespace

struct Engine::SpawnJob {
  Process* proc;
  const LaunchPlan* plan;
  SpawnFds fds;
  bool done = false;
  std::optional<LaunchError> error;
};

Engine& Engine::instance() {
  // Destroyed by the C++ runtime at exit() or dlclose(), which stops the
  // thread and reaps every child still running.
  static Engine engine;
  return engine;
}

bool Engine::alive() noexcept { return g_alive.load(std::memory_order_acquire); }

Engine::Engine() : read_buffer_(kReadBufferSize) {
  dev_null_ = above_stdio(UniqueFd(open("/dev/null", O_RDWR | O_CLOEXEC)));
  int rc = uv_loop_init(&loop_);
  if (rc != 0) throw std::system_error(-rc, std::generic_category(), "uv_loop_init");
  loop_.data = this;
  rc = uv_async_init(&loop_, &wake_, [](uv_async_t* h) { static_cast<Engine*>(h->loop->data)->on_wake(); });
  if (rc != 0) {
    uv_loop_close(&loop_);
    throw std::system_error(-rc, std::generic_category(), "uv_async_init");
  }

  // The thread is born with every signal blocked: host signals go to host
  // threads, and a child cloned from it starts with nothing deliverable until
  // it has reset its dispositions.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  g_alive.store(true, std::memory_order_release);
}

Engine::~Engine() {
  g_alive.store(false, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  uv_async_send(&wake_);
  thread_.join();
  uv_loop_close(&loop_);
}

void Engine::run() {
  prctl(PR_SET_NAME, "sup-loop", 0, 0, 0);
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void Engine::on_wake() {
  drain_requests();
  run_spawn_jobs();
  run_disposals();
  bool stop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop = stopping_;
  }
  if (stop) shut_down();
}

void Engine::wake_for(Process& proc) noexcept {
  if (!proc.queued.exchange(true)) {
    Process* head = queued_head_.load(std::memory_order_relaxed);
    do {
      proc.next_queued = head;
    } while (!queued_head_.compare_exchange_weak(head, &proc, std::memory_order_release,
                                                 std::memory_order_relaxed));
  }
  uv_async_send(&wake_);
}

void Engine::drain_requests() {
  Process* p = queued_head_.exchange(nullptr, std::memory_order_acquire);
  while (p != nullptr) {
    Process* next = p->next_queued;
    // Cleared before reading the requests: a request latched after this
    // point queues the process again.
    p->queued.store(false);
    p->handle_requests();
    p = next;
  }
}

void Engine::spawn(Process& proc, const LaunchPlan& plan, SpawnFds fds) {
  SpawnJob job{&proc, &plan, std::move(fds), false, std::nullopt};
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) throw LaunchError{-ESHUTDOWN, "sup is being unloaded"};
  spawn_jobs_.push_back(&job);
  lock.unlock();
  uv_async_send(&wake_);
  lock.lock();
  spawn_done_.wait(lock, [&] { return job.done; });
  if (job.error) throw *job.error;
}

void Engine::run_spawn_jobs() {
  std::vector<SpawnJob*> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs.swap(spawn_jobs_);
  }
  if (jobs.empty()) return;
  for (SpawnJob* job : jobs) {
    SpawnFds& fds = job->fds;
    try {
      Launched child = launch(*job->plan, fds.stdio, child_stack_);
      fds.child_out.reset();
      fds.child_err.reset();
      fds.child_stdin.reset();
      job->proc->start(&loop_, child.pid, child.started_at, std::move(child.pidfd), std::move(fds.out_read),
                       std::move(fds.err_read), std::move(fds.stdin_write), std::move(fds.tty),
                       fds.host_pgrp);
      live_.insert(job->proc);
    } catch (const LaunchError& e) {
      job->error = e;
    } catch (const std::bad_alloc&) {
      job->error = LaunchError{-ENOMEM, "out of memory"};
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (SpawnJob* job : jobs) job->done = true;
  spawn_done_.notify_all();
}

void Engine::dispose(Process& proc) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    disposals_.push_back(&proc);
  }
  uv_async_send(&wake_);
}

void Engine::run_disposals() {
  std::vector<Process*> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(disposals_);
  }
  std::vector<Process*> later;
  for (Process* p : batch) {
    // Still on the request list: free it after drain_requests has seen it.
    if (p->queued.load()) {
      later.push_back(p);
      continue;
    }
    live_.erase(p);
    delete p;
  }
  if (!later.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    disposals_.insert(disposals_.end(), later.begin(), later.end());
    uv_async_send(&wake_);
  }
}

void Engine::shut_down() {
  drain_requests();
  std::vector<Process*> released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    released.swap(disposals_);
  }
  for (Process* p : live_) p->shutdown();
  // Handles the host never released stay allocated: a host thread may still
  // be waiting on one while the process exits.
  for (Process* p : released) delete p;
  live_.clear();
  uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
}

}  // namespace sup
