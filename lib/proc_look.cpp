// The /proc side of a look at a child's tree (proc_look.hpp): lists the
// tree's processes, reads every thread's state and the system call it sleeps
// in, and resolves the descriptors that call waits on to files, so that a
// shell's read(0), a Go runtime's read in one of its threads, Node's
// epoll_wait on a reopened terminal and Python's select are all matched
// against the same file.
#include "proc_look.hpp"

#include <dirent.h>
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
#include <mutex>
#include <string>

#include "clock.hpp"
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

enum class Call { other, read_fd, poll, select, epoll, terminal_op };

// System calls that wait for input on the descriptors they are given.
// Numbers of the host's own ABI: a 32-bit process on a 64-bit kernel
// reports its own numbers, which are not matched (README: limits).
Call classify(long nr) noexcept {
  switch (nr) {
    case SYS_read:
    case SYS_readv:
    case SYS_pread64:
    case SYS_preadv:
    case SYS_preadv2:
      return Call::read_fd;
#ifdef SYS_poll
    case SYS_poll:
#endif
    case SYS_ppoll:
      return Call::poll;
#ifdef SYS_select
    case SYS_select:
#endif
    case SYS_pselect6:
      return Call::select;
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
    case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
      return Call::epoll;
    // A background process stopped on its terminal stopped in one of these.
    case SYS_write:
    case SYS_writev:
    case SYS_ioctl:
      return Call::terminal_op;
    default:
      return Call::other;
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

// Appends the pids in text ("1 2 3\n" or one a line) to out.
void parse_pids(const char* text, std::vector<pid_t>& out) {
  for (const char* at = text; *at != '\0';) {
    char* end;
    long pid = std::strtol(at, &end, 10);
    if (end == at) break;
    if (pid > 0) out.push_back(static_cast<pid_t>(pid));
    at = end;
  }
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
    case Call::read_fd: return fd_is_stdin(task_dir, static_cast<long>(b.args[0]), ctty);
    case Call::poll: return poll_waits(task_dir, tid, b, ctty);
    case Call::select: return select_waits(task_dir, tid, b, ctty);
    case Call::epoll: return epoll_waits(task_dir, b, ctty);
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
      if (background && classify(b.nr) != Call::other && classify(b.nr) != Call::epoll &&
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

bool descendants(int proc_dir, pid_t pid, std::vector<pid_t>& out) {
  char path[48];
  std::snprintf(path, sizeof path, "%d/task/%d/children", static_cast<int>(pid), static_cast<int>(pid));
  if (faccessat(proc_dir, path, R_OK, 0) != 0 && errno == ENOENT) return false;  // no such file here
  out.push_back(pid);
  std::string list;
  for (size_t next = 0; next < out.size() && out.size() < static_cast<size_t>(kMaxProcesses); ++next) {
    std::snprintf(path, sizeof path, "%d/task", static_cast<int>(out[next]));
    UniqueFd tasks(openat(proc_dir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!tasks.valid()) continue;  // gone meanwhile
    for_each_dirent(tasks.get(), [&](const char* tid, unsigned char) {
      if (tid[0] < '1' || tid[0] > '9') return true;
      char file[48];
      std::snprintf(file, sizeof file, "%s/children", tid);
      list.clear();
      if (read_whole(tasks.get(), file, list) >= 0) parse_pids(list.c_str(), out);
      return true;
    });
  }
  return true;
}

bool group_members(GroupIndex& index, int proc_dir, pid_t pgid, const std::vector<pid_t>& known,
                   std::vector<pid_t>& out, int64_t max_age, int64_t& scanned_at) {
  std::unique_lock<std::mutex> lock(index.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  const Nanos now = now_ns();
  if (index.scanned_at == 0 || now - index.scanned_at >= max_age) {
    index.by_group.clear();
    UniqueFd listing(openat(proc_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing.valid()) return false;
    char text[1024];
    for_each_dirent(listing.get(), [&](const char* name, unsigned char) {
      if (name[0] < '1' || name[0] > '9') return true;
      char path[40];
      std::snprintf(path, sizeof path, "%s/stat", name);
      ProcStat ps;
      if (read_file(proc_dir, path, text, sizeof text) > 0 && parse_stat(text, ps))
        index.by_group.emplace_back(ps.pgrp, static_cast<pid_t>(std::strtol(name, nullptr, 10)));
      return true;
    });
    std::sort(index.by_group.begin(), index.by_group.end());
    index.scanned_at = now;
  }
  auto at = std::lower_bound(index.by_group.begin(), index.by_group.end(), std::make_pair(pgid, pid_t{0}));
  for (; at != index.by_group.end() && at->first == pgid && out.size() < static_cast<size_t>(kMaxProcesses); ++at)
    if (std::find(known.begin(), known.end(), at->second) == known.end()) out.push_back(at->second);
  scanned_at = index.scanned_at;
  return true;
}

void cgroup_members(int cgroup_dir, std::vector<pid_t>& out) {
  std::vector<std::pair<int, int>> dirs;  // (fd, depth)
  int top = openat(cgroup_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top >= 0) dirs.emplace_back(top, 0);
  std::string procs;
  while (!dirs.empty()) {
    // Plain locals, not a structured binding: the lambda below captures
    // them, which C++17 (and clang 14) refuses for bindings.
    const int dir = dirs.back().first;
    const int depth = dirs.back().second;
    dirs.pop_back();
    UniqueFd owned(dir);
    procs.clear();
    if (read_whole(dir, "cgroup.procs", procs) > 0) parse_pids(procs.c_str(), out);
    if (depth >= 8 || out.size() >= static_cast<size_t>(kMaxProcesses)) continue;
    UniqueFd listing(openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing.valid()) continue;
    for_each_dirent(listing.get(), [&](const char* name, unsigned char type) {
      if (type != DT_DIR || name[0] == '.') return true;
      int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (sub >= 0) dirs.emplace_back(sub, depth + 1);
      return true;
    });
  }
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
