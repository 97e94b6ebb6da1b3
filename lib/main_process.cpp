// The main process's pidfd and group: signals, the exit's status, the reap.
#include "main_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "dirents.hpp"

namespace sup {
namespace {

// True if a process other than a zombie is in process group pgid: a scan of
// /proc with raw system calls only (async-signal-safe, no allocation).
bool group_has_living_member(pid_t pgid) noexcept {
  int dir = static_cast<int>(syscall(SYS_open, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) return true;  // cannot tell: the kernel's word stands
  bool found = false;
  for_each_dirent(dir, [&](const char* name, unsigned char) {
    if (name[0] < '1' || name[0] > '9') return true;
    char path[64] = "/proc/";
    size_t len = 6;
    for (const char* c = name; *c != '\0' && len < 40; ++c) path[len++] = *c;
    const char tail[] = "/stat";
    for (char c : tail) path[len++] = c;
    int fd = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dir, path + 6, O_RDONLY | O_CLOEXEC)));
    if (fd < 0) return true;
    char stat[512];
    long got = syscall(SYS_read, fd, stat, sizeof stat - 1);
    syscall(SYS_close, fd);
    if (got <= 0) return true;
    stat[got] = '\0';
    // "pid (comm) S ppid pgrp ...": comm may hold anything but ends at the
    // last ')'.
    const char* close = nullptr;
    for (const char* c = stat; *c != '\0'; ++c)
      if (*c == ')') close = c;
    if (close == nullptr || close[1] != ' ' || close[2] == '\0') return true;
    const char state = close[2];
    // " S ppid pgrp ...": past the state and the parent's pid.
    const char* field = close + 3;
    while (*field == ' ') ++field;
    while (*field != '\0' && *field != ' ') ++field;
    while (*field == ' ') ++field;
    long pgrp = 0;
    while (*field >= '0' && *field <= '9') pgrp = pgrp * 10 + (*field++ - '0');
    found = pgrp == pgid && state != 'Z' && state != 'X';
    return !found;
  });
  syscall(SYS_close, dir);
  return found;
}

}  // namespace

bool MainProcess::signal(int sig, bool answer) const noexcept {
  // Before the send: a main process that has exited is a zombie, which a
  // group kill "reaches" as well, and which must not count; what else is in
  // the group is looked at before the send too (a SIGKILL leaves no one
  // alive to find), and only when the answer is wanted (a /proc scan).
  const bool main_exited = exit_shows();
  const bool someone_alive = !main_exited || !answer || group_has_living_member(pid_);
  bool delivered = kill(-pid_, sig) == 0 && someone_alive;
  // A main process that left its group (setpgid, a shell doing job
  // control) is reached through its pidfd. Only then: one still in the
  // group has had the signal, and a handler would run twice.
  if (!main_exited && getpgid(pid_) != pid_ &&
      syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0) == 0)
    delivered = true;
  return delivered;
}

bool MainProcess::running() const noexcept {
  siginfo_t info{};
  long rc = syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &info, WEXITED | WNOHANG | WNOWAIT | __WALL, nullptr);
  return rc == 0 && info.si_pid == 0;
}

bool MainProcess::unreaped() const noexcept {
  siginfo_t info{};
  return syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &info, WEXITED | WNOHANG | WNOWAIT | __WALL, nullptr) == 0;
}

bool MainProcess::exit_shows() const noexcept {
  pollfd exited{pidfd_.get(), POLLIN, 0};
  return poll(&exited, 1, 0) > 0;
}

void MainProcess::await_exit() const noexcept {
  pollfd exited{pidfd_.get(), POLLIN, 0};
  while (poll(&exited, 1, -1) < 0 && errno == EINTR) {
  }
}

bool MainProcess::exited_now() noexcept {
  // WNOWAIT keeps the leader a zombie: its pid, and so the process group id,
  // cannot be reused while we may still signal the group.
  siginfo_t info{};
  struct rusage usage {};
  long rc = syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &info,
                    WEXITED | WNOHANG | WNOWAIT | __WALL, &usage);
  if (rc < 0) {
    if (errno == EINTR) return false;
    // Our children are the host's children: a host that ignores SIGCHLD (the
    // kernel then reaps them) or reaps any child took this one.
    status_lost_ = true;
    info = siginfo_t{};
  } else if (info.si_pid == 0) {
    return false;
  }
  status_ = info;
  usage_ = usage;
  return true;
}

void MainProcess::reap() noexcept {
  if (status_lost_) return;
  siginfo_t reaped{};
  syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &reaped, WEXITED | __WALL, nullptr);
}

}  // namespace sup
