// Applying "limits": rlimits for the child to set on itself, and the cgroup's
// memory and pids controllers where the host's cgroup offers them.
#include "limits.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cgroup.hpp"
#include "errno_text.hpp"
#include "json_text.hpp"
#include "launch.hpp"
#include "sup.h"

namespace sup {
namespace {

// The first line of a small file under dir, or "" if it cannot be read.
std::string read_small(int dir, const char* name) {
  int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// "key N" from a flat-keyed cgroup file (memory.events, pids.events).
int64_t event_count(int dir, const char* file, const char* key) {
  std::string text = read_small(dir, file);
  const std::string want = std::string(key) + " ";
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, want.size(), want) == 0) return std::strtoll(text.c_str() + at + want.size(), nullptr, 10);
    at = end + 1;
  }
  return 0;
}

bool write_file(int dir, const char* name, const std::string& value, int* err) {
  int fd = openat(dir, name, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return false;
  }
  bool ok = write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  *err = ok ? 0 : errno;
  close(fd);
  return ok;
}

// The child's cgroup has the controller's files once its parent (the host's
// directory, which holds no process) enables it for its children; that needs
// the controller offered to the host's directory by its own parent. Returns
// "" when the controller is there, else why not.
std::string enable_controller(ChildCgroup& cgroup, const char* controller, const char* probe) {
  if (faccessat(cgroup.dir_fd(), probe, F_OK, 0) == 0) return "";
  int host_dir = openat(cgroup.dir_fd(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (host_dir < 0) return std::string("cgroup: opening the host's directory: ") + errno_text(errno);
  std::string offered = " " + read_small(host_dir, "cgroup.controllers");
  for (char& c : offered)
    if (c == '\n') c = ' ';
  std::string reason;
  int err = 0;
  if (offered.find(std::string(" ") + controller + " ") == std::string::npos)
    reason = std::string("cgroup: no ") + controller + " controller offered to " + cgroup.path() + "/.. (it is not in the parent's cgroup.subtree_control, or is bound to cgroup v1)";
  else if (!write_file(host_dir, "cgroup.subtree_control", std::string("+") + controller, &err))
    reason = std::string("cgroup: enabling the ") + controller + " controller: " + errno_text(err);
  else if (faccessat(cgroup.dir_fd(), probe, F_OK, 0) != 0)
    reason = std::string("cgroup: ") + probe + " missing after enabling the controller";
  close(host_dir);
  return reason;
}

std::string decimal(uint64_t v) { return std::to_string(v); }

std::string group_mode_reason(const std::string& contain_fallback) {
  return "\"contain\": \"auto\" ran in group mode: " + contain_fallback;
}

}  // namespace

Limits::Limits(const LimitsSpec& spec, ChildCgroup* cgroup, bool child_is_root, const std::string& contain_fallback)
    : spec_(spec), child_is_root_(child_is_root) {
  plan(cgroup,
       contain_fallback.empty() ? "not in a cgroup (\"contain\": \"cgroup\" bounds the whole tree)"
                                : group_mode_reason(contain_fallback),
       rlimits_, applied_);
  if (cgroup == nullptr) {
    group_rlimits_ = rlimits_;
  } else {
    std::vector<LimitApplied> unused;
    plan(nullptr, "group mode", group_rlimits_, unused);
  }
}

void Limits::fall_back_to_group(const std::string& why) {
  std::vector<RlimitSetting> rlimits;
  std::vector<LimitApplied> applied;
  plan(nullptr, group_mode_reason(why), rlimits, applied);
  applied_ = std::move(applied);
  memory_in_cgroup_ = false;
  pids_in_cgroup_ = false;
}

void Limits::plan(ChildCgroup* cgroup, const std::string& no_cgroup, std::vector<RlimitSetting>& rlimits,
                  std::vector<LimitApplied>& applied) {
  const LimitsSpec& spec = spec_;
  const bool child_is_root = child_is_root_;
  auto set = [&](int resource, uint64_t soft, uint64_t hard, const char* step) {
    rlimits.push_back({resource, {static_cast<rlim_t>(soft), static_cast<rlim_t>(hard)}, step});
  };
  if (spec.memory_bytes) {
    std::string why = no_cgroup;
    if (cgroup != nullptr) why = enable_controller(*cgroup, "memory", "memory.max");
    if (cgroup != nullptr && why.empty()) {
      int err = 0;
      if (!write_file(cgroup->dir_fd(), "memory.max", decimal(*spec.memory_bytes), &err))
        throw LaunchError{-err, "limits.memory_bytes: writing memory.max: " + errno_text(err)};
      // Swap would let the tree go past the limit: none for it. A kernel
      // without swap accounting has no such file.
      if (faccessat(cgroup->dir_fd(), "memory.swap.max", F_OK, 0) == 0) write_file(cgroup->dir_fd(), "memory.swap.max", "0", &err);
      memory_in_cgroup_ = true;
      applied.push_back({"memory_bytes", decimal(*spec.memory_bytes), "cgroup", "tree", ""});
    } else {
      // RLIMIT_DATA, never RLIMIT_AS: an address-space limit stops runtimes
      // that reserve large ranges (WebAssembly in Node, the JVM's heap).
      set(RLIMIT_DATA, *spec.memory_bytes, *spec.memory_bytes, "limits.memory_bytes: setrlimit(RLIMIT_DATA)");
      applied.push_back({"memory_bytes", decimal(*spec.memory_bytes), "rlimit", "process", why});
    }
  }
  if (spec.cpu_seconds) {
    // One second apart: equal limits would SIGKILL with no SIGXCPU first.
    set(RLIMIT_CPU, *spec.cpu_seconds, *spec.cpu_seconds + 1, "limits.cpu_seconds: setrlimit(RLIMIT_CPU)");
    applied.push_back({"cpu_seconds", decimal(*spec.cpu_seconds), "rlimit", "process", ""});
  }
  if (spec.processes) {
    std::string why = no_cgroup;
    if (cgroup != nullptr) why = enable_controller(*cgroup, "pids", "pids.max");
    if (cgroup != nullptr && why.empty()) {
      int err = 0;
      if (!write_file(cgroup->dir_fd(), "pids.max", decimal(*spec.processes), &err))
        throw LaunchError{-err, "limits.processes: writing pids.max: " + errno_text(err)};
      pids_in_cgroup_ = true;
      applied.push_back({"processes", decimal(*spec.processes), "cgroup", "tree", ""});
    } else if (child_is_root) {
      applied.push_back({"processes", decimal(*spec.processes), nullptr, nullptr,
                          why + "; RLIMIT_NPROC does not bind a child running as root"});
    } else {
      set(RLIMIT_NPROC, *spec.processes, *spec.processes, "limits.processes: setrlimit(RLIMIT_NPROC)");
      applied.push_back({"processes", decimal(*spec.processes), "rlimit", "user", why});
    }
  }
  if (spec.file_bytes) {
    set(RLIMIT_FSIZE, *spec.file_bytes, *spec.file_bytes, "limits.file_bytes: setrlimit(RLIMIT_FSIZE)");
    applied.push_back({"file_bytes", decimal(*spec.file_bytes), "rlimit", "process", ""});
  }
  if (spec.open_files) {
    set(RLIMIT_NOFILE, *spec.open_files, *spec.open_files, "limits.open_files: setrlimit(RLIMIT_NOFILE)");
    applied.push_back({"open_files", decimal(*spec.open_files), "rlimit", "process", ""});
  }
  if (spec.core_dump && !*spec.core_dump) {
    set(RLIMIT_CORE, 0, 0, "limits.core_dump: setrlimit(RLIMIT_CORE)");
    applied.push_back({"core_dump", "false", "rlimit", "process", ""});
  }
}

void Limits::append_json(std::string& out) const {
  for (const LimitApplied& a : applied_) {
    out += ", ";
    append_json_string(out, a.name);
    out += ": {\"value\": ";
    out += a.value;
    out += ", \"mechanism\": ";
    if (a.mechanism != nullptr)
      append_json_string(out, a.mechanism);
    else
      out += "null";
    out += ", \"scope\": ";
    if (a.scope != nullptr)
      append_json_string(out, a.scope);
    else
      out += "null";
    if (!a.reason.empty()) {
      out += ", \"reason\": ";
      append_json_string(out, a.reason);
    }
    out += "}";
  }
}

const char* Limits::limit_hit(const siginfo_t& status, const struct rusage& usage, ChildCgroup* cgroup) const noexcept {
  try {
    if (cgroup != nullptr && memory_in_cgroup_ && event_count(cgroup->dir_fd(), "memory.events", "oom_kill") > 0)
      return "memory";
    if (cgroup != nullptr && pids_in_cgroup_ && event_count(cgroup->dir_fd(), "pids.events", "max") > 0)
      return "processes";
  } catch (...) {
    // Out of memory for a line: no cgroup verdict.
  }
  if (status.si_code != CLD_KILLED && status.si_code != CLD_DUMPED) return nullptr;
  if (status.si_status == SIGXFSZ) return "file_size";
  if (status.si_status == SIGXCPU) return "cpu";
  if (status.si_status == SIGKILL && spec_.cpu_seconds) {
    // The hard limit's SIGKILL, or any SIGKILL once the soft limit was
    // spent: the CPU time was the limit either way.
    const int64_t cpu_us = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL + usage.ru_utime.tv_usec +
                           usage.ru_stime.tv_usec;
    if (cpu_us >= static_cast<int64_t>(*spec_.cpu_seconds) * 1000000LL) return "cpu";
  }
  return nullptr;
}

}  // namespace sup
