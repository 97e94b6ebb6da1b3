// Where sup makes its cgroups (cgroup_host.hpp): the parent, found from the
// spec, the environment or the host's own cgroup, and the host's directory in
// it, made once per parent and reported to the sentinel before it exists.
#include "cgroup_host.hpp"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <utility>

#include "errno_text.hpp"
#include "launch.hpp"
#include "sentinel.hpp"
#include "sup.h"

namespace sup {

[[noreturn]] void contain_unsupported(const std::string& why) { throw LaunchError{SUP_ENOTSUP, "contain: " + why}; }

namespace {

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
  if (mount_point.empty()) contain_unsupported("no cgroup v2 hierarchy is mounted (none in /proc/self/mountinfo)");
  std::ifstream groups("/proc/self/cgroup");
  std::string own;
  while (std::getline(groups, line))
    if (line.compare(0, 3, "0::") == 0) own = line.substr(3);
  if (own.empty()) contain_unsupported("this process has no cgroup v2 entry in /proc/self/cgroup");
  // The mount may show a subtree (a container's namespace): the path is
  // relative to its root.
  if (mount_root != "/" && own.compare(0, mount_root.size(), mount_root) == 0) own = own.substr(mount_root.size());
  if (own.find(" (deleted)") != std::string::npos) contain_unsupported("this process's cgroup has been removed");
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
    if (env[0] != '/') contain_unsupported("SUP_CGROUP_PARENT " + quoted(env) + " is not an absolute path");
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
    contain_unsupported("cgroup parent " + quoted(parent) + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode)) contain_unsupported("cgroup parent " + quoted(parent) + " is not a directory");
  if (!is_cgroup2(parent)) contain_unsupported("cgroup parent " + quoted(parent) + " is not on a cgroup v2 hierarchy");
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
      contain_unsupported("cgroup parent " + quoted(parent) + " is not writable (" + errno_text(err) + ")");
    throw LaunchError{-err, "contain: mkdir " + quoted(dir) + ": " + errno_text(err)};
  }
  contain_unsupported("cgroup parent " + quoted(parent) + ": 100 directories of this host's name exist");
}

}  // namespace

std::string host_cgroup_for(const std::optional<std::string>& parent_key, Sentinel& sentinel) {
  HostDirs& dirs = host_dirs();
  std::lock_guard<std::mutex> lock(dirs.mu);
  if (dirs.owner != getpid()) {
    // A forked child: nothing here is ours.
    dirs.by_parent.clear();
    dirs.default_parent.reset();
    dirs.owner = getpid();
  }
  return host_dir_in(parent_for(parent_key, dirs), dirs, sentinel);
}

uint64_t next_child_cgroup() noexcept { return host_dirs().next_child.fetch_add(1, std::memory_order_relaxed); }

std::vector<std::pair<std::string, std::string>> take_host_cgroups() noexcept {
  HostDirs* made = g_host_dirs.exchange(nullptr, std::memory_order_acq_rel);
  if (made == nullptr) return {};  // no cgroup was ever made
  std::unique_ptr<HostDirs> owned(made);  // nothing else runs at the engine's end
  std::lock_guard<std::mutex> lock(owned->mu);
  if (owned->owner != getpid()) return {};
  return std::move(owned->by_parent);
}

void forget_host_cgroups_after_fork() noexcept { g_host_dirs.store(nullptr, std::memory_order_release); }

}  // namespace sup
