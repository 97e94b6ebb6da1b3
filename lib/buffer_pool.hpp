// Large capture buffers kept from one child for the next: a host that
// captures one child after another reuses the pages it already has instead
// of faulting in fresh ones, zeroed by the kernel, for every child.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace sup {

// Measured: 16 MiB captured at the default limit (sup_spawn, sup_poll to
// the result) on one CPU cost the host 11-15 ms of CPU in a process left
// at glibc's defaults, which often unmaps a freed 16 MiB block and hands
// out fresh pages for the next, against 4.5 ms for a raw loop reusing its
// buffers; with the buffer kept here, 4.8 ms. One buffer is kept, as an
// allocator keeps freed memory for reuse: its pages stay the process's
// (in RSS) until a capture takes it, or another buffer replaces it.
// Giving them up lazily (MADV_FREE) was measured too: the next capture's
// writes to them then cost more than the faults saved (8.3 ms).
//
// One pool for the process, the engine's (engine.hpp: made with it, and
// with it freed, kept buffers included, at exit or dlclose, once every
// process has gone), under its own lock, taken only with try_lock: a caller
// never waits for it (a busy pool is a miss, the buffer freed or malloc'd
// as without it), and a child forked while another thread held it does not
// hang on it. Without an engine there is no pool: buffers are malloc's.
class BufferPool {
 public:
  BufferPool() = default;
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Buffers smaller than this are malloc's business.
  static constexpr size_t kPooledFrom = 1u << 20;
  // Nor is one larger than this kept (a capture keeping every byte grows
  // past it): a host that once captured 1 GiB should not hold 1 GiB.
  static constexpr size_t kPooledUpTo = 32u << 20;
  static constexpr int kSlots = 1;

  // The engine's pool; nullptr while no engine exists.
  static BufferPool* shared() noexcept;
  // The engine makes `pool` the shared one, and withdraws it (nullptr) as it
  // ends, after its threads have stopped and every process has gone.
  static void set_shared(BufferPool* pool) noexcept;

  // A buffer of exactly `size` bytes (malloc'd, to be given back or freed
  // with free()), or nullptr when none is kept.
  char* take(size_t size) noexcept;
  // Gives a malloc'd buffer of `size` bytes back: kept (in place of the
  // oldest, with every slot taken) or freed. p may be nullptr.
  void give(char* p, size_t size) noexcept;

 private:
  struct Slot {
    char* data = nullptr;
    size_t size = 0;
    // When it was given back (a count): with every slot taken, the oldest
    // buffer makes room, the size asked last being the likeliest next.
    uint64_t given = 0;
  };
  std::mutex mu_;
  Slot slots_[kSlots];
  uint64_t gives_ = 0;
};

}  // namespace sup
