#include "terminal.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "errno_text.hpp"
#include "launch.hpp"
#include "sup.h"

namespace sup {
namespace {

[[noreturn]] void fail(int err, const std::string& step) {
  std::string detail = "pty: " + step + ": " + errno_text(err);
  // devpts says ENOSPC once kernel.pty.max (or the instance's max=) is
  // reached; EAGAIN where a terminal's index cannot be had for now.
  if (err == ENOSPC || err == EAGAIN)
    throw LaunchError{SUP_ENOSPC,
                      detail + " (no pseudo-terminal left: the limit is /proc/sys/kernel/pty/max, in use: "
                               "/proc/sys/kernel/pty/nr)"};
  throw LaunchError{-err, detail};
}

// The slave's side, opened through the master itself (Linux >= 4.13), so
// that it is the terminal of this master's devpts instance whatever is
// mounted at /dev/pts; by its name where the ioctl is missing.
int open_slave(int master) {
  int fd = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0 || (errno != EINVAL && errno != ENOTTY)) return fd;
  char name[64];
  if (ptsname_r(master, name, sizeof name) != 0) return -1;
  return open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
}

}  // namespace

Terminal open_terminal(int rows, int cols) {
  Terminal t;
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) fail(errno, "open /dev/ptmx");
  t.master.reset(master);
  t.master = above_stdio(std::move(t.master));
  if (grantpt(t.master.get()) != 0) fail(errno, "grantpt");
  if (unlockpt(t.master.get()) != 0) fail(errno, "unlockpt");
  if (set_window_size(t.master.get(), rows, cols) != 0) fail(errno, "TIOCSWINSZ");
  // The host writes without blocking (sup_input_write), and the loop reads.
  int flags = fcntl(t.master.get(), F_GETFL);
  if (flags < 0 || fcntl(t.master.get(), F_SETFL, flags | O_NONBLOCK) != 0) fail(errno, "fcntl");
  int slave = open_slave(t.master.get());
  if (slave < 0) fail(errno, "open the terminal's slave side");
  t.slave = above_stdio(UniqueFd(slave));
  return t;
}

int set_window_size(int master, int rows, int cols) noexcept {
  winsize size{};
  size.ws_row = static_cast<unsigned short>(rows);
  size.ws_col = static_cast<unsigned short>(cols);
  return ioctl(master, TIOCSWINSZ, &size) == 0 ? 0 : -errno;
}

int write_end_of_input(int master, int& last_byte) noexcept {
  termios modes{};
  // On a master, the terminal modes are the slave's: the child's.
  if (tcgetattr(master, &modes) != 0) return -errno;
  const cc_t veof = modes.c_cc[VEOF];
  if (veof == _POSIX_VDISABLE) return 0;
  int count = 1;
  if ((modes.c_lflag & ICANON) != 0 && last_byte >= 0) {
    const auto ends_line = [&](int c) {
      if (c == '\n' || c == veof) return true;
      if (c == '\r') return (modes.c_iflag & (ICRNL | IGNCR)) == ICRNL;
      return (modes.c_cc[VEOL] != _POSIX_VDISABLE && c == modes.c_cc[VEOL]) ||
             (modes.c_cc[VEOL2] != _POSIX_VDISABLE && c == modes.c_cc[VEOL2]);
    };
    if (!ends_line(last_byte)) count = 2;
  }
  for (int i = 0; i < count; ++i) {
    ssize_t n;
    do {
      n = write(master, &veof, 1);
    } while (n < 0 && errno == EINTR);
    // EIO: the child's side is closed, its input has ended already.
    if (n < 0 && errno == EIO) return 0;
    if (n < 0) return -errno;
    last_byte = veof;
  }
  return 0;
}

}  // namespace sup
