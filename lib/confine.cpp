// Planning a child's confinement on the caller's thread, applying it in the
// child, and what the process keeps of it.
#include "confine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cgroup.hpp"
#include "errno_text.hpp"
#include "json_text.hpp"
#include "launch.hpp"
#include "sup.h"

extern char** environ;

namespace sup {
namespace {

// Removes everything under the directory dir_fd, not following symbolic
// links (a link the child left points wherever it likes).
void remove_contents(int dir_fd, int depth) {
  DIR* dir = fdopendir(dir_fd);
  if (dir == nullptr) {
    close(dir_fd);
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (unlinkat(dirfd(dir), e->d_name, 0) == 0) continue;
    if (errno == EISDIR || errno == EPERM) subdirs.emplace_back(e->d_name);
  }
  for (const std::string& name : subdirs) {
    // Deep enough for any real temporary tree; a deeper one is left.
    if (depth < 64) {
      int sub = openat(dirfd(dir), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) remove_contents(sub, depth + 1);
    }
    unlinkat(dirfd(dir), name.c_str(), AT_REMOVEDIR);
  }
  closedir(dir);
}

// Adds (or replaces) name=value in the child's environment.
void set_child_env(LaunchPlan& plan, const std::string& name, const std::string& value) {
  if (plan.envp.empty())
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) plan.env_storage.emplace_back(*e);
  const std::string prefix = name + "=";
  auto& env = plan.env_storage;
  for (auto it = env.begin(); it != env.end();) {
    if (it->compare(0, prefix.size(), prefix) == 0)
      it = env.erase(it);
    else
      ++it;
  }
  env.push_back(prefix + value);
  plan.envp.clear();
  for (auto& kv : env) plan.envp.push_back(kv.data());
  plan.envp.push_back(nullptr);
}

}  // namespace

SUP_CHILD_CODE int confine_child(const ChildConfine& c, int pdeath_signal, pid_t host_pid, const char** step) {
  for (size_t i = 0; i < c.rlimit_count; ++i) {
    if (syscall(SYS_prlimit64, 0, c.rlimits[i].resource, &c.rlimits[i].value, nullptr) != 0) {
      *step = c.rlimits[i].step;
      return errno;
    }
  }
  // Raw calls: glibc's wrappers would make every thread of the host
  // change its ids too (the setxid broadcast), this child being no thread.
  if (c.set_groups && syscall(SYS_setgroups, c.group_count, c.groups) != 0) {
    *step = "groups: setgroups";
    return errno;
  }
  if (c.gid >= 0 && syscall(SYS_setresgid, c.gid, c.gid, c.gid) != 0) {
    *step = "group: setresgid";
    return errno;
  }
  if (c.uid >= 0 && syscall(SYS_setresuid, c.uid, c.uid, c.uid) != 0) {
    *step = "user: setresuid";
    return errno;
  }
  if (c.changes_ids() && pdeath_signal != 0) {
    if (syscall(SYS_prctl, PR_SET_PDEATHSIG, pdeath_signal, 0, 0, 0) != 0) {
      *step = "prctl(PR_SET_PDEATHSIG)";
      return errno;
    }
    if (syscall(SYS_getppid) != host_pid) syscall(SYS_exit_group, 127);
  }
  if (c.no_new_privs && syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *step = "sandbox: prctl(PR_SET_NO_NEW_PRIVS)";
    return errno;
  }
  if (c.ruleset_fd >= 0) {
    if (syscall(SYS_landlock_restrict_self, c.ruleset_fd, 0) != 0) {
      *step = "sandbox: landlock_restrict_self";
      return errno;
    }
    syscall(SYS_close, c.ruleset_fd);
  }
  if (c.filter != nullptr && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, c.filter) != 0) {
    *step = "sandbox: seccomp";
    return errno;
  }
  return 0;
}

Confinement::~Confinement() { remove_tmp(); }

const char* Confinement::limit_hit(const siginfo_t& status, const struct rusage& usage, ChildCgroup* cgroup) const noexcept {
  return limits_ ? limits_->limit_hit(status, usage, cgroup) : nullptr;
}

void Confinement::remove_tmp() noexcept {
  if (tmp_.empty() || owner_ != getpid()) return;
  try {
    int fd = open(tmp_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) remove_contents(fd, 0);
    rmdir(tmp_.c_str());
  } catch (...) {
    // Out of memory for a name: what is left stays.
  }
  tmp_.clear();
}

void Confinement::render() {
  std::string json = "{";
  if (limits_) limits_->append_json(json);
  // Limits::append_json writes ", key: ..." for each: the first comma goes.
  if (json.compare(0, 3, "{, ") == 0) json.erase(1, 2);
  if (!rest_.empty()) {
    if (json.size() > 1) json += ", ";
    json += rest_;
  }
  json += "}";
  json_ = std::move(json);
}

void Confinement::fall_back_to_group(const std::string& why) noexcept {
  if (!limits_) return;
  try {
    limits_->fall_back_to_group(why);
    render();
  } catch (...) {
    // Out of memory: the spawn's "confined" is all there is to say.
  }
}

ConfinePlan::ConfinePlan(const ConfineSpec& spec, LaunchPlan& plan, ChildCgroup* cgroup, int terminal_fd,
                         const std::string& contain_fallback)
    : kept_(std::make_unique<Confinement>()) {
  credentials_ = resolve_credentials(spec);
  // A limit's signal is how it ends the child and how the result knows it
  // did: an ignored SIGXFSZ leaves a write failing with EFBIG and a
  // program that goes on, an ignored SIGXCPU a SIGKILL a second later. So
  // the signal of a limit the spec sets starts at its default even with
  // "keep_ignored_signals"; a program that ignores it itself still may.
  if (spec.limits.cpu_seconds) plan.signals.reset |= uint64_t{1} << (SIGXCPU - 1);
  if (spec.limits.file_bytes) plan.signals.reset |= uint64_t{1} << (SIGXFSZ - 1);
  const uid_t uid = child_uid(credentials_);
  // The sandbox's and the user's entries; the limits' come first (render).
  std::string& json = kept_->rest_;
  if (spec.limits.any()) {
    kept_->limits_ = std::make_unique<Limits>(spec.limits, cgroup, uid == 0, contain_fallback);
    rlimits_ = kept_->limits_->rlimits();
    group_rlimits_ = kept_->limits_->group_rlimits();
  }
  std::vector<std::string> extra_write;
  if (spec.sandbox.tmp) {
    // The directory's name: this prefix and six characters mkdtemp picks
    // (it replaces the six X's its template must end in).
    static constexpr char kTmpPrefix[] = "/sup-tmp-";
    constexpr size_t kMkdtempSuffix = 6;
    const char* env = getenv("TMPDIR");
    const std::string base = env != nullptr && env[0] == '/' ? env : "/tmp";
    std::string pattern = base + kTmpPrefix;
    pattern.append(kMkdtempSuffix, 'X');
    if (mkdtemp(pattern.data()) == nullptr) {
      int err = errno;
      throw LaunchError{-err, "sandbox.tmp: mkdtemp in " + quoted(base) + ": " + errno_text(err)};
    }
    kept_->tmp_ = pattern;
    kept_->owner_ = getpid();
    // Made by the host, 0700: the child's own once it runs as another user.
    if (credentials_.uid || credentials_.gid) {
      if (chown(pattern.c_str(), credentials_.uid ? *credentials_.uid : static_cast<uid_t>(-1),
                credentials_.gid ? *credentials_.gid : static_cast<gid_t>(-1)) != 0) {
        int err = errno;
        throw LaunchError{-err, "sandbox.tmp: chown " + quoted(pattern) + ": " + errno_text(err)};
      }
    }
    extra_write.push_back(pattern);
    set_child_env(plan, "TMPDIR", pattern);
  }
  if (spec.sandbox.given) {
    sandbox_ = std::make_unique<Sandbox>(spec.sandbox, extra_write, terminal_fd);
    sandbox_->append_json(json);
    if (!kept_->tmp_.empty()) {
      json.pop_back();
      json += ", \"tmp\": ";
      append_json_string(json, kept_->tmp_);
      json += "}";
    }
    child_.no_new_privs = true;
    child_.ruleset_fd = sandbox_->ruleset_fd();
    child_.filter = sandbox_->filter();
  }
  if (credentials_.any()) {
    if (!json.empty()) json += ", ";
    json += "\"user\": {\"uid\": ";
    if (credentials_.uid) append_decimal(json, static_cast<int64_t>(*credentials_.uid)); else json += "null";
    json += ", \"gid\": ";
    if (credentials_.gid) append_decimal(json, static_cast<int64_t>(*credentials_.gid)); else json += "null";
    json += ", \"groups\": ";
    if (credentials_.groups) {
      json += "[";
      for (size_t i = 0; i < credentials_.groups->size(); ++i) {
        if (i > 0) json += ", ";
        append_decimal(json, static_cast<int64_t>((*credentials_.groups)[i]));
      }
      json += "]";
    } else {
      json += "null";
    }
    json += "}";
  }
  kept_->render();

  child_.rlimits = rlimits_.data();
  child_.rlimit_count = rlimits_.size();
  child_.group_rlimits = group_rlimits_.data();
  child_.group_rlimit_count = group_rlimits_.size();
  if (credentials_.groups) {
    groups_ = *credentials_.groups;
    child_.set_groups = true;
    child_.groups = groups_.data();
    child_.group_count = groups_.size();
  }
  if (credentials_.gid) child_.gid = static_cast<long>(*credentials_.gid);
  if (credentials_.uid) child_.uid = static_cast<long>(*credentials_.uid);
}

int ConfinePlan::ruleset_fd() const noexcept { return sandbox_ ? sandbox_->ruleset_fd() : -1; }

}  // namespace sup
