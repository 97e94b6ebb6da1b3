// Holding the host's closed 0, 1 and 2 while libuv makes its descriptors.
#include "stdio_hold.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace sup {

void StdioHold::hold() noexcept {
  for (int fd = 0; fd < 3; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0) return;  // then libuv's may land low: nothing else to do
    if (null <= 2)
      held[null] = true;
    else
      close(null);  // another thread filled the slot first
  }
}

void StdioHold::release() noexcept {
  struct stat null_dev;
  const bool known = stat("/dev/null", &null_dev) == 0;
  for (int fd = 0; fd < 3; ++fd) {
    if (!held[fd]) continue;
    held[fd] = false;
    struct stat st;
    if (!known || fcntl(fd, F_GETFD) != FD_CLOEXEC || fstat(fd, &st) != 0 || st.st_rdev != null_dev.st_rdev ||
        !S_ISCHR(st.st_mode))
      continue;
    close(fd);
  }
}

}  // namespace sup
