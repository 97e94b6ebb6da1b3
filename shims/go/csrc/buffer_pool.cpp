// The capture buffers kept for reuse (buffer_pool.hpp).
#include "buffer_pool.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
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
  // The whole pages inside the block: the kernel may take them back
  // whenever it needs memory; until then they stay, and a write reuses
  // them without a fault.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + size) & ~(page - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_FREE);
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
