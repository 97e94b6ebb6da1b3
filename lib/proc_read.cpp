// Reading /proc files (proc_read.hpp): raw reads into caller's memory, so
// that a look at a large tree allocates only for what is longer than a page.
#include "proc_read.hpp"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "unique_fd.hpp"

namespace sup {

long read_file(int dir, const char* path, char* buf, size_t cap) noexcept {
  UniqueFd fd(openat(dir, path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return -1;
  long n;
  while ((n = read(fd.get(), buf, cap - 1)) < 0 && errno == EINTR) {
  }
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

long read_whole(int dir, const char* path, std::string& out) {
  UniqueFd fd(openat(dir, path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return -1;
  char chunk[4096];
  for (;;) {
    long n = read(fd.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    out.append(chunk, static_cast<size_t>(n));
  }
  return static_cast<long>(out.size());
}

// comm may hold anything, spaces and parentheses included, but ends at the
// last ')'.
bool parse_stat(const char* text, ProcStat& out) noexcept {
  const char* close = std::strrchr(text, ')');
  if (close == nullptr || close[1] != ' ') return false;
  char state;
  long ppid, pgrp, session, tty_nr, tpgid;
  if (std::sscanf(close + 2, "%c %ld %ld %ld %ld %ld", &state, &ppid, &pgrp, &session, &tty_nr, &tpgid) != 6)
    return false;
  out.state = state;
  out.pgrp = static_cast<pid_t>(pgrp);
  // tty_nr is the kernel's new_encode_dev: minor's low byte, the major,
  // then the minor's high bits.
  const auto t = static_cast<unsigned long>(tty_nr);
  out.tty = t == 0 ? 0 : makedev((t >> 8) & 0xfff, (t & 0xff) | ((t >> 12) & 0xfff00));
  out.tpgid = static_cast<pid_t>(tpgid);
  return true;
}

}  // namespace sup
