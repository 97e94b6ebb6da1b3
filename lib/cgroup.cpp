// A child's cgroup (cgroup.hpp): making it in the host's directory, and
// signalling, killing, measuring and removing its tree through cgroupfs
// files, with raw system calls where a signal handler may be the caller.
#include "cgroup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <thread>
#include <vector>

#include "dirents.hpp"
#include "errno_text.hpp"
#include "launch.hpp"
#include "sup.h"

namespace sup {
namespace {

// Sub-cgroups are walked this deep (a sup inside a contained child makes
// its own directories under the child's): enough for nested supervisors,
// bounded for a walk that may run in a signal handler.
constexpr int kMaxDepth = 8;
// How long a tree may take to freeze before it is signalled anyway (a
// process in uninterruptible sleep freezes only when it wakes).
constexpr Nanos kFreezeWait = 50 * kNanosPerMs;


// Calls f(pid) for every pid in dirfd's cgroup.procs and, depth first, in
// every sub-cgroup's. Raw system calls and stack buffers only: it may run
// in a signal handler. Returns false if something could not be read.
template <class F>
bool for_each_pid(int dirfd, F&& f, int depth = 0) noexcept {
  bool complete = true;
  int procs = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC)));
  if (procs < 0) return false;
  char buf[512];
  long pid = -1;
  for (;;) {
    ssize_t n = read(procs, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) complete = false;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c >= '0' && c <= '9') {
        pid = (pid < 0 ? 0 : pid * 10) + (c - '0');
      } else {
        if (pid > 0) f(static_cast<pid_t>(pid));
        pid = -1;
      }
    }
  }
  if (pid > 0) f(static_cast<pid_t>(pid));
  close(procs);
  if (depth >= kMaxDepth) return complete;
  // A fresh descriptor: the directory offset is per open file, and another
  // thread may walk the same tree.
  int listing = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
  if (listing < 0) return false;
  for_each_dirent(listing, [&](const char* name, unsigned char type) {
    if (type != DT_DIR || name[0] == '.') return true;
    int sub = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
    if (sub < 0) return true;  // removed meanwhile
    complete = for_each_pid(sub, f, depth + 1) && complete;
    close(sub);
    return true;
  });
  close(listing);
  return complete;
}

// Reads a small cgroup file of dirfd into buf (NUL-terminated). Returns the
// length or -1.
ssize_t read_small(int dirfd, const char* name, char* buf, size_t cap) noexcept {
  int fd = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dirfd, name, O_RDONLY | O_CLOEXEC)));
  if (fd < 0) return -1;
  ssize_t n;
  while ((n = pread(fd, buf, cap - 1, 0)) < 0 && errno == EINTR) {
  }
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

// The value of "key N" in a flat-keyed cgroup file's text, or -1.
int64_t keyed_value(const char* text, const char* key) noexcept {
  size_t len = strlen(key);
  for (const char* line = text; *line != '\0';) {
    if (strncmp(line, key, len) == 0 && line[len] == ' ') {
      int64_t v = 0;
      for (const char* p = line + len + 1; *p >= '0' && *p <= '9'; ++p) v = v * 10 + (*p - '0');
      return v;
    }
    const char* nl = strchr(line, '\n');
    if (nl == nullptr) break;
    line = nl + 1;
  }
  return -1;
}

// Waits until cgroup.events has "key want", at most budget ns; the kernel
// wakes pollers of the file (POLLPRI) on every change of it.
bool wait_event(int dirfd, const char* key, int64_t want, Nanos budget) noexcept {
  int fd = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC)));
  if (fd < 0) return false;
  const Nanos until = now_ns() + budget;
  bool reached = false;
  char buf[256];
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    buf[n] = '\0';
    if (keyed_value(buf, key) == want) {
      reached = true;
      break;
    }
    const Nanos left = until - now_ns();
    if (left <= 0) break;
    pollfd changed{fd, POLLPRI, 0};
    // Rounded up, and at most 10 ms at a time: a change that lands between
    // the read and the poll is seen at the next turn.
    int ms = static_cast<int>(std::min<Nanos>((left + kNanosPerMs - 1) / kNanosPerMs, 10));
    if (poll(&changed, 1, ms) < 0 && errno != EINTR) break;
  }
  close(fd);
  return reached;
}

bool write_file(int dirfd, const char* name, const char* text) noexcept {
  int fd = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dirfd, name, O_WRONLY | O_CLOEXEC)));
  if (fd < 0) return false;
  ssize_t n;
  while ((n = write(fd, text, strlen(text))) < 0 && errno == EINTR) {
  }
  close(fd);
  return n > 0;
}

// Removes path and everything below it, deepest first. Returns true when
// path is gone.
bool remove_depth_first(const std::string& path) noexcept {
  if (DIR* d = opendir(path.c_str())) {
    std::vector<std::string> subs;
    try {
      while (dirent* e = readdir(d))
        if (e->d_type == DT_DIR && e->d_name[0] != '.') subs.push_back(path + "/" + e->d_name);
    } catch (...) {
    }
    closedir(d);
    for (const std::string& sub : subs) remove_depth_first(sub);
  }
  return rmdir(path.c_str()) == 0 || errno == ENOENT;
}

}  // namespace

ChildCgroup::ChildCgroup(std::string path, UniqueFd dir, UniqueFd kill_fd) noexcept
    : path_(std::move(path)), dir_(std::move(dir)), kill_(std::move(kill_fd)) {}

std::unique_ptr<ChildCgroup> ChildCgroup::create(const std::optional<std::string>& parent_key, Sentinel& sentinel) {
  const std::string host_dir = host_cgroup_for(parent_key, sentinel);
  std::string path;
  for (;;) {
    path = host_dir + "/c" + std::to_string(next_child_cgroup());
    if (mkdir(path.c_str(), 0755) == 0) break;
    int err = errno;
    if (err == EEXIST) continue;
    if (err == EACCES || err == EPERM || err == EROFS)
      contain_unsupported("cannot make a cgroup in " + quoted(host_dir) + " (" + errno_text(err) + ")");
    throw LaunchError{-err, "contain: mkdir " + quoted(path) + ": " + errno_text(err)};
  }
  int dir = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    int err = errno;
    rmdir(path.c_str());
    throw LaunchError{-err, "contain: open " + quoted(path) + ": " + errno_text(err)};
  }
  UniqueFd dir_fd = above_stdio(UniqueFd(dir));
  int kill_fd = openat(dir_fd.get(), "cgroup.kill", O_WRONLY | O_CLOEXEC);
  if (kill_fd < 0) {
    int err = errno;
    rmdir(path.c_str());
    if (err == ENOENT) contain_unsupported("this kernel has no cgroup.kill (Linux >= 5.14 needed)");
    throw LaunchError{-err, "contain: open " + quoted(path + "/cgroup.kill") + ": " + errno_text(err)};
  }
  UniqueFd kill_owned = above_stdio(UniqueFd(kill_fd));
  return std::unique_ptr<ChildCgroup>(new ChildCgroup(std::move(path), std::move(dir_fd), std::move(kill_owned)));
}

ChildCgroup::~ChildCgroup() {
  if (removed_) return;
  // A spawn that failed: its child, if one was cloned, has been reaped.
  kill();
  remove(0);
}

bool ChildCgroup::kill() noexcept {
  int saved = errno;
  ssize_t n;
  while ((n = write(kill_.get(), "1", 1)) < 0 && errno == EINTR) {
  }
  if (n == 1) killed_.store(true, std::memory_order_release);
  errno = saved;
  return n == 1;
}

void ChildCgroup::set_frozen(bool frozen) noexcept { write_file(dir_.get(), "cgroup.freeze", frozen ? "1" : "0"); }

int ChildCgroup::signal(int sig, pid_t skip_pid, pid_t skip_pgid) noexcept {
  int saved = errno;
  freezers_.fetch_add(1, std::memory_order_acq_rel);
  set_frozen(true);
  wait_event(dir_.get(), "frozen", 1, kFreezeWait);
  int reached = 0;
  for_each_pid(dir_.get(), [&](pid_t pid) {
    if (pid == skip_pid) return;
    if (skip_pgid > 0 && getpgid(pid) == skip_pgid) return;
    if (::kill(pid, sig) == 0) ++reached;
  });
  if (freezers_.fetch_sub(1, std::memory_order_acq_rel) == 1) set_frozen(false);
  errno = saved;
  return reached;
}

int64_t ChildCgroup::count_alive(pid_t skip_pid) noexcept {
  int64_t alive = 0;
  for_each_pid(dir_.get(), [&](pid_t pid) {
    if (pid != skip_pid) ++alive;
  });
  return alive;
}

bool ChildCgroup::wait_empty(Nanos budget) noexcept { return wait_event(dir_.get(), "populated", 0, budget); }

std::optional<TreeCpu> ChildCgroup::cpu() noexcept {
  char buf[1024];
  if (read_small(dir_.get(), "cpu.stat", buf, sizeof buf) < 0) return std::nullopt;
  int64_t user = keyed_value(buf, "user_usec"), sys = keyed_value(buf, "system_usec");
  if (user < 0 || sys < 0) return std::nullopt;
  return TreeCpu{user, sys};
}

bool ChildCgroup::remove(Nanos budget) noexcept {
  if (removed_) return true;
  const Nanos until = now_ns() + budget;
  for (;;) {
    if (remove_depth_first(path_)) {
      removed_ = true;
      return true;
    }
    // Something is still inside (a process in uninterruptible sleep, or one
    // that entered a sub-cgroup): killed again, tried again.
    if (now_ns() >= until) return false;
    kill();
    wait_empty(std::min<Nanos>(until - now_ns(), 10 * kNanosPerMs));
    if (now_ns() >= until) {
      if (remove_depth_first(path_)) removed_ = true;
      return removed_;
    }
  }
}

void remove_host_cgroups() noexcept {
  for (const auto& entry : take_host_cgroups()) {
    const std::string& dir = entry.second;
    if (remove_depth_first(dir)) continue;
    // A child's cgroup that could not be removed at its end: what is in
    // it is killed again, and the host directory tried once more.
    int fd = fd_above_stdio(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd < 0) continue;
    write_file(fd, "cgroup.kill", "1");
    wait_event(fd, "populated", 0, 100 * kNanosPerMs);
    close(fd);
    remove_depth_first(dir);
  }
}

}  // namespace sup
