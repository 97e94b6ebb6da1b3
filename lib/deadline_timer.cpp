// The loop's one timer for the deadlines of every process.
#include "deadline_timer.hpp"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "launch.hpp"
#include "loop_watch.hpp"
#include "process.hpp"

namespace sup {

DeadlineTimer::DeadlineTimer() : fd_(fd_above_stdio(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK))) {
  if (!fd_.valid()) {
    int err = errno;
    throw LaunchError{-err, std::string("timerfd_create: ") + std::strerror(err)};
  }
}

int DeadlineTimer::watch(uv_loop_t* loop) noexcept {
  return watch_fd(loop, watch_, fd_.get(), UV_READABLE, this,
                       [](uv_poll_t* h, int, int) { static_cast<DeadlineTimer*>(h->data)->on_timer(); });
}

void DeadlineTimer::set(Process& proc, Nanos when) {
  EngineLinks& links = proc.engine_links;
  if (links.deadline_at == when) return;
  DeadlineSet::node_type node =
      links.deadline_at != 0 ? deadlines_.extract({links.deadline_at, &proc}) : std::move(links.deadline_node);
  node.value().first = when;
  deadlines_.insert(std::move(node));
  links.deadline_at = when;
  program();
}

void DeadlineTimer::clear(Process& proc) {
  EngineLinks& links = proc.engine_links;
  if (links.deadline_at == 0) return;
  links.deadline_node = deadlines_.extract({links.deadline_at, &proc});
  links.deadline_at = 0;
  program();
}

void DeadlineTimer::program() {
  Nanos next = deadlines_.empty() ? 0 : deadlines_.begin()->first;
  if (next == armed_for_) return;
  armed_for_ = next;
  // An absolute monotonic time in nanoseconds: never rounded. Zero disarms.
  // A deadline further off than kLead is reached in two steps: a wake-up
  // kLead early, then the deadline itself (on_timer).
  Nanos fire_at = next;
  if (next != 0 && next - now_ns() > kLead) fire_at = next - kLead;
  raise_timer(fd_.get(), fire_at);
}

void DeadlineTimer::on_timer() {
  uint64_t expirations;
  (void)!read(fd_.get(), &expirations, sizeof expirations);
  Nanos now = now_ns();
  // Every deadline within kLead is looked at: on_deadline acts on nothing
  // before its time and arms it again, then for the exact time; a stale one
  // (an idle deadline that later output has moved) is re-armed for its new
  // time at once, without a second wake-up for the old one.
  Process* due = nullptr;
  Process** last = &due;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now + kLead) {
    DeadlineSet::node_type node = deadlines_.extract(deadlines_.begin());
    Process* p = node.value().second;
    p->engine_links.deadline_node = std::move(node);
    p->engine_links.deadline_at = 0;
    *last = p;  // earliest first
    last = &p->engine_links.next_due;
  }
  *last = nullptr;
  armed_for_ = -1;  // the expiry disarmed it
  for (Process* p = due; p != nullptr;) {
    Process* next = p->engine_links.next_due;  // on_deadline may set a new deadline, not free p
    p->engine_links.next_due = nullptr;
    p->on_deadline();
    p = next;
  }
  program();
}

void DeadlineTimer::close() noexcept {
  deadlines_.clear();
  watch_.close();
}

void DeadlineTimer::forget() noexcept {
  watch_.forget();
  fd_.reset();
}

}  // namespace sup
