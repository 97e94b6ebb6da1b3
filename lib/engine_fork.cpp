// The engine across fork(): one per process, left alone in a forked child, and a fresh one there on first use.
#include <pthread.h>
#include <unistd.h>

#include <atomic>

#include "cgroup.hpp"
#include "engine.hpp"
#include "stdio_hold.hpp"

namespace sup {
namespace {

std::atomic<bool> g_alive{false};
std::atomic<unsigned> g_fork_generation{0};

// In a forked child, libuv's own fork handler makes its signal lock pipe
// anew (uv__signal_global_reinit): between the engine's fork handler, which
// runs before libuv's (registered before the first loop), and this one,
// registered after it, the low slots are held. The child is one thread.
StdioHold g_fork_hold;
std::atomic<bool> g_fork_release_registered{false};

void release_fork_hold() { g_fork_hold.release(); }

}  // namespace

// Owns the engine of this process. After fork() the parent's engine has no
// thread here: it is left alone (its memory and libuv's are never touched
// again) and a fresh one starts on first use.
class EngineHolder {
 public:
  EngineHolder() { pthread_atfork(nullptr, nullptr, on_fork_child); }
  ~EngineHolder() {
    // Destroyed at exit() or dlclose(): stops the threads and reaps every
    // child still running, unless this is a forked child of the engine's.
    if (engine_ != nullptr && engine_->generation_ == Engine::fork_generation()) delete engine_;
  }
  Engine& get() {
    pthread_mutex_lock(&mu_);
    try {
      if (engine_ != nullptr && engine_->generation_ != Engine::fork_generation()) {
        engine_->forget_after_fork();
        engine_ = nullptr;
      }
      if (engine_ == nullptr) engine_ = new Engine();
    } catch (...) {
      pthread_mutex_unlock(&mu_);
      throw;
    }
    Engine& e = *engine_;
    pthread_mutex_unlock(&mu_);
    return e;
  }

 private:
  static void on_fork_child() {
    if (g_fork_release_registered.load()) g_fork_hold.hold();
    g_fork_generation.fetch_add(1);
    g_alive.store(false);
    Sentinel::close_in_forked_child();
    forget_host_cgroups_after_fork();
    // Another thread may have held the lock at the fork.
    mu_ = PTHREAD_MUTEX_INITIALIZER;
  }
  static pthread_mutex_t mu_;
  Engine* engine_ = nullptr;
};

pthread_mutex_t EngineHolder::mu_ = PTHREAD_MUTEX_INITIALIZER;

Engine& Engine::instance() {
  static EngineHolder holder;
  return holder.get();
}

unsigned Engine::fork_generation() noexcept { return g_fork_generation.load(std::memory_order_acquire); }

bool Engine::alive() noexcept { return g_alive.load(std::memory_order_acquire); }

void Engine::set_alive(bool alive) noexcept { g_alive.store(alive, std::memory_order_release); }

void Engine::release_stdio_after_libuv_fork() noexcept {
  // libuv has registered its fork handler by now (its first loop): this
  // one runs after it in every forked child.
  static pthread_once_t after_libuv = PTHREAD_ONCE_INIT;
  pthread_once(&after_libuv, [] {
    if (pthread_atfork(nullptr, nullptr, release_fork_hold) == 0) g_fork_release_registered.store(true);
  });
}

void Engine::forget_after_fork() noexcept {
  // The threads, the loop's state and every process belong to the parent.
  // What is ours to close are the descriptors; the rest is left as it is.
  // The threads are not detached: glibc hands a thread's memory (its
  // descriptor) to the next thread made in the child, so the parent's
  // pthread_t may now name one of this process's own threads, which a
  // detach would take from its owner (and a second one fail, EINVAL, a
  // throw in this noexcept). The engine is never destroyed, so neither are
  // they.
  wake_.forget();
  deadlines_.forget();
  leases_.forget();
  sentinel_link_.forget();
  dev_null_.reset();
  sentinel_.abandon();
  if (loop_.backend_fd >= 0) close(loop_.backend_fd);
}

}  // namespace sup
