// Owning wrapper for a file descriptor: every fd the library opens lives in one.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <utility>

namespace sup {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// sup's own descriptors are never 0, 1 or 2: a host that closed its stdio
// would get them there, and later restore its own with dup2 over them (and
// sup would then close the host's as its own). fd itself if above 2, else a
// close-on-exec duplicate above 2 with fd closed; -1 with errno (fd closed)
// if none can be made. Async-signal-safe. (above_stdio, launch.hpp, is
// the same for a UniqueFd, throwing.)
inline int fd_above_stdio(int fd) noexcept {
  if (fd < 0 || fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int err = errno;
  ::close(fd);
  errno = err;
  return moved;
}

}  // namespace sup
