// The capture buffers kept for reuse (buffer_pool.hpp).
#include "buffer_pool.hpp"

#include <cstdlib>
#include <new>

namespace sup {

BufferPool* BufferPool::shared() noexcept {
  // Never destroyed: the loop thread may release a process while the host
  // exits. What it holds stays reachable from here.
  static BufferPool* pool = new (std::nothrow) BufferPool;
  return pool;
}

char* BufferPool::take(size_t size) noexcept {
  if (size < kPooledFrom || size > kPooledUpTo) return nullptr;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return nullptr;
  for (Slot& slot : slots_) {
    if (slot.data == nullptr || slot.size != size) continue;
    char* p = slot.data;
    slot = Slot{};
    return p;
  }
  return nullptr;
}

void BufferPool::give(char* p, size_t size) noexcept {
  if (p == nullptr) return;
  if (size < kPooledFrom || size > kPooledUpTo) {
    std::free(p);
    return;
  }
  char* dropped = p;
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (lock.owns_lock()) {
      // An empty slot, else the oldest buffer's.
      Slot* slot = &slots_[0];
      for (Slot& s : slots_) {
        if (s.data == nullptr) {
          slot = &s;
          break;
        }
        if (s.given < slot->given) slot = &s;
      }
      dropped = slot->data;
      *slot = Slot{p, size, ++gives_};
    }
  }
  std::free(dropped);
}

}  // namespace sup
