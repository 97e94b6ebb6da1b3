#include "sentinel.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

#include "launch.hpp"
#include "sup.h"

#ifndef SUP_LIBEXECDIR
#define SUP_LIBEXECDIR "/usr/local/libexec"
#endif

namespace sup {
namespace {

constexpr const char* kProgram = "sup-sentinel";

// The engine's end of the socket, for the fork handler: a forked child
// must not keep the sentinel from seeing its host's death.
std::atomic<int> g_ours{-1};

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }


// A close-on-exec pair above stdio, the engine's end with room for records
// while the sentinel is between its reads (it reads in batches): as much as
// net.core.wmem_max allows. False, with nothing open, if it cannot.
bool make_pair(UniqueFd& ours, UniqueFd& theirs) noexcept {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) return false;
  try {
    ours = above_stdio(UniqueFd(fds[0]));
    theirs = above_stdio(UniqueFd(fds[1]));
  } catch (...) {
    ours.reset();
    theirs.reset();
    if (fds[0] > 2) close(fds[0]);
    if (fds[1] > 2) close(fds[1]);
    return false;
  }
  int room = 4 << 20;
  setsockopt(ours.get(), SOL_SOCKET, SO_SNDBUF, &room, sizeof room);
  return true;
}

}  // namespace

Sentinel::Sentinel() noexcept {
  if (make_pair(ours_, theirs_)) g_ours.store(ours_.get(), std::memory_order_release);
}

Sentinel::~Sentinel() {
  if (g_ours.exchange(-1) != ours_.get()) {
    // Closed by the fork handler: the number may be another's by now.
    (void)ours_.release();
    return;
  }
  if (!ours_.valid()) return;
  send("q", 1);
  // Waits, briefly, for the sentinel to go: a host that is itself a
  // contained child would otherwise see it as a process left behind.
  shutdown(ours_.get(), SHUT_WR);
  pollfd gone{ours_.get(), POLLIN, 0};
  while (poll(&gone, 1, 100) < 0 && errno == EINTR) {
  }
}

void Sentinel::close_in_forked_child() noexcept {
  int fd = g_ours.exchange(-1);
  if (fd >= 0) close(fd);
}

void Sentinel::abandon() noexcept {
  (void)ours_.release();
  theirs_.reset();
}

std::string Sentinel::program_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&sup_version), &info) != 0 && info.dli_fname != nullptr) {
    std::string lib = info.dli_fname;
    size_t slash = lib.rfind('/');
    if (slash != std::string::npos) {
      std::string beside = lib.substr(0, slash + 1) + kProgram;
      if (executable(beside)) return beside;
    }
  }
  std::string installed = std::string(SUP_LIBEXECDIR) + "/" + kProgram;
  return executable(installed) ? installed : std::string();
}

bool Sentinel::launch_program(ChildStack& stack, int dev_null, int theirs) noexcept {
  try {
    LaunchPlan plan;
    plan.exec_path = program_path();
    if (plan.exec_path.empty()) return false;
    plan.argv0 = plan.exec_path;
    plan.argv_storage = {kProgram, std::to_string(getpid())};
    for (auto& arg : plan.argv_storage) plan.argv.push_back(arg.data());
    plan.argv.push_back(nullptr);
    // Not tied to the cloning thread's life: a host that dies while the
    // sentinel starts must still find it running.
    plan.die_with_host = false;
    plan.fds = ChildFdPlan(ChildStdio{{theirs, dev_null, dev_null}}.fd, {});
    Launched first_half = launch(plan, stack);
    // It forks and exits at once; the second half is nobody's child here.
    siginfo_t info{};
    while (syscall(SYS_waitid, P_PIDFD, first_half.pidfd.get(), &info, WEXITED | __WALL, nullptr) < 0 &&
           errno == EINTR) {
    }
    return info.si_code == CLD_EXITED && info.si_status == 0;
  } catch (...) {
    return false;
  }
}

void Sentinel::start(ChildStack& stack, int dev_null) noexcept {
  if (!theirs_.valid()) return;
  running_.store(launch_program(stack, dev_null, theirs_.get()), std::memory_order_release);
  // The sentinel holds its end; ours would keep it from ever seeing EOF.
  theirs_.reset();
}

bool Sentinel::restart(ChildStack& stack, int dev_null) noexcept {
  // From here on, spawns go to the spawner thread, whose clones
  // PR_SET_PDEATHSIG ties to the host.
  running_.store(false, std::memory_order_release);
  if (!ours_.valid()) return false;
  UniqueFd ours, theirs;
  if (!make_pair(ours, theirs)) return false;
  if (!launch_program(stack, dev_null, theirs.get())) return false;
  theirs.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The number stays; the old socket, dead, goes with it.
    if (dup3(ours.get(), ours_.get(), O_CLOEXEC) < 0) return false;
    generation_.fetch_add(1, std::memory_order_acq_rel);
    for (pid_t pgid : groups_) send_group('=', pgid);
    for (const std::string& dir : dirs_) send_dir(dir);
  }
  running_.store(true, std::memory_order_release);
  return true;
}

void Sentinel::send(const char* record, size_t len) noexcept {
  if (!ours_.valid()) return;
  int saved = errno;
  while (::send(ours_.get(), record, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
  errno = saved;
}

void Sentinel::send_group(char tag, pid_t pgid) noexcept {
  char record[24];
  int n = snprintf(record, sizeof record, "%c%d", tag, static_cast<int>(pgid));
  send(record, static_cast<size_t>(n));
}

void Sentinel::watch_group(pid_t pgid) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    groups_.insert(pgid);
  } catch (...) {
  }
  send_group('+', pgid);
}

void Sentinel::note_group(pid_t pgid, unsigned seen) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    groups_.insert(pgid);
  } catch (...) {
  }
  if (generation_.load(std::memory_order_relaxed) != seen) send_group('=', pgid);
}

void Sentinel::forget_group(pid_t pgid) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  groups_.erase(pgid);
  send_group('-', pgid);
}

void Sentinel::send_dir(const std::string& path) noexcept {
  try {
    std::string record = "c" + path;
    send(record.data(), record.size());
  } catch (...) {
  }
}

void Sentinel::watch_dir(const std::string& path) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  send_dir(path);
  try {
    dirs_.push_back(path);
  } catch (...) {
  }
}

}  // namespace sup
