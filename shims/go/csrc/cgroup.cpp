#include "cgroup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "dirents.hpp"
#include "launch.hpp"
#include "sentinel.hpp"
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

[[noreturn]] void unsupported(const std::string& why) { throw LaunchError{SUP_ENOTSUP, "contain: " + why}; }

std::string errno_text(int err) {
  const char* text = strerrordesc_np(err);
  return text != nullptr ? text : "error " + std::to_string(err);
}

bool is_cgroup2(const std::string& path) {
  struct statfs fs;
  return statfs(path.c_str(), &fs) == 0 && static_cast<unsigned long>(fs.f_type) == CGROUP2_SUPER_MAGIC;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mount(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

// The host's own cgroup as a directory: the cgroup2 mount from mountinfo
// joined with the "0::" line of /proc/self/cgroup.
std::string host_cgroup_dir() {
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line, mount_point, mount_root;
  while (std::getline(mounts, line)) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype;
    after >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    mount_root = unescape_mount(root);
    mount_point = unescape_mount(point);
    break;
  }
  if (mount_point.empty()) unsupported("no cgroup v2 hierarchy is mounted (none in /proc/self/mountinfo)");
  std::ifstream groups("/proc/self/cgroup");
  std::string own;
  while (std::getline(groups, line))
    if (line.compare(0, 3, "0::") == 0) own = line.substr(3);
  if (own.empty()) unsupported("this process has no cgroup v2 entry in /proc/self/cgroup");
  // The mount may show a subtree (a container's namespace): the path is
  // relative to its root.
  if (mount_root != "/" && own.compare(0, mount_root.size(), mount_root) == 0) own = own.substr(mount_root.size());
  if (own.find(" (deleted)") != std::string::npos) unsupported("this process's cgroup has been removed");
  std::string dir = mount_point;
  if (own != "/") dir += own;
  return dir;
}

// Field 22 of /proc/self/stat: with the pid it names this process for good.
std::string start_time() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  if (close == std::string::npos) return "0";
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  // After the ')' come fields 3 (state) onward: field 22 is the 20th.
  for (int i = 3; i <= 22 && (rest >> field); ++i) {
  }
  return field;
}

// This process's host directories, one per parent. After fork() a child
// has another pid: the parent's directories are the parent's.
struct HostDirs {
  std::mutex mu;
  pid_t owner = 0;
  std::vector<std::pair<std::string, std::string>> by_parent;  // parent, host dir
  std::optional<std::string> default_parent;
  std::atomic<uint64_t> next_child{0};
};

// Made on first use and freed by remove_host_cgroups at the engine's end:
// not a static object, which static destruction could free before the
// engine's end uses it. A plain atomic pointer has nothing to destroy.
std::atomic<HostDirs*> g_host_dirs{nullptr};

HostDirs& host_dirs() {
  HostDirs* dirs = g_host_dirs.load(std::memory_order_acquire);
  if (dirs != nullptr) return *dirs;
  auto* made = new HostDirs;
  if (g_host_dirs.compare_exchange_strong(dirs, made, std::memory_order_acq_rel)) return *made;
  delete made;  // another thread's came first
  return *dirs;
}

std::string parent_for(const std::optional<std::string>& parent_key, HostDirs& dirs) {
  if (parent_key) return *parent_key;
  const char* env = getenv("SUP_CGROUP_PARENT");
  if (env != nullptr && env[0] != '\0') {
    if (env[0] != '/') unsupported("SUP_CGROUP_PARENT " + quoted(env) + " is not an absolute path");
    return env;
  }
  if (!dirs.default_parent) dirs.default_parent = host_cgroup_dir();
  return *dirs.default_parent;
}

// The host's directory in parent, made on first use. Under dirs.mu.
std::string host_dir_in(const std::string& parent, HostDirs& dirs, Sentinel& sentinel) {
  for (const auto& [p, dir] : dirs.by_parent)
    if (p == parent) return dir;
  struct stat st;
  if (stat(parent.c_str(), &st) != 0)
    unsupported("cgroup parent " + quoted(parent) + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode)) unsupported("cgroup parent " + quoted(parent) + " is not a directory");
  if (!is_cgroup2(parent)) unsupported("cgroup parent " + quoted(parent) + " is not on a cgroup v2 hierarchy");
  const std::string base = parent + "/sup-" + std::to_string(getpid()) + "-" + start_time();
  // The sentinel is told before the directory exists, and only once it
  // holds its end of the socket (the first spawn's engine starts it on
  // another thread): a host killed at any point after the mkdir leaves it
  // to the sentinel, never behind. Told of a name that then fails, it finds
  // nothing there to remove.
  sentinel.wait_started();
  // A directory of this name left by an earlier engine of this process (one
  // that could not be emptied) is not reused.
  for (int n = 1; n <= 100; ++n) {
    std::string dir = n == 1 ? base : base + "." + std::to_string(n);
    sentinel.watch_dir(dir);
    if (mkdir(dir.c_str(), 0755) == 0) {
      dirs.by_parent.emplace_back(parent, dir);
      return dir;
    }
    int err = errno;
    if (err == EEXIST) continue;
    if (err == EACCES || err == EPERM || err == EROFS)
      unsupported("cgroup parent " + quoted(parent) + " is not writable (" + errno_text(err) + ")");
    throw LaunchError{-err, "contain: mkdir " + quoted(dir) + ": " + errno_text(err)};
  }
  unsupported("cgroup parent " + quoted(parent) + ": 100 directories of this host's name exist");
}

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
  HostDirs& dirs = host_dirs();
  std::string host_dir;
  {
    std::lock_guard<std::mutex> lock(dirs.mu);
    if (dirs.owner != getpid()) {
      // A forked child: nothing here is ours.
      dirs.by_parent.clear();
      dirs.default_parent.reset();
      dirs.owner = getpid();
    }
    host_dir = host_dir_in(parent_for(parent_key, dirs), dirs, sentinel);
  }
  std::string path;
  for (;;) {
    path = host_dir + "/c" + std::to_string(dirs.next_child.fetch_add(1, std::memory_order_relaxed));
    if (mkdir(path.c_str(), 0755) == 0) break;
    int err = errno;
    if (err == EEXIST) continue;
    if (err == EACCES || err == EPERM || err == EROFS)
      unsupported("cannot make a cgroup in " + quoted(host_dir) + " (" + errno_text(err) + ")");
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
    if (err == ENOENT) unsupported("this kernel has no cgroup.kill (Linux >= 5.14 needed)");
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

void forget_host_cgroups_after_fork() noexcept { g_host_dirs.store(nullptr, std::memory_order_release); }

void remove_host_cgroups() noexcept {
  HostDirs* made = g_host_dirs.exchange(nullptr, std::memory_order_acq_rel);
  if (made == nullptr) return;  // no cgroup was ever made
  std::unique_ptr<HostDirs> owned(made);  // nothing else runs at the engine's end
  HostDirs& dirs = *owned;
  std::lock_guard<std::mutex> lock(dirs.mu);
  if (dirs.owner == getpid()) {
    for (const auto& entry : dirs.by_parent) {
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
  dirs.by_parent.clear();
}

}  // namespace sup
