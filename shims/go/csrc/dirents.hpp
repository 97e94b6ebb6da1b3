// Walking a directory with raw system calls: no allocation and no lock, so
// that a signal handler may do it (sup_interrupt and sup_signal reach a
// cgroup's tree; a group's last members are looked for in /proc).
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace sup {

// The kernel's struct linux_dirent64 (glibc declares none for getdents64).
struct Dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;  // DT_DIR, DT_REG, ...
  char name[1];
};

// Calls fn(name, type) for each entry of the open directory fd, from its
// current offset, until fn returns false. Returns false when fn stopped the
// walk, true when the entries (or a failing read) ended it.
template <typename F>
bool for_each_dirent(int fd, F&& fn) noexcept {
  alignas(8) char entries[1024];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, entries, sizeof entries);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    for (long at = 0; at < n;) {
      const auto* e = reinterpret_cast<const Dirent64*>(entries + at);
      at += e->reclen;
      if (!fn(static_cast<const char*>(e->name), e->type)) return false;
    }
  }
}

}  // namespace sup
