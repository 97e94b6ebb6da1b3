// The engine's start and end, its loop thread, and the one way a spawn enters it.
#include "engine.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "cgroup.hpp"
#include "process.hpp"
#include "stdio_hold.hpp"

namespace sup {
namespace {

// Larger reads mean fewer system calls per byte; 64 KiB matches the default
// pipe capacity, so one read usually empties the pipe.
constexpr size_t kReadBufferSize = 64 * 1024;

}  // namespace

Engine::Engine() : generation_(fork_generation()), read_buffer_(kReadBufferSize) {
  // libuv's descriptors land above the host's closed 0, 1 and 2, not in them.
  StdioHold low_slots;
  low_slots.hold();
  struct Release {
    StdioHold& hold;
    ~Release() { hold.release(); }
  } release_low_slots{low_slots};
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) {
    int err = errno;
    throw LaunchError{-err, std::string("open /dev/null: ") + std::strerror(err)};
  }
  dev_null_ = above_stdio(UniqueFd(null));

  int rc = uv_loop_init(&loop_);
  if (rc != 0) throw std::system_error(-rc, std::generic_category(), "uv_loop_init");
  release_stdio_after_libuv_fork();
  loop_.data = this;
  auto close_loop = [&] {
    wake_.close();
    deadlines_.close();
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  };
  int code = wake_.watch(&loop_, on_wake, on_caller_timer);
  const char* what = "uv_poll_start(eventfd)";
  if (code == 0) {
    code = deadlines_.watch(&loop_);
    what = "uv_poll_start(timerfd)";
  }
  if (code != 0) {
    close_loop();
    throw std::system_error(-code, std::generic_category(), what);
  }

  // Both threads are born with every signal blocked: host signals go to host
  // threads, and a child cloned from the spawner starts with nothing
  // deliverable until it has reset its dispositions.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    loop_thread_ = std::thread([this] { run_loop(); });
    try {
      spawner_.start();
    } catch (...) {
      stopping_.store(true);
      wake_.wake();
      loop_thread_.join();
      throw;
    }
  } catch (...) {
    // std::thread's own error (EAGAIN: out of threads) is the spawn's.
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (stopping_.load())
      uv_loop_close(&loop_);  // the loop thread closed its handles as it ended
    else
      close_loop();
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  BufferPool::set_shared(&buffer_pool_);
  set_alive(true);
}

Engine::~Engine() {
  set_alive(false);
  stopping_.store(true);
  spawner_.stop();
  wake_.wake();
  loop_thread_.join();
  uv_loop_close(&loop_);
  // No process is left to give a capture buffer back: the pool, kept
  // buffers included, goes with the engine (a leak at dlclose otherwise).
  BufferPool::set_shared(nullptr);
  // Every child has ended and its cgroup is gone; the host's directories
  // go too, and the sentinel is told (its destructor) that all is done.
  remove_host_cgroups();
}

Process* Engine::spawn(std::unique_ptr<Process> proc, LaunchPlan& plan, SpawnFds fds) {
  spawner_.spawn(*proc, plan, std::move(fds));
  return proc.release();
}

void Engine::dispose(Process& proc) noexcept {
  if (proc.forked_away()) {
    proc.abandon();
    delete &proc;
    return;
  }
  if (!alive()) {
    delete &proc;
    return;
  }
  Engine& engine = proc.engine();
  engine.lifetimes_.queue_disposal(proc);
  // Nobody waits for the memory: freed when the loop next wakes, within
  // kLazyWithin. A host that spawns in a loop so pays no wake-up for it.
  engine.wake_.wake_by(now_ns() + kLazyWithin);
}

void Engine::run_loop() {
  prctl(PR_SET_NAME, "sup-loop", 0, 0, 0);
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void Engine::on_wake(uv_poll_t* handle, int, int) {
  Engine* self = static_cast<Engine*>(handle->loop->data);
  // Awake anyway: what callers left for later is done now, and the timer
  // that would have woken the loop for it is not needed.
  self->wake_.woken();
  self->run_pending();
}

void Engine::on_caller_timer(uv_poll_t* handle, int, int) {
  Engine* self = static_cast<Engine*>(handle->loop->data);
  self->wake_.timer_fired();
  self->run_pending();
}

void Engine::run_pending() {
  // Starts first: a request latched before its process was started is
  // handled by start() itself.
  lifetimes_.start_queued(&loop_);
  wake_.drain_requests();
  if (lifetimes_.free_released()) wake_.wake();
  if (stopping_.load()) {
    shut_down();
    return;
  }
  sentinel_link_.watch_once_running(&loop_);
}

void Engine::shut_down() {
  wake_.drain_requests();
  lifetimes_.start_queued(&loop_);
  lifetimes_.end_all();
  deadlines_.close();
  leases_.close();
  wake_.close();
  sentinel_link_.close();
}

}  // namespace sup
