#include "engine.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>

#include "cgroup.hpp"
#include "process.hpp"

namespace sup {
namespace {

std::atomic<bool> g_alive{false};
std::atomic<unsigned> g_fork_generation{0};

// Larger reads mean fewer system calls per byte; 64 KiB matches the default
// pipe capacity, so one read usually empties the pipe.
constexpr size_t kReadBufferSize = 64 * 1024;

[[noreturn]] void throw_errno(const char* what) {
  int err = errno;
  throw LaunchError{-err, std::string(what) + ": " + std::strerror(err)};
}

// A host that closed 0, 1 or 2 would otherwise get the loop's epoll, libuv's
// signal pipes or the engine's eventfd there, which it may later dup2 its own
// descriptor over (sup would then close the host's as its own), and a child
// inheriting "stdin" would read from them. sup's own descriptors are moved
// above 2 as they are made (fd_above_stdio), but libuv's cannot be: while it
// makes them, the free low slots are held by /dev/null, then freed again,
// so that the host's stdio is left as the host left it.
struct StdioHold {
  bool held[3] = {false, false, false};

  void hold() noexcept {
    for (int fd = 0; fd < 3; ++fd) {
      if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
      int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null < 0) return;  // then libuv's may land low: nothing else to do
      if (null <= 2)
        held[null] = true;
      else
        close(null);  // another thread filled the slot first
    }
  }
  // Only what is still ours: a host thread may have dup2'd its own
  // descriptor into a held slot meanwhile (it would not be close-on-exec,
  // or not /dev/null).
  void release() noexcept {
    struct stat null_dev;
    const bool known = stat("/dev/null", &null_dev) == 0;
    for (int fd = 0; fd < 3; ++fd) {
      if (!held[fd]) continue;
      held[fd] = false;
      struct stat st;
      if (!known || fcntl(fd, F_GETFD) != FD_CLOEXEC || fstat(fd, &st) != 0 || st.st_rdev != null_dev.st_rdev ||
          !S_ISCHR(st.st_mode))
        continue;
      close(fd);
    }
  }
};

// In a forked child, libuv's own fork handler makes its signal lock pipe
// anew (uv__signal_global_reinit): between the engine's fork handler, which
// runs before libuv's (registered before the first loop), and this one,
// registered after it, the low slots are held. The child is one thread.
StdioHold g_fork_hold;
std::atomic<bool> g_fork_release_registered{false};

void release_fork_hold() { g_fork_hold.release(); }

constexpr Nanos kNoCallerTimer = std::numeric_limits<Nanos>::max();

void raise_timer(int fd, Nanos when) {
  itimerspec spec{};
  spec.it_value.tv_sec = when / 1000000000;
  spec.it_value.tv_nsec = when % 1000000000;
  timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, nullptr);
}

}  // namespace

EngineLinks::EngineLinks(Process* self) {
  DeadlineSet seed;
  seed.emplace(0, self);
  deadline_node = seed.extract(seed.begin());
}

struct Engine::SpawnJob {
  Process* proc;
  const LaunchPlan* plan;
  SpawnFds fds;
  bool done = false;
  std::optional<LaunchError> error;
};

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

Engine::Engine()
    : generation_(fork_generation()), caller_timer_at_(kNoCallerTimer), read_buffer_(kReadBufferSize) {
  StdioHold low_slots;
  low_slots.hold();
  struct Release {
    StdioHold& hold;
    ~Release() { hold.release(); }
  } release_low_slots{low_slots};
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) throw_errno("open /dev/null");
  dev_null_ = above_stdio(UniqueFd(null));
  int fd = fd_above_stdio(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (fd < 0) throw_errno("eventfd");
  wake_fd_.reset(fd);
  auto new_timer = [] {
    int timer = fd_above_stdio(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (timer < 0) throw_errno("timerfd_create");
    return UniqueFd(timer);
  };
  timer_fd_ = new_timer();
  caller_timer_fd_ = new_timer();

  int rc = uv_loop_init(&loop_);
  if (rc != 0) throw std::system_error(-rc, std::generic_category(), "uv_loop_init");
  // libuv has registered its fork handler by now (its first loop): this
  // one runs after it in every forked child.
  static pthread_once_t after_libuv = PTHREAD_ONCE_INIT;
  pthread_once(&after_libuv, [] {
    if (pthread_atfork(nullptr, nullptr, release_fork_hold) == 0) g_fork_release_registered.store(true);
  });
  loop_.data = this;
  auto close_loop = [&] {
    wake_watch_.close();
    timer_watch_.close();
    caller_timer_watch_.close();
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  };
  auto fail = [&](int code, const char* what) {
    close_loop();
    throw std::system_error(-code, std::generic_category(), what);
  };
  auto watch = [&](UvHandle<uv_poll_t>& handle, int fd, uv_poll_cb on_ready, const char* what) {
    int code = uv_poll_init(&loop_, handle.create(), fd);
    if (code != 0)
      handle.discard();  // never initialized: uv_close would corrupt the loop
    else
      code = uv_poll_start(handle.get(), UV_READABLE, on_ready);
    if (code != 0) fail(code, what);
  };
  // The wake-up is a plain eventfd rather than uv_async_t, whose sender
  // spins while the woken loop runs its callback on the same CPU.
  watch(wake_watch_, wake_fd_.get(),
        [](uv_poll_t* h, int, int) { static_cast<Engine*>(h->loop->data)->on_wake(); }, "uv_poll_start(eventfd)");
  watch(timer_watch_, timer_fd_.get(),
        [](uv_poll_t* h, int, int) { static_cast<Engine*>(h->loop->data)->on_timer(); }, "uv_poll_start(timerfd)");
  watch(caller_timer_watch_, caller_timer_fd_.get(),
        [](uv_poll_t* h, int, int) { static_cast<Engine*>(h->loop->data)->on_caller_timer(); },
        "uv_poll_start(caller timerfd)");

  // Both threads are born with every signal blocked: host signals go to host
  // threads, and a child cloned from the spawner starts with nothing
  // deliverable until it has reset its dispositions.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    loop_thread_ = std::thread([this] { run_loop(); });
    try {
      spawner_thread_ = std::thread([this] { run_spawner(); });
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
      }
      wake();
      loop_thread_.join();
      throw;
    }
  } catch (...) {
    // std::thread's own error (EAGAIN: out of threads) is the spawn's.
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (stopping_)
      uv_loop_close(&loop_);  // the loop thread closed its handles as it ended
    else
      close_loop();
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
  spawn_cv_.notify_all();
  spawner_thread_.join();
  wake();
  loop_thread_.join();
  uv_loop_close(&loop_);
  // Every child has ended and its cgroup is gone; the host's directories
  // go too, and the sentinel is told (its destructor) that all is done.
  remove_host_cgroups();
}

void Engine::forget_after_fork() noexcept {
  // The threads, the loop's state and every process belong to the parent.
  // What is ours to close are the descriptors; the rest is left as it is.
  for (UvHandle<uv_poll_t>* h : {&wake_watch_, &timer_watch_, &caller_timer_watch_, &sentinel_watch_}) h->forget();
  // The threads are not detached: glibc hands a thread's memory (its
  // descriptor) to the next thread made in the child, so the parent's
  // pthread_t may now name one of this process's own threads, which a
  // detach would take from its owner (and a second one fail, EINVAL, a
  // throw in this noexcept). The engine is never destroyed, so neither are
  // they.
  wake_fd_.reset();
  timer_fd_.reset();
  caller_timer_fd_.reset();
  dev_null_.reset();
  sentinel_.abandon();
  if (loop_.backend_fd >= 0) close(loop_.backend_fd);
}

void Engine::run_loop() {
  prctl(PR_SET_NAME, "sup-loop", 0, 0, 0);
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void Engine::wake() noexcept {
  uint64_t one = 1;
  (void)!write(wake_fd_.get(), &one, sizeof one);
}

void Engine::on_wake() {
  uint64_t count;
  (void)!read(wake_fd_.get(), &count, sizeof count);
  // Awake anyway: what callers left for later is done now, and the timer
  // that would have woken the loop for it is not needed.
  stand_down_caller_timer();
  run_pending();
}

void Engine::run_pending() {
  // Starts first: a request latched before its process was started is
  // handled by start() itself.
  run_starts();
  drain_requests();
  run_disposals();
  bool stop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop = stopping_;
  }
  if (stop) {
    shut_down();
    return;
  }
  if (!sentinel_watched_ && sentinel_.running()) watch_sentinel();
}

void Engine::watch_sentinel() {
  sentinel_watched_ = true;
  int code = uv_poll_init(&loop_, sentinel_watch_.create(), sentinel_.fd());
  if (code != 0) {
    sentinel_watch_.discard();
    return;  // unwatched: a sentinel that dies is not replaced
  }
  // It never writes: readable is its end closing.
  code = uv_poll_start(sentinel_watch_.get(), UV_READABLE | UV_DISCONNECT,
                       [](uv_poll_t* h, int, int) { static_cast<Engine*>(h->loop->data)->on_sentinel_gone(); });
  if (code != 0) sentinel_watch_.close();
}

void Engine::on_sentinel_gone() {
  // Unwatched before the descriptor's number gets the new socket.
  sentinel_watch_.close();
  bool restarted = false;
  try {
    std::unique_ptr<ChildStack> stack = take_stack();
    // The loop waits for the new sentinel's exec, a millisecond or so; a
    // caller's clone would wait as long for a spawner thread. A few tries:
    // whatever killed the last one may catch the next as it starts.
    constexpr int kTries = 3;
    for (int i = 0; i < kTries && !restarted; ++i) restarted = sentinel_.restart(*stack, dev_null());
    give_back_stack(std::move(stack));
  } catch (const std::bad_alloc&) {
  }
  // Without a sentinel the spawner thread clones, and PR_SET_PDEATHSIG
  // ties each main process to the host.
  if (restarted) watch_sentinel();
}

void Engine::enqueue(Process& proc) noexcept {
  EngineLinks& links = proc.engine_links;
  if (links.queued.exchange(true)) return;
  Process* head = queued_head_.load(std::memory_order_relaxed);
  do {
    links.next_queued = head;
  } while (!queued_head_.compare_exchange_weak(head, &proc, std::memory_order_release, std::memory_order_relaxed));
}

void Engine::wake_for(Process& proc, Nanos by) noexcept {
  // Queued first: a loop that resets the caller timer (on_caller_timer)
  // after a caller looked at it drains the queue after that.
  enqueue(proc);
  if (by == 0)
    wake();
  else
    wake_by(by);
}

void Engine::wake_by(Nanos when) noexcept {
  // Whatever the caller queued is seen by a loop that reset the timer after
  // this looked at it (stand_down_caller_timer, on_caller_timer).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  Nanos armed = caller_timer_at_.load(std::memory_order_seq_cst);
  do {
    if (when >= armed) return;  // an earlier wake-up is armed already
  } while (!caller_timer_at_.compare_exchange_weak(armed, when, std::memory_order_seq_cst));
  // Callers racing may arm in any order: whoever armed a later time than
  // the earliest recorded arms again, so the earliest is armed last.
  raise_timer(caller_timer_fd_.get(), when);
  for (Nanos earliest; (earliest = caller_timer_at_.load(std::memory_order_seq_cst)) < when;) {
    when = earliest;
    raise_timer(caller_timer_fd_.get(), when);
  }
}

void Engine::on_caller_timer() {
  uint64_t expirations;
  (void)!read(caller_timer_fd_.get(), &expirations, sizeof expirations);
  // Reset before draining: a caller that saw the old time and armed
  // nothing queued its work before, so the drain below has it; one that
  // sees the reset arms the timer anew.
  caller_timer_at_.store(kNoCallerTimer, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  run_pending();
}

void Engine::stand_down_caller_timer() noexcept {
  if (caller_timer_at_.load(std::memory_order_seq_cst) == kNoCallerTimer) return;
  // Disarmed before the reset: a caller arming in between finds the reset
  // and arms again (a spurious wake-up at worst); one that armed before
  // queued its work before, and the drain that follows has it.
  itimerspec off{};
  timerfd_settime(caller_timer_fd_.get(), TFD_TIMER_ABSTIME, &off, nullptr);
  caller_timer_at_.store(kNoCallerTimer, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void Engine::drain_requests() {
  Process* p = queued_head_.exchange(nullptr, std::memory_order_acquire);
  while (p != nullptr) {
    Process* next = p->engine_links.next_queued;
    // Cleared before reading the requests: a request latched after this
    // point queues the process again.
    p->engine_links.queued.store(false);
    p->handle_requests();
    p = next;
  }
}

void Engine::set_deadline(Process& proc, Nanos when) {
  EngineLinks& links = proc.engine_links;
  if (links.deadline_at == when) return;
  DeadlineSet::node_type node =
      links.deadline_at != 0 ? deadlines_.extract({links.deadline_at, &proc}) : std::move(links.deadline_node);
  node.value().first = when;
  deadlines_.insert(std::move(node));
  links.deadline_at = when;
  program_timer();
}

void Engine::clear_deadline(Process& proc) {
  EngineLinks& links = proc.engine_links;
  if (links.deadline_at == 0) return;
  links.deadline_node = deadlines_.extract({links.deadline_at, &proc});
  links.deadline_at = 0;
  program_timer();
}

void Engine::program_timer() {
  Nanos next = deadlines_.empty() ? 0 : deadlines_.begin()->first;
  if (next == timer_armed_for_) return;
  timer_armed_for_ = next;
  // An absolute monotonic time in nanoseconds: never rounded. Zero disarms.
  // A deadline further off than kTimerLead is reached in two steps: a
  // wake-up kTimerLead early, then the deadline itself (on_timer).
  Nanos fire_at = next;
  if (next != 0 && next - now_ns() > kTimerLead) fire_at = next - kTimerLead;
  raise_timer(timer_fd_.get(), fire_at);
}

void Engine::on_timer() {
  uint64_t expirations;
  (void)!read(timer_fd_.get(), &expirations, sizeof expirations);
  Nanos now = now_ns();
  // Every deadline within kTimerLead is looked at: on_deadline acts on
  // nothing before its time and arms it again, then for the exact time; a
  // stale one (an idle deadline that later output has moved) is re-armed
  // for its new time at once, without a second wake-up for the old one.
  Process* due = nullptr;
  Process** last = &due;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now + kTimerLead) {
    DeadlineSet::node_type node = deadlines_.extract(deadlines_.begin());
    Process* p = node.value().second;
    p->engine_links.deadline_node = std::move(node);
    p->engine_links.deadline_at = 0;
    *last = p;  // earliest first
    last = &p->engine_links.next_due;
  }
  *last = nullptr;
  timer_armed_for_ = -1;  // the expiry disarmed it
  for (Process* p = due; p != nullptr;) {
    Process* next = p->engine_links.next_due;  // on_deadline may set a new deadline, not free p
    p->engine_links.next_due = nullptr;
    p->on_deadline();
    p = next;
  }
  program_timer();
}

Process* Engine::spawn(std::unique_ptr<Process> owned, LaunchPlan& plan, SpawnFds fds) {
  Process& proc = *owned;
  if (sentinel_.running()) {
    spawn_here(proc, plan, std::move(fds));
    return owned.release();
  }
  SpawnJob job{&proc, &plan, std::move(fds), false, std::nullopt};
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) throw LaunchError{-ESHUTDOWN, "sup is being unloaded"};
  spawn_queue_.push_back(&job);
  posted_.fetch_add(1, std::memory_order_release);
  // Notified unlocked: a spawner woken on this CPU would otherwise run,
  // block on mu_ and be woken a second time when this thread waits.
  lock.unlock();
  spawn_cv_.notify_one();
  lock.lock();
  spawn_done_.wait(lock, [&] { return job.done; });
  if (job.error) throw *job.error;
  return owned.release();
}

void Engine::spawn_here(Process& proc, LaunchPlan& plan, SpawnFds fds) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) throw LaunchError{-ESHUTDOWN, "sup is being unloaded"};
  }
  // Nothing ties the child to this thread, which may end before it does:
  // the sentinel ends the tree if the host dies. A group-mode child sends
  // its own group to the sentinel before it execs (a cgroup's is the
  // host's directory, which the sentinel has already).
  plan.die_with_host = false;
  plan.sentinel_fd = plan.cgroup_fd >= 0 ? -1 : sentinel_.fd();
  const unsigned sentinel_seen = sentinel_.generation();
  std::unique_ptr<ChildStack> stack;
  try {
    stack = take_stack();
  } catch (const std::bad_alloc&) {
    throw LaunchError{-ENOMEM, "out of memory"};
  }
  // As posix_spawn: the caller's thread is not cancelled half way through.
  int cancel_state = 0;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  Launched child{};
  try {
    child = launch(plan, *stack);
  } catch (...) {
    give_back_stack(std::move(stack));
    pthread_setcancelstate(cancel_state, nullptr);
    throw;
  }
  give_back_stack(std::move(stack));
  pthread_setcancelstate(cancel_state, nullptr);
  if (plan.sentinel_fd >= 0) sentinel_.note_group(child.pid, sentinel_seen);
  // "auto" in group mode after all: the child did not send its group (a
  // cgroup child does not), so the sentinel is told here.
  if (!child.cgroup_refused.empty()) sentinel_.watch_group(child.pid);
  const Nanos start_by = proc.adopt_child(child, fds, HostDeath::tree);
  queue_start(proc);
  wake_for_start(start_by);
}

void Engine::queue_start(Process& proc) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  proc.engine_links.next_start = starts_;
  starts_ = &proc;
}

void Engine::wake_for_start(Nanos by) noexcept {
  // A caller that waits in sup_poll finishes a short child itself: the
  // loop, woken later, only reaps and closes (and for a caller spawning in
  // a loop, wakes once for many children). Any other wait asks for the
  // start at once (Process::need_loop).
  if (by == 0)
    wake();
  else
    wake_by(by);
}

std::unique_ptr<ChildStack> Engine::take_stack() {
  {
    std::lock_guard<std::mutex> lock(stacks_mu_);
    if (!free_stacks_.empty()) {
      std::unique_ptr<ChildStack> stack = std::move(free_stacks_.back());
      free_stacks_.pop_back();
      return stack;
    }
  }
  return std::make_unique<ChildStack>();
}

void Engine::give_back_stack(std::unique_ptr<ChildStack> stack) noexcept {
  std::lock_guard<std::mutex> lock(stacks_mu_);
  try {
    free_stacks_.push_back(std::move(stack));
  } catch (const std::bad_alloc&) {
    // Freed instead (the unique_ptr goes out of scope).
  }
}

void Engine::prewake_spawner() noexcept {
  // A clone on the caller's thread needs no spawner.
  if (sentinel_.running()) return;
  // Pinned to this thread's CPU (a host under `taskset -c 0`), a woken
  // spawner preempts the caller, yields back, and is woken again by
  // spawn(): two context switches for nothing.
  int only = spawner_only_cpu_.load(std::memory_order_relaxed);
  if (only >= 0 && only == sched_getcpu()) return;
  // Waking a thread that sleeps on the other CPU took about 25 us on a
  // 2-core VM: started now, that wake-up runs while the caller makes the
  // pipes, and the job then finds the spawner awake, spinning for it.
  // A busy spawner finds the flag when it next looks for work: at worst it
  // waits 50 us awake for a job that failed before it was queued.
  {
    std::lock_guard<std::mutex> lock(mu_);
    prewake_ = true;
  }
  spawn_cv_.notify_one();
}

void Engine::run_spawner() {
  prctl(PR_SET_NAME, "sup-spawner", 0, 0, 0);
  // Our children's exits raise SIGCHLD at their parent, this thread. Were it
  // blocked here, the kernel would queue it for the process and wake a host
  // thread on every exit; unblocked, a host that leaves SIGCHLD at its
  // default has it dropped at once. (A host handler may then run on this
  // thread, as POSIX allows for any process-directed signal.) launch()
  // blocks everything again around the clone itself.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_UNBLOCK, &chld, nullptr);
  // The child runs on this stack until it execs; one spawner, one stack.
  std::optional<ChildStack> stack;
  // The sentinel first, from this thread's clone: before any child exists,
  // so that none outlives the host unseen. Records sent meanwhile wait in
  // its socket.
  try {
    stack.emplace();
    sentinel_.start(*stack, dev_null());
    if (sentinel_.running()) wake();  // for the loop to watch it
  } catch (const std::bad_alloc&) {
    // No stack: the first spawn tries again and reports it.
    sentinel_.not_started("out of memory for its stack");
  }
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (spawn_queue_.empty()) {
      lock.unlock();  // a system call: not under the lock callers take
      note_affinity();
      lock.lock();
    }
    spawn_cv_.wait(lock, [this] { return stopping_ || !spawn_queue_.empty() || prewake_; });
    if (prewake_ && !stopping_ && spawn_queue_.empty()) {
      // Woken ahead of a job (prewake_spawner): wait for it awake, briefly.
      prewake_ = false;
      unsigned seen = posted_.load(std::memory_order_acquire);
      lock.unlock();
      constexpr Nanos kPrewakeSpin = 50'000;
      yield_until(now_ns(), kPrewakeSpin, [&] { return posted_.load(std::memory_order_acquire) != seen; });
      lock.lock();
      continue;
    }
    prewake_ = false;
    if (spawn_queue_.empty()) break;  // stopping, nothing left
    SpawnJob* job = spawn_queue_.front();
    spawn_queue_.pop_front();
    if (stopping_) {
      job->error = LaunchError{-ESHUTDOWN, "sup is being unloaded"};
      job->done = true;
      spawn_done_.notify_all();
      continue;
    }
    lock.unlock();
    // Taken before the caller has the process back (and may release it).
    Nanos start_by = 0;
    try {
      if (!stack) stack.emplace();
      Launched child = launch(*job->plan, *stack);
      // Group mode (asked for, or "auto" refused its cgroup): the sentinel
      // kills the group if the host dies (a cgroup's whole host directory
      // is killed instead).
      if (job->plan->cgroup_fd < 0 || !child.cgroup_refused.empty()) sentinel_.watch_group(child.pid);
      start_by = job->proc->adopt_child(child, job->fds, sentinel_.coverage());
    } catch (const LaunchError& e) {
      job->error = e;
    } catch (const std::bad_alloc&) {
      job->error = LaunchError{-ENOMEM, "out of memory"};
    }
    bool launched = !job->error;
    lock.lock();
    if (launched) {
      job->proc->engine_links.next_start = starts_;
      starts_ = job->proc;
    }
    // The caller goes on at once, while the loop starts watching the child:
    // a wake-up between threads less before sup_spawn returns. Calls that
    // reach the process before the loop has it are latched (start()).
    job->done = true;  // the job lives on the caller's stack: not touched again
    lock.unlock();
    // The loop first. Measured, not derived: the other way round, sup_abort
    // to result ran at 1.16x raw (p50) instead of 1.09x, 6 alternating runs
    // each on a 2-core VM, through where the scheduler then puts the threads.
    if (launched) wake_for_start(start_by);
    spawn_done_.notify_all();
    lock.lock();
  }
}

void Engine::note_affinity() noexcept {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  int only = -1;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &cpus)) only = cpu;
  spawner_only_cpu_.store(only, std::memory_order_relaxed);
}

void Engine::run_starts() {
  Process* newest_first;
  {
    std::lock_guard<std::mutex> lock(mu_);
    newest_first = starts_;
    starts_ = nullptr;
  }
  Process* oldest_first = nullptr;
  while (newest_first != nullptr) {
    Process* next = newest_first->engine_links.next_start;
    newest_first->engine_links.next_start = oldest_first;
    oldest_first = newest_first;
    newest_first = next;
  }
  for (Process* p = oldest_first; p != nullptr;) {
    Process* next = p->engine_links.next_start;  // start() may publish, and a release free p later
    p->engine_links.next_start = nullptr;
    p->engine_links.started_by_loop = true;
    bool tracked = true;
    try {
      live_.insert(p);
    } catch (const std::bad_alloc&) {
      tracked = false;
    }
    p->start(&loop_, tracked);
    p = next;
  }
}

void Engine::dispose(Process& proc) noexcept {
  if (proc.forked_away()) {
    proc.abandon();
    delete &proc;
  } else if (!alive()) {
    delete &proc;
  } else {
    proc.engine().queue_disposal(proc);
  }
}

void Engine::queue_disposal(Process& proc) noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    proc.engine_links.next_disposal = disposals_;
    disposals_ = &proc;
  }
  // Nobody waits for the memory: freed when the loop next wakes, within
  // kLazyWithin. A host that spawns in a loop so pays no wake-up for it.
  wake_by(now_ns() + kLazyWithin);
}

void Engine::run_disposals() {
  Process* batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch = disposals_;
    disposals_ = nullptr;
  }
  Process* later = nullptr;
  while (batch != nullptr) {
    Process* p = batch;
    EngineLinks& links = p->engine_links;
    batch = links.next_disposal;
    // Still on the request list: free it after drain_requests has seen it.
    // Finished by its caller and released before the loop started it (a
    // start queued after this turn's run_starts): after that start.
    if (links.queued.load() || !links.started_by_loop) {
      links.next_disposal = later;
      later = p;
      continue;
    }
    live_.erase(p);
    p->before_disposal();
    delete p;
  }
  if (later == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Process* tail = later;
    while (tail->engine_links.next_disposal != nullptr) tail = tail->engine_links.next_disposal;
    tail->engine_links.next_disposal = disposals_;
    disposals_ = later;
  }
  wake();
}

void Engine::shut_down() {
  drain_requests();
  run_starts();
  Process* released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    released = disposals_;
    disposals_ = nullptr;
  }
  for (Process* p : live_) p->shutdown();
  // Handles the host never released stay allocated: a host thread may still
  // be waiting on one while the process exits.
  while (released != nullptr) {
    Process* p = released;
    released = p->engine_links.next_disposal;
    delete p;
  }
  live_.clear();
  deadlines_.clear();
  wake_watch_.close();
  timer_watch_.close();
  caller_timer_watch_.close();
  sentinel_watch_.close();
}

}  // namespace sup
