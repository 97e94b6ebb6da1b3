// The child's main process: its pid and pidfd, signals to its group, its exit status and its reap.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <uv.h>

#include <atomic>

#include "unique_fd.hpp"
#include "uv_handle.hpp"

namespace sup {

// The main process stays a zombie until the result is published: its pid,
// and so its process group's id, cannot go to a stranger meanwhile, and
// every signal to the group is safe. Its exit is seen through its pidfd
// (waitid(P_PIDFD, WNOWAIT)), never by a wait on any child.
// Threads: launched() before anyone else sees the process. The exit's
// status: the loop, or a caller finishing the process, under Process's
// work_mu_. The pidfd: read by any thread while the process is not final;
// closed (taken by Process) under Process's mu_. The signals and the
// checks marked so are async-signal-safe, for callers sending from their
// own thread (caller_signals.hpp). The pidfd's watch: the loop thread's.
class MainProcess {
 public:
  void launched(pid_t pid, UniqueFd pidfd) noexcept {
    pid_ = pid;
    pidfd_ = std::move(pidfd);
  }
  pid_t pid() const noexcept { return pid_; }
  int pidfd() const noexcept { return pidfd_.get(); }
  bool has_pidfd() const noexcept { return pidfd_.valid(); }
  // For Process to close once torn down (or keep while a caller polls it).
  UniqueFd& pidfd_slot() noexcept { return pidfd_; }
  // The loop's watch on the pidfd: made at the start, closed once the exit
  // is handled (or at the end).
  UvHandle<uv_poll_t>& watch() noexcept { return watch_; }

  // ---- Signals (async-signal-safe) ------------------------------------------
  // sig to the group and, if the main process left it, to the main process
  // through its pidfd. Returns true if it reached at least one living
  // process (a group holding only the exited main process's zombie reaches
  // nobody). answer false: the caller does not need to know, and an exited
  // main process's group is not scanned for a living member (the return is
  // then the kernel's word only).
  bool signal(int sig, bool answer) const noexcept;
  // The main process runs (not exited, not reaped by the host).
  bool running() const noexcept;
  // Not yet reaped: running, or exited and a zombie still ours. A process
  // the host reaped may have lent its pid to a stranger.
  bool unreaped() const noexcept;
  // The pidfd shows the exit (no lock taken, unlike waitid's tasklist lock,
  // which the exiting child needs for exit_notify).
  bool exit_shows() const noexcept;

  // ---- The exit (under work_mu_) ---------------------------------------------
  // Blocks until the main process has exited (after a SIGKILL): libuv made
  // the pidfd non-blocking, so a bare waitid would not wait.
  void await_exit() const noexcept;
  // Whether it has exited; if so its status and usage are kept, the zombie
  // left for reap(). The host reaped it itself (SIGCHLD ignored, or
  // waitpid(-1)): status_lost(), and its pid, so the group id, may be reused
  // at any time.
  bool exited_now() noexcept;
  bool status_lost() const noexcept { return status_lost_; }
  const siginfo_t& status() const noexcept { return status_; }
  const struct rusage& usage() const noexcept { return usage_; }

  // ---- The reap ---------------------------------------------------------------
  // The zombie is reaped (unless the host took it), once.
  void reap() noexcept;
  // Set after the reap, under Process's mu_ so that a waiter on its
  // condition cannot miss it; read without the lock by sup_release's spin.
  void mark_reaped() noexcept { reaped_.store(true, std::memory_order_release); }
  bool reaped() const noexcept { return reaped_.load(std::memory_order_acquire); }

 private:
  pid_t pid_ = 0;
  UniqueFd pidfd_;
  UvHandle<uv_poll_t> watch_;
  siginfo_t status_{};
  struct rusage usage_ {};
  bool status_lost_ = false;
  std::atomic<bool> reaped_{false};
};

}  // namespace sup
