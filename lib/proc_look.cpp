// The /proc side of a look at a child's tree (proc_look.hpp): reads every
// thread's state and the system call it sleeps in, and resolves the
// descriptors that call waits on to files, so that a shell's read(0), a Go
// runtime's read in one of its threads, Node's epoll_wait on a reopened
// terminal and Python's select are all matched against the same file.
#include "proc_look.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "dirents.hpp"
#include "proc_read.hpp"
#include "unique_fd.hpp"

namespace sup {

// /proc/PID/task/TID/syscall: "NR ARG1 .. ARG6 SP PC" while blocked in a
// call, "-1 SP PC" when blocked outside one, "running" while it runs.
struct Blocked {
  long nr = -1;
  unsigned long args[6] = {};
};

namespace {

constexpr int kMaxThreads = 1024;
// poll's and select's sets are read from the process's memory up to this.
constexpr unsigned long kMaxPollFds = 4096;
constexpr unsigned long kMaxSelectFds = 65536;

bool denied(int err) noexcept { return err == EACCES || err == EPERM; }

bool parse_syscall(const char* text, Blocked& out) noexcept {
  if (std::strncmp(text, "running", 7) == 0) return false;
  char* end;
  out.nr = std::strtol(text, &end, 10);
  if (end == text) return false;
  for (unsigned long& arg : out.args) arg = std::strtoul(end, &end, 16);
  return out.nr >= 0;
}

enum class Syscall { other, read_fd, poll, select, epoll, terminal_op };

// System calls that wait for input on the descriptors they are given.
// Numbers of the host's own ABI: a 32-bit process on a 64-bit kernel
// reports its own numbers, which are not matched (README: limits).
Syscall classify(long nr) noexcept {
  switch (nr) {
    case SYS_read:
    case SYS_readv:
    case SYS_pread64:
    case SYS_preadv:
    case SYS_preadv2:
      return Syscall::read_fd;
#ifdef SYS_poll
    case SYS_poll:
#endif
    case SYS_ppoll:
      return Syscall::poll;
#ifdef SYS_select
    case SYS_select:
#endif
    case SYS_pselect6:
      return Syscall::select;
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
    case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
      return Syscall::epoll;
    // A background process stopped on its terminal stopped in one of these.
    case SYS_write:
    case SYS_writev:
    case SYS_ioctl:
      return Syscall::terminal_op;
    default:
      return Syscall::other;
  }
}

// How long the thread at dir/task (task: "" or a path ending in '/') has
// run: any change between two reads means it woke. schedstat where the
// kernel has it (run time and slices), else its context switches; 0 when
// neither can be read.
uint64_t thread_ran(int dir, const char* task) noexcept {
  char path[64];
  char buf[256];
  std::snprintf(path, sizeof path, "%sschedstat", task);
  if (read_file(dir, path, buf, sizeof buf) > 0) {
    unsigned long long run_ns = 0, wait_ns = 0, slices = 0;
    if (std::sscanf(buf, "%llu %llu %llu", &run_ns, &wait_ns, &slices) == 3) return run_ns ^ (slices << 48);
  }
  char status[4096];
  std::snprintf(path, sizeof path, "%sstatus", task);
  if (read_file(dir, path, status, sizeof status) <= 0) return 0;
  uint64_t switches = 0;
  for (const char* key : {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"}) {
    const char* at = std::strstr(status, key);
    if (at != nullptr) switches += std::strtoull(at + std::strlen(key), nullptr, 10);
  }
  return switches;
}

}  // namespace

Look::Look(const StdinFile& target) noexcept : target_(target), dev_tty_(makedev(5, 0)) {}

bool Look::is_stdin(const struct stat& st, dev_t ctty) const noexcept {
  if (S_ISCHR(st.st_mode)) {
    const dev_t rdev = st.st_rdev == dev_tty_ ? ctty : st.st_rdev;
    return target_.kind == StdinFile::Kind::terminal && rdev != 0 && rdev == target_.rdev;
  }
  return target_.kind == StdinFile::Kind::node && st.st_dev == target_.dev && st.st_ino == target_.ino;
}

bool Look::fd_is_stdin(int task_dir, long fd, dev_t ctty) {
  if (fd < 0 || fd > std::numeric_limits<int>::max()) return false;
  char path[32];
  std::snprintf(path, sizeof path, "fd/%ld", fd);
  struct stat st;
  if (fstatat(task_dir, path, &st, 0) != 0) {
    if (denied(errno)) blind_ = true;
    return false;
  }
  return is_stdin(st, ctty);
}

bool Look::fd_is_terminal(int task_dir, long fd, dev_t ctty) const noexcept {
  if (fd < 0 || fd > std::numeric_limits<int>::max() || ctty == 0) return false;
  char path[32];
  std::snprintf(path, sizeof path, "fd/%ld", fd);
  struct stat st;
  if (fstatat(task_dir, path, &st, 0) != 0 || !S_ISCHR(st.st_mode)) return false;
  return st.st_rdev == ctty || st.st_rdev == dev_tty_;
}

bool Look::read_memory(pid_t tid, unsigned long at, void* into, size_t len) {
  iovec local{into, len};
  iovec remote{reinterpret_cast<void*>(at), len};
  if (process_vm_readv(tid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len)) return true;
  if (denied(errno)) blind_ = true;
  return false;
}

uint64_t Look::ran(int task_dir) noexcept { return thread_ran(task_dir, ""); }

bool none_ran(const std::vector<ThreadRun>& threads) noexcept {
  for (const ThreadRun& t : threads) {
    char task[48];
    std::snprintf(task, sizeof task, "/proc/%d/task/%d/", static_cast<int>(t.pid), static_cast<int>(t.tid));
    const uint64_t now = thread_ran(AT_FDCWD, task);
    if (now == 0 || now != t.ran) return false;
  }
  return true;
}

bool Look::poll_waits(int task_dir, pid_t tid, const Blocked& b, dev_t ctty) {
  const unsigned long n = std::min(b.args[1], kMaxPollFds);
  if (n == 0 || b.args[0] == 0) return false;
  std::vector<pollfd> fds(n);
  if (!read_memory(tid, b.args[0], fds.data(), n * sizeof(pollfd))) return false;
  for (const pollfd& p : fds)
    if ((p.events & (POLLIN | POLLPRI | POLLRDNORM)) != 0 && fd_is_stdin(task_dir, p.fd, ctty)) return true;
  return false;
}

bool Look::select_waits(int task_dir, pid_t tid, const Blocked& b, dev_t ctty) {
  const unsigned long nfds = std::min(b.args[0], kMaxSelectFds);
  if (nfds == 0 || b.args[1] == 0) return false;  // no read set
  constexpr unsigned long kBits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> set((nfds + kBits - 1) / kBits);
  if (!read_memory(tid, b.args[1], set.data(), set.size() * sizeof(unsigned long))) return false;
  for (unsigned long fd = 0; fd < nfds; ++fd)
    if ((set[fd / kBits] >> (fd % kBits) & 1) != 0 && fd_is_stdin(task_dir, static_cast<long>(fd), ctty)) return true;
  return false;
}

bool Look::epoll_waits(int task_dir, const Blocked& b, dev_t ctty) {
  // The epoll's targets are in its fdinfo: "tfd: FD events: MASK data: ...
  // pos:P ino:INO sdev:DEV" (hex), by the descriptor number they were
  // added under, and the file's inode and the kernel's device number.
  char path[48];
  std::snprintf(path, sizeof path, "fdinfo/%lu", b.args[0]);
  std::string info;
  long rc = read_whole(task_dir, path, info);
  if (rc < 0) {
    if (denied(errno)) blind_ = true;
    return false;
  }
  for (size_t at = info.find("tfd:"); at != std::string::npos; at = info.find("tfd:", at + 4)) {
    long tfd = -1;
    unsigned events = 0;
    if (std::sscanf(info.c_str() + at, "tfd: %ld events: %x", &tfd, &events) != 2) continue;
    if ((events & (EPOLLIN | EPOLLPRI | EPOLLRDNORM)) == 0) continue;
    const size_t line_end = info.find('\n', at);
    const std::string line = info.substr(at, line_end == std::string::npos ? std::string::npos : line_end - at);
    unsigned long ino = 0;
    unsigned sdev = 0;
    const size_t ino_at = line.find("ino:");
    const bool has_ino = ino_at != std::string::npos && std::sscanf(line.c_str() + ino_at, "ino:%lx sdev:%x", &ino, &sdev) == 2;
    // The descriptor, while it is still the file the epoll watches (a
    // closed and reused number would be another file).
    char fd_path[32];
    std::snprintf(fd_path, sizeof fd_path, "fd/%ld", tfd);
    struct stat st;
    if (fstatat(task_dir, fd_path, &st, 0) == 0 && (!has_ino || st.st_ino == ino)) {
      if (is_stdin(st, ctty)) return true;
      continue;
    }
    // Closed since: by inode and the kernel's device number (major << 20).
    if (has_ino && target_.kind == StdinFile::Kind::node && ino == target_.ino &&
        makedev(sdev >> 20, sdev & 0xfffff) == target_.dev)
      return true;
  }
  return false;
}

bool Look::waits_on_stdin(int task_dir, pid_t tid, const Blocked& b, dev_t ctty) {
  switch (classify(b.nr)) {
    case Syscall::read_fd: return fd_is_stdin(task_dir, static_cast<long>(b.args[0]), ctty);
    case Syscall::poll: return poll_waits(task_dir, tid, b, ctty);
    case Syscall::select: return select_waits(task_dir, tid, b, ctty);
    case Syscall::epoll: return epoll_waits(task_dir, b, ctty);
    default: return false;
  }
}

bool Look::process(int proc_dir, pid_t pid, pid_t pgrp) {
  char name[24];
  std::snprintf(name, sizeof name, "%d", static_cast<int>(pid));
  UniqueFd dir(openat(proc_dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    if (denied(errno)) blind_ = true;
    return true;  // gone meanwhile
  }
  char text[1024];
  ProcStat ps;
  if (read_file(dir.get(), "stat", text, sizeof text) <= 0 || !parse_stat(text, ps)) return true;
  if (ps.state == 'Z' || ps.state == 'X' || (pgrp != 0 && ps.pgrp != pgrp)) return true;
  const bool background = ps.tty != 0 && ps.tpgid != ps.pgrp;
  UniqueFd tasks(openat(dir.get(), "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!tasks.valid()) return true;
  bool go_on = true;
  for_each_dirent(tasks.get(), [&](const char* tid_name, unsigned char) {
    if (tid_name[0] < '1' || tid_name[0] > '9') return true;
    if (++threads_ > kMaxThreads) {
      cut_ = true;
      return false;
    }
    UniqueFd task(openat(tasks.get(), tid_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!task.valid()) return true;
    ProcStat ts;
    if (read_file(task.get(), "stat", text, sizeof text) <= 0 || !parse_stat(text, ts)) return true;
    const pid_t tid = static_cast<pid_t>(std::strtol(tid_name, nullptr, 10));
    threads.push_back(ThreadRun{pid, tid, ran(task.get())});
    if (ts.state == 'R' || ts.state == 'D' || ts.state == 'W') {
      busy_ = true;
      go_on = false;
      return false;
    }
    if (ts.state != 'S' && ts.state != 'T') return true;  // traced, dead, idle: elsewhere
    long rc = read_file(task.get(), "syscall", text, sizeof text);
    if (rc < 0) {
      if (denied(errno)) blind_ = true;
      return true;
    }
    Blocked b;
    if (!parse_syscall(text, b)) return true;
    if (ts.state == 'T') {
      // Stopped in a read, write or ioctl of its controlling terminal from
      // a background group: SIGTTIN or SIGTTOU, which nothing but the host
      // (SIGCONT after giving it the terminal) ends. A SIGSTOP elsewhere is
      // not waiting for input.
      if (background && classify(b.nr) != Syscall::other && classify(b.nr) != Syscall::epoll &&
          fd_is_terminal(task.get(), static_cast<long>(b.args[0]), ps.tty)) {
        stopped_ = true;
        go_on = false;
        return false;
      }
      return true;
    }
    if (target_.kind != StdinFile::Kind::none && waits_on_stdin(task.get(), tid, b, ps.tty))
      readers.emplace_back(tid, threads.back().ran);
    return true;
  });
  return go_on;
}

StdinFile StdinFile::of_fd(int fd) noexcept {
  StdinFile file;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return file;
  if (S_ISCHR(st.st_mode) && isatty(fd)) {
    file.kind = Kind::terminal;
    file.rdev = st.st_rdev;
  } else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    file.kind = Kind::node;
  } else {
    return file;  // a regular file or /dev/null: a read never waits
  }
  file.dev = st.st_dev;
  file.ino = st.st_ino;
  return file;
}

bool session_has_terminal() noexcept {
  char text[1024];
  ProcStat ps;
  if (read_file(AT_FDCWD, "/proc/self/stat", text, sizeof text) <= 0 || !parse_stat(text, ps)) return true;
  return ps.tty != 0;
}

}  // namespace sup
