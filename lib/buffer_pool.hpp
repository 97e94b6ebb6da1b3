// Large capture buffers kept from one child for the next: a host that
// captures one child after another reuses the pages it already has instead
// of faulting in fresh ones, zeroed by the kernel, for every child.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace sup {

// Measured: 16 MiB captured at the default limit (sup_spawn, sup_poll to
// the result) ran at 0.4x the rate of the same capture into reused memory
// in a process left at glibc's defaults, which unmaps a freed 16 MiB block
// and hands out fresh pages for the next. A few buffers are kept here,
// their pages marked MADV_FREE: the kernel takes them back under memory
// pressure (a later write then faults as a fresh page would), and while it
// does not, reusing them costs no fault at all.
//
// One pool for the process, under its own lock, taken only with try_lock:
// a caller never waits for it (a busy pool is a miss, the buffer freed or
// malloc'd as without it), and a child forked while another thread held it
// does not hang on it.
class BufferPool {
 public:
  // Buffers smaller than this are malloc's business.
  static constexpr size_t kPooledFrom = 1u << 20;
  // Nor is one larger than this kept (a capture keeping every byte grows
  // past it): a host that once captured 1 GiB should not hold 1 GiB.
  static constexpr size_t kPooledUpTo = 32u << 20;
  static constexpr int kSlots = 2;

  // nullptr only if it could not be made (out of memory at the first use).
  static BufferPool* shared() noexcept;

  // A buffer of exactly `size` bytes (malloc'd, to be given back or freed
  // with free()), or nullptr when none is kept.
  char* take(size_t size) noexcept;
  // Gives a malloc'd buffer of `size` bytes back: kept (its pages released
  // lazily) or freed. p may be nullptr.
  void give(char* p, size_t size) noexcept;

 private:
  BufferPool() = default;
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
