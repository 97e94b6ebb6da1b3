// Host death: a small process outside the host that ends every supervised
// tree when the host dies, however it dies (SIGKILL included) or execs.
//
// The engine keeps one end of a SOCK_SEQPACKET socket pair (close-on-exec,
// so an exec counts as a death); the sentinel holds the other. It runs as
// sup-sentinel, a tiny program installed in libexecdir (or found next to
// the library), or, where libsup is linked into the host's executable or
// has no program beside it, as a copy of the library's own code in a
// fresh process (sentinel_entry.hpp says how and why). It is started
// once per engine from the spawner thread by the same vfork-style clone as a
// child (nothing of a large host's memory is copied), execs, forks once and
// the first half exits: the sentinel is then nobody's child in the host (a
// waitpid(-1) never sees it) and leads a session of its own (kill(0, ...)
// and the terminal's signals never reach it). It needs nothing of the
// library once started, so it outlives dlclose.
//
// The sentinel reads records in batches (a record wakes nobody; the
// host's end closing does), so registering costs a spawn one send.
// Each message is one record: "+PGID" a group-mode child's process group
// (sent by the child itself before it execs, or by the spawner thread right
// after the clone), "=PGID" the same unless listed already (the engine's
// own list, sent again to a restarted sentinel), "-PGID" that group
// ended (sent just before its leader is reaped, while the zombie still pins
// the id), "cPATH" a host cgroup directory sup made, "q" the engine ended
// cleanly (then the engine shuts its end down and waits, at most 100 ms,
// for the sentinel to close its own). At end of file without "q" the sentinel writes cgroup.kill of
// every directory, sends SIGKILL to every group still listed, waits for the
// directories to empty, removes them depth first, and exits.
//
// A sentinel that dies while the host lives (killed by hand, by the OOM
// killer) is started again: the loop watches the engine's end for the
// hang-up, and restart() hands the new sentinel every group and directory
// still listed here. The engine's end keeps its descriptor number (dup3), so
// a child cloned meanwhile sends its record to the old socket or the new,
// never to another file; a record lost to the old one is sent again
// (note_group).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "unique_fd.hpp"

namespace sup {

class ChildStack;

// Whether a child spawned now dies with the host with its whole tree (the
// sentinel holds, or is being restarted to hold, its record) or only its
// main process (PR_SET_PDEATHSIG): the result's "host_death".
enum class HostDeath { tree, main_process };

class Sentinel {
 public:
  // Makes the socket pair; without one, host death is covered by
  // PR_SET_PDEATHSIG alone.
  Sentinel() noexcept;
  // Says "q" and closes: the engine has ended every child itself.
  ~Sentinel();
  Sentinel(const Sentinel&) = delete;
  Sentinel& operator=(const Sentinel&) = delete;

  // Spawner thread, once: starts the sentinel and waits until the first
  // half has exited. On failure (no way found, out of processes) the
  // engine goes on without it, and absence() says why.
  void start(ChildStack& stack, int dev_null) noexcept;
  // Spawner thread, instead of start() when it cannot even try.
  void not_started(const char* why) noexcept;
  // Any thread: returns once start() or not_started() has run. A host
  // directory is made only after (ChildCgroup::create), so that the
  // sentinel holds its record before it exists.
  void wait_started() noexcept;
  // After wait_started(): what a child spawned now is covered by.
  HostDeath coverage() const noexcept;
  // After wait_started(), with coverage() main_process: why, for a
  // "require_sentinel" refusal.
  std::string absence() const;
  // Loop thread, once the engine's end has hung up (the sentinel died):
  // starts a new one on a new socket, moves that socket to the engine's
  // descriptor number and sends it every group and directory listed. False
  // if it could not; running() is false from the call on, and true again
  // once the new one holds its end.
  bool restart(ChildStack& stack, int dev_null) noexcept;
  // Bumped by each restart. A caller reads it before a clone whose child
  // registers its own group, and hands it to note_group after.
  unsigned generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  // Any thread: the sentinel has started and holds its end.
  bool running() const noexcept { return state_.load(std::memory_order_acquire) == State::running; }
  // The engine's end, for a child to register its own group before it
  // execs (launch.cpp); -1 without a sentinel.
  int fd() const noexcept { return ours_.get(); }
  // fork(2)'s child handler: closes this process's copy of the engine's
  // end, so that the parent's death is still seen. Async-signal-safe.
  static void close_in_forked_child() noexcept;
  // In a forked child: forgets the descriptors without closing them (the
  // fork handler closed ours; the numbers may be reused).
  void abandon() noexcept;

  // Any thread. One send each, never blocking: a sentinel that does not
  // read (stopped) costs a record, never the host's progress.
  void watch_group(pid_t pgid) noexcept;
  // A child that sent its own "+PGID" (launch.cpp) has exec'd: lists the
  // group, and sends it again ("=") if a restart since `seen` (generation())
  // may have lost the child's record with the old socket.
  void note_group(pid_t pgid, unsigned seen) noexcept;
  void forget_group(pid_t pgid) noexcept;
  // A host cgroup directory, sent before it is made (ChildCgroup::create,
  // after wait_started()): a host killed in between leaves nothing behind,
  // the sentinel finds the directory made or not there.
  void watch_dir(const std::string& path) noexcept;

 private:
  // Starts the sentinel with `theirs` as its end, each way of
  // sentinel_ways() in turn; true once a first half has exited with its
  // way's ready status. Otherwise why_ says what each way did.
  bool launch_program(ChildStack& stack, int dev_null, int theirs) noexcept;
  enum class State { starting, running, restarting, absent };
  void set_state(State s) noexcept;
  // Under mu_ (or before any other thread can send).
  void send(const char* record, size_t len) noexcept;
  void send_group(char tag, pid_t pgid) noexcept;
  void send_dir(const std::string& path) noexcept;  // "cPATH"
  UniqueFd ours_;    // its number never changes while the engine lives
  UniqueFd theirs_;  // until start() has handed it over
  std::atomic<State> state_{State::starting};
  std::atomic<unsigned> generation_{0};
  // What a restarted sentinel is told. Allocation failures lose an entry,
  // never a send.
  mutable std::mutex mu_;
  std::unordered_set<pid_t> groups_;
  std::vector<std::string> dirs_;
  // Under mu_: why no sentinel runs; started_ is notified when state_
  // leaves starting.
  std::string why_;
  std::condition_variable started_;
};

}  // namespace sup
