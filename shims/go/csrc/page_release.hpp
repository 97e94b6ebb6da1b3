// Giving a buffer's pages back to the kernel while it is read once, front to
// back, so that moving it elsewhere never holds both copies whole.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace sup {

// For memory the caller owns and frees afterwards (malloc'd): released
// pages stay mapped and read as zeros. Pages shared with what lies before
// `begin` are never touched.
class PageReleaser {
 public:
  explicit PageReleaser(const char* begin) noexcept
      : page_(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE))),
        released_((reinterpret_cast<uintptr_t>(begin) + page_ - 1) & ~(page_ - 1)),
        next_(released_ + kStep) {}

  // Everything before `at` has been read: its whole pages may go. Batched in
  // steps of 1 MiB, small beside the buffers this is for (16 MiB at the
  // default limit), large enough that the system calls cost nothing beside
  // the copying.
  void read_upto(const char* at) noexcept {
    auto upto = reinterpret_cast<uintptr_t>(at);
    if (upto < next_) return;
    upto &= ~(page_ - 1);
    madvise(reinterpret_cast<void*>(released_), upto - released_, MADV_DONTNEED);
    released_ = upto;
    next_ = released_ + kStep;
  }

 private:
  static constexpr uintptr_t kStep = 1 << 20;
  uintptr_t page_;
  uintptr_t released_;  // pages below this are gone
  uintptr_t next_;      // look again once the reader gets here
};

}  // namespace sup
