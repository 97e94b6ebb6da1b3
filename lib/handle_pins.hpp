// A handle as the C API holds it: whether a pointer is one, whether it crossed a fork(), and the calls inside it that sup_release waits out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace sup {

// Every API call but sup_release holds a pin for its length (api_call.hpp);
// release marks the handle released, so that no new pin is taken, and
// waits for the pins held to go before the memory goes. Lock-free and
// async-signal-safe; the magic is immutable until the destructor.
class HandlePins {
 public:
  static constexpr uint32_t kMagic = 0x53555052;  // "SUPR"

  // fork_generation: the engine's at the spawn (Engine::fork_generation).
  explicit HandlePins(unsigned fork_generation) noexcept : fork_generation_(fork_generation) {}
  ~HandlePins() { magic_ = 0; }
  HandlePins(const HandlePins&) = delete;
  HandlePins& operator=(const HandlePins&) = delete;

  // A live handle, not a stale or foreign pointer.
  bool valid() const noexcept { return magic_ == kMagic; }
  // Inherited through fork(): the engine behind it has no thread in this
  // process (`now`: the engine's generation in this one).
  bool forked_away(unsigned now) const noexcept { return fork_generation_ != now; }
  // False (and nothing held) once release has begun.
  bool pin() noexcept {
    pins_.fetch_add(1);
    if (!released_.load()) return true;
    pins_.fetch_sub(1);
    return false;
  }
  void unpin() noexcept { pins_.fetch_sub(1); }
  bool released() const noexcept { return released_.load(); }
  // sup_release's first step: no pin is taken from now on.
  void release() noexcept { released_.store(true); }
  // Its last: the calls still inside have left (they leave within
  // microseconds: woken, or about to notice released()).
  void wait_unpinned() const noexcept {
    while (pins_.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  // What a read touches first (Process::prefetch_for_read).
  const void* pins_at() const noexcept { return &pins_; }

 private:
  uint32_t magic_ = kMagic;
  const unsigned fork_generation_;
  std::atomic<int> pins_{0};
  std::atomic<bool> released_{false};
};

}  // namespace sup
