// The pipes live readers read themselves without backpressure, and the sweep that takes back the ones a reader left.
#include "reader_leases.hpp"

#include <string>

#include "launch.hpp"
#include "process.hpp"

namespace sup {

void ReaderLeases::hold(Process& proc, uv_loop_t* loop) {
  EngineLinks& links = proc.engine_links;
  if (links.leased) return;
  if (!timer_) {
    uv_timer_t* timer = timer_.create();
    int rc = uv_timer_init(loop, timer);
    if (rc != 0) {
      timer_.discard();
      throw LaunchError{rc, std::string("uv_timer_init: ") + uv_strerror(rc)};
    }
    timer->data = this;
  }
  if (!running_) {
    int rc = uv_timer_start(
        timer_.get(), [](uv_timer_t* t) { static_cast<ReaderLeases*>(t->data)->sweep(); }, kSweepMs, kSweepMs);
    if (rc != 0) throw LaunchError{rc, std::string("uv_timer_start: ") + uv_strerror(rc)};
    running_ = true;
  }
  links.leased = true;
  links.prev_lease = nullptr;
  links.next_lease = first_;
  if (first_ != nullptr) first_->engine_links.prev_lease = &proc;
  first_ = &proc;
}

void ReaderLeases::drop(Process& proc) noexcept {
  EngineLinks& links = proc.engine_links;
  if (!links.leased) return;
  links.leased = false;
  if (links.prev_lease != nullptr)
    links.prev_lease->engine_links.next_lease = links.next_lease;
  else
    first_ = links.next_lease;
  if (links.next_lease != nullptr) links.next_lease->engine_links.prev_lease = links.prev_lease;
  links.prev_lease = links.next_lease = nullptr;
  if (first_ == nullptr && running_) {
    uv_timer_stop(timer_.get());
    running_ = false;
  }
}

void ReaderLeases::sweep() {
  // A process looks only at itself, and may drop itself (its end tears it
  // down); none is freed meanwhile (the loop frees them, not now).
  Process* next = nullptr;
  for (Process* proc = first_; proc != nullptr; proc = next) {
    next = proc->engine_links.next_lease;
    if (!proc->check_reader_leases()) drop(*proc);
  }
}

void ReaderLeases::close() noexcept {
  first_ = nullptr;
  running_ = false;
  timer_.close();
}

void ReaderLeases::forget() noexcept {
  first_ = nullptr;
  running_ = false;
  timer_.forget();
}

}  // namespace sup
