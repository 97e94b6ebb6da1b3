// An eventfd as sup makes them (non-blocking, above stdio), and one used as a level: readable while set.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "sup.h"
#include "unique_fd.hpp"

namespace sup {

// The descriptor, or -1 with errno (EMFILE, ENFILE, ENOMEM).
inline int make_event_fd() noexcept { return fd_above_stdio(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)); }

// What the API returns when a descriptor the handle makes on demand (an
// eventfd, an epoll set) cannot be made: SUP_EMFILE when the host is out of
// descriptors (its own table or the system's), else SUP_ENOMEM (kernel
// memory). Only the codes the header lists for these calls.
inline int made_fd_error(int err) noexcept { return err == EMFILE || err == ENFILE ? SUP_EMFILE : SUP_ENOMEM; }

// A level: readable (a count of 1 written), or not (the count read).
inline void set_readable(int fd) noexcept {
  uint64_t one = 1;
  (void)!write(fd, &one, sizeof one);
}

inline void clear_readable(int fd) noexcept {
  uint64_t count;
  (void)!read(fd, &count, sizeof count);
}

}  // namespace sup
