// The engine's processes from clone to free: to start, started, released to free.
#include "lifetimes.hpp"

#include <new>

#include "process.hpp"

namespace sup {

void Lifetimes::queue_start(Process& proc) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  proc.engine_links.next_start = starts_;
  starts_ = &proc;
}

void Lifetimes::queue_disposal(Process& proc) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  proc.engine_links.next_disposal = disposals_;
  disposals_ = &proc;
}

void Lifetimes::start_queued(uv_loop_t* loop) {
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
    p->start(loop, tracked);
    p = next;
  }
}

bool Lifetimes::free_released() {
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
    // start queued after this turn's start_queued): after that start.
    if (links.queued.load() || !links.started_by_loop) {
      links.next_disposal = later;
      later = p;
      continue;
    }
    live_.erase(p);
    p->before_disposal();
    delete p;
  }
  if (later == nullptr) return false;
  std::lock_guard<std::mutex> lock(mu_);
  Process* tail = later;
  while (tail->engine_links.next_disposal != nullptr) tail = tail->engine_links.next_disposal;
  tail->engine_links.next_disposal = disposals_;
  disposals_ = later;
  return true;
}

void Lifetimes::end_all() {
  Process* released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    released = disposals_;
    disposals_ = nullptr;
  }
  for (Process* p : live_) p->shutdown();
  while (released != nullptr) {
    Process* p = released;
    released = p->engine_links.next_disposal;
    delete p;
  }
  live_.clear();
}

}  // namespace sup
