#include "sentinel.hpp"

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
#include "sentinel_entry.hpp"

namespace sup {
namespace {

// The engine's end of the socket, for the fork handler: a forked child
// must not keep the sentinel from seeing its host's death.
std::atomic<int> g_ours{-1};


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

bool Sentinel::launch_program(ChildStack& stack, int dev_null, int theirs) noexcept {
  std::string why;
  try {
    std::vector<SentinelWay> ways = sentinel_ways(getpid(), why);
    for (const SentinelWay& way : ways) {
      if (!why.empty()) why += "; ";
      why += std::string(way.name) + " (" + way.path + "): ";
      LaunchPlan plan;
      plan.exec_path = way.path;
      plan.argv0 = plan.exec_path;
      plan.argv_storage = {kSentinelProgram, std::to_string(getpid())};
      for (auto& arg : plan.argv_storage) plan.argv.push_back(arg.data());
      plan.argv.push_back(nullptr);
      plan.env_storage = way.env;
      for (auto& kv : plan.env_storage) plan.envp.push_back(kv.data());
      if (!plan.envp.empty()) plan.envp.push_back(nullptr);
      // Not tied to the cloning thread's life: a host that dies while the
      // sentinel starts must still find it running.
      plan.die_with_host = false;
      plan.fds = ChildFdPlan(ChildStdio{{theirs, dev_null, dev_null}}.fd, {});
      Launched first_half{};
      try {
        first_half = launch(plan, stack);
      } catch (const LaunchError& e) {
        why += e.message;
        continue;
      }
      // It forks and exits at once; the second half is nobody's child here.
      siginfo_t info{};
      while (syscall(SYS_waitid, P_PIDFD, first_half.pidfd.get(), &info, WEXITED | __WALL, nullptr) < 0 &&
             errno == EINTR) {
      }
      if (info.si_code == CLD_EXITED && info.si_status == way.ready_status) {
        std::lock_guard<std::mutex> lock(mu_);
        why_.clear();
        return true;
      }
      why += info.si_code == CLD_EXITED ? "exited with " + std::to_string(info.si_status)
                                        : "killed by signal " + std::to_string(info.si_status);
    }
  } catch (...) {
    why += (why.empty() ? "" : "; ") + std::string("out of memory");
  }
  try {
    std::lock_guard<std::mutex> lock(mu_);
    why_ = why;
  } catch (...) {
  }
  return false;
}

void Sentinel::set_state(State s) noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_.store(s, std::memory_order_release);
  }
  started_.notify_all();
}

void Sentinel::start(ChildStack& stack, int dev_null) noexcept {
  if (!theirs_.valid()) {
    not_started("no socket pair for it (out of descriptors)");
    return;
  }
  set_state(launch_program(stack, dev_null, theirs_.get()) ? State::running : State::absent);
  // The sentinel holds its end; ours would keep it from ever seeing EOF.
  theirs_.reset();
}

void Sentinel::not_started(const char* why) noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    try {
      why_ = why;
    } catch (...) {
    }
  }
  set_state(State::absent);
}

void Sentinel::wait_started() noexcept {
  if (state_.load(std::memory_order_acquire) != State::starting) return;
  std::unique_lock<std::mutex> lock(mu_);
  started_.wait(lock, [this] { return state_.load(std::memory_order_acquire) != State::starting; });
}

HostDeath Sentinel::coverage() const noexcept {
  State s = state_.load(std::memory_order_acquire);
  // A restart hands the new sentinel every record listed here.
  return s == State::running || s == State::restarting ? HostDeath::tree : HostDeath::main_process;
}

std::string Sentinel::absence() const {
  std::lock_guard<std::mutex> lock(mu_);
  return why_.empty() ? std::string("the sentinel could not be started") : why_;
}

bool Sentinel::restart(ChildStack& stack, int dev_null) noexcept {
  // From here on, spawns go to the spawner thread, whose clones
  // PR_SET_PDEATHSIG ties to the host.
  state_.store(State::restarting, std::memory_order_release);
  UniqueFd ours, theirs;
  if (!ours_.valid() || !make_pair(ours, theirs) || !launch_program(stack, dev_null, theirs.get())) {
    state_.store(State::absent, std::memory_order_release);
    return false;
  }
  theirs.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The number stays; the old socket, dead, goes with it.
    if (dup3(ours.get(), ours_.get(), O_CLOEXEC) < 0) {
      state_.store(State::absent, std::memory_order_release);
      return false;
    }
    generation_.fetch_add(1, std::memory_order_acq_rel);
    for (pid_t pgid : groups_) send_group('=', pgid);
    for (const std::string& dir : dirs_) send_dir(dir);
  }
  state_.store(State::running, std::memory_order_release);
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
