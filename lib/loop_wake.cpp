// How API threads reach the loop: its wake-up, the caller timer, and the queue of requests.
#include "loop_wake.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "event_fd.hpp"
#include "launch.hpp"
#include "loop_watch.hpp"
#include "process.hpp"

namespace sup {
namespace {

constexpr Nanos kNoCallerTimer = std::numeric_limits<Nanos>::max();

UniqueFd made_or_throw(int fd, const char* what) {
  if (fd < 0) {
    int err = errno;
    throw LaunchError{-err, std::string(what) + ": " + std::strerror(err)};
  }
  return UniqueFd(fd);
}

}  // namespace

LoopWake::LoopWake()
    : wake_fd_(made_or_throw(make_event_fd(), "eventfd")),
      caller_timer_fd_(made_or_throw(
          fd_above_stdio(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)), "timerfd_create")),
      caller_timer_at_(kNoCallerTimer) {}

int LoopWake::watch(uv_loop_t* loop, uv_poll_cb on_wake, uv_poll_cb on_timer) noexcept {
  // The wake-up is a plain eventfd rather than uv_async_t, whose sender
  // spins while the woken loop runs its callback on the same CPU.
  int code = watch_fd(loop, wake_watch_, wake_fd_.get(), UV_READABLE, this, on_wake);
  if (code == 0) code = watch_fd(loop, caller_timer_watch_, caller_timer_fd_.get(), UV_READABLE, this, on_timer);
  return code;
}

void LoopWake::wake() noexcept {
  uint64_t one = 1;
  (void)!write(wake_fd_.get(), &one, sizeof one);
}

void LoopWake::enqueue(Process& proc) noexcept {
  EngineLinks& links = proc.engine_links;
  if (links.queued.exchange(true)) return;
  Process* head = queued_head_.load(std::memory_order_relaxed);
  do {
    links.next_queued = head;
  } while (!queued_head_.compare_exchange_weak(head, &proc, std::memory_order_release, std::memory_order_relaxed));
}

void LoopWake::wake_for(Process& proc, Nanos by) noexcept {
  // Queued first: a loop that resets the caller timer (timer_fired) after
  // a caller looked at it drains the queue after that.
  enqueue(proc);
  if (by == 0)
    wake();
  else
    wake_by(by);
}

void LoopWake::wake_by(Nanos when) noexcept {
  // Whatever the caller queued is seen by a loop that reset the timer after
  // this looked at it (stand_down_caller_timer, timer_fired).
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

void LoopWake::woken() noexcept {
  uint64_t count;
  (void)!read(wake_fd_.get(), &count, sizeof count);
  stand_down_caller_timer();
}

void LoopWake::timer_fired() noexcept {
  uint64_t expirations;
  (void)!read(caller_timer_fd_.get(), &expirations, sizeof expirations);
  // Reset before draining: a caller that saw the old time and armed
  // nothing queued its work before, so the drain that follows has it; one
  // that sees the reset arms the timer anew.
  caller_timer_at_.store(kNoCallerTimer, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void LoopWake::stand_down_caller_timer() noexcept {
  if (caller_timer_at_.load(std::memory_order_seq_cst) == kNoCallerTimer) return;
  // Disarmed before the reset: a caller arming in between finds the reset
  // and arms again (a spurious wake-up at worst); one that armed before
  // queued its work before, and the drain that follows has it.
  itimerspec off{};
  timerfd_settime(caller_timer_fd_.get(), TFD_TIMER_ABSTIME, &off, nullptr);
  caller_timer_at_.store(kNoCallerTimer, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void LoopWake::drain_requests() {
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

void LoopWake::close() noexcept {
  wake_watch_.close();
  caller_timer_watch_.close();
}

void LoopWake::forget() noexcept {
  wake_watch_.forget();
  caller_timer_watch_.forget();
  wake_fd_.reset();
  caller_timer_fd_.reset();
}

}  // namespace sup
