// The capture buffers kept for reuse (buffer_pool.hpp).
#include "buffer_pool.hpp"

#include <cstdlib>
#include <new>

namespace sup {

namespace {
std::atomic<BufferPool*> g_shared{nullptr};
}  // namespace

BufferPool* BufferPool::shared() noexcept { return g_shared.load(std::memory_order_acquire); }

void BufferPool::set_shared(BufferPool* pool) noexcept { g_shared.store(pool, std::memory_order_release); }

BufferPool::~BufferPool() {
  for (Slot& slot : slots_) std::free(slot.data);
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
