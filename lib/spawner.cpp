// Cloning children: on the spawner thread, or on the caller's where the sentinel runs.
#include "spawner.hpp"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>

#include <cerrno>
#include <optional>
#include <system_error>

#include "lifetimes.hpp"
#include "loop_wake.hpp"
#include "process.hpp"
#include "sentinel.hpp"

namespace sup {

struct Spawner::Job {
  Process* proc;
  const LaunchPlan* plan;
  SpawnFds fds;
  bool done = false;
  std::optional<LaunchError> error;
};

Spawner::Spawner(Sentinel& sentinel, Lifetimes& lifetimes, LoopWake& wake, const UniqueFd& dev_null) noexcept
    : sentinel_(sentinel), lifetimes_(lifetimes), wake_(wake), dev_null_(dev_null) {}

void Spawner::start() { thread_ = std::thread([this] { run(); }); }

void Spawner::stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Spawner::spawn(Process& proc, LaunchPlan& plan, SpawnFds fds) {
  if (sentinel_.running()) {
    spawn_here(proc, plan, std::move(fds));
    return;
  }
  Job job{&proc, &plan, std::move(fds), false, std::nullopt};
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) throw LaunchError{-ESHUTDOWN, "sup is being unloaded"};
  queue_.push_back(&job);
  posted_.fetch_add(1, std::memory_order_release);
  // Notified unlocked: a spawner woken on this CPU would otherwise run,
  // block on mu_ and be woken a second time when this thread waits.
  lock.unlock();
  cv_.notify_one();
  lock.lock();
  done_.wait(lock, [&] { return job.done; });
  if (job.error) throw *job.error;
}

void Spawner::spawn_here(Process& proc, LaunchPlan& plan, SpawnFds fds) {
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
  lifetimes_.queue_start(proc);
  wake_for_start(start_by);
}

void Spawner::wake_for_start(Nanos by) noexcept {
  // A caller that waits in sup_poll finishes a short child itself: the
  // loop, woken later, only reaps and closes (and for a caller spawning in
  // a loop, wakes once for many children). Any other wait asks for the
  // start at once (Process::need_loop).
  if (by == 0)
    wake_.wake();
  else
    wake_.wake_by(by);
}

std::unique_ptr<ChildStack> Spawner::take_stack() {
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

void Spawner::give_back_stack(std::unique_ptr<ChildStack> stack) noexcept {
  std::lock_guard<std::mutex> lock(stacks_mu_);
  try {
    free_stacks_.push_back(std::move(stack));
  } catch (const std::bad_alloc&) {
    // Freed instead (the unique_ptr goes out of scope).
  }
}

void Spawner::prewake() noexcept {
  // A clone on the caller's thread needs no spawner.
  if (sentinel_.running()) return;
  // Pinned to this thread's CPU (a host under `taskset -c 0`), a woken
  // spawner preempts the caller, yields back, and is woken again by
  // spawn(): two context switches for nothing.
  int only = only_cpu_.load(std::memory_order_relaxed);
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
  cv_.notify_one();
}

void Spawner::run() {
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
    sentinel_.start(*stack, dev_null_.get());
    if (sentinel_.running()) wake_.wake();  // for the loop to watch it
  } catch (const std::bad_alloc&) {
    // No stack: the first spawn tries again and reports it.
    sentinel_.not_started("out of memory for its stack");
  }
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      lock.unlock();  // a system call: not under the lock callers take
      note_affinity();
      lock.lock();
    }
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || prewake_; });
    if (prewake_ && !stopping_ && queue_.empty()) {
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
    if (queue_.empty()) break;  // stopping, nothing left
    Job* job = queue_.front();
    queue_.pop_front();
    if (stopping_) {
      job->error = LaunchError{-ESHUTDOWN, "sup is being unloaded"};
      job->done = true;
      done_.notify_all();
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
    // Queued before the caller is told: the caller goes on at once, while
    // the loop starts watching the child, a wake-up between threads less
    // before sup_spawn returns. Calls that reach the process before the
    // loop has it are latched (start()).
    if (launched) lifetimes_.queue_start(*job->proc);
    lock.lock();
    job->done = true;  // the job lives on the caller's stack: not touched again
    lock.unlock();
    // The loop first. Measured, not derived: the other way round, sup_abort
    // to result ran at 1.16x raw (p50) instead of 1.09x, 6 alternating runs
    // each on a 2-core VM, through where the scheduler then puts the threads.
    if (launched) wake_for_start(start_by);
    done_.notify_all();
    lock.lock();
  }
}

void Spawner::note_affinity() noexcept {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  int only = -1;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &cpus)) only = cpu;
  only_cpu_.store(only, std::memory_order_relaxed);
}

}  // namespace sup
