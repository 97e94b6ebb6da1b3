// Whether the child waits for input it cannot get: a process of its tree
// asleep reading the child's stdin file, or stopped by SIGTTIN or SIGTTOU.
// The verdict kept between looks at /proc (proc_look.hpp), which come only
// when asked ("input_wait_timeout_ms", or sup_input_wanted called once): the
// loop looks after output has gone quiet, never on a path that moves bytes.
// "tty_stop_timeout_ms" asks only about the main process's stop on its
// terminal, which waitid tells without /proc (tty_stop.hpp).
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "clock.hpp"
#include "proc_look.hpp"
#include "tty_stop.hpp"

namespace sup {

// One child's input-wait watch. Locking: everything but the atomics is
// under mu_, which a look holds while it reads /proc (milliseconds at
// most, a standing look a read per thread); the loop only ever try_locks it, so a caller looking in
// sup_input_wanted never stalls the loop. The inputs a look compares
// (output count, the tree's identity) are passed in by the process.
class InputWait {
 public:
  // How long after the last output byte the first look comes, and between
  // looks while quiet. A reader must be seen asleep, not woken, across two
  // looks at least kSettle apart before it counts.
  static constexpr Nanos kQuiet = 30 * kNanosPerMs;
  static constexpr Nanos kInterval = 50 * kNanosPerMs;
  static constexpr Nanos kSettle = 40 * kNanosPerMs;
  // A reader given input (by the host, or seen woken) this recently is
  // being fed, not waiting.
  static constexpr Nanos kFedWindow = 250 * kNanosPerMs;
  // Quiet (no output read, no input written) for kBrisk: the loop's looks
  // come less often, each half the quiet time so far after the last, at
  // most kMaxGap apart, on kGrid ticks; but kInterval apart again while a
  // reader seen is settling.
  static constexpr Nanos kBrisk = 1000 * kNanosPerMs;
  static constexpr Nanos kMaxGap = 4000 * kNanosPerMs;
  static constexpr Nanos kGrid = 100 * kNanosPerMs;
  // In group mode, how old the scan of every process (for members of the
  // group that are not descendants of the main process) may be.
  static constexpr Nanos kGroupScanEvery = 1000 * kNanosPerMs;
  // A caller asking again this soon gets the last look's verdict.
  static constexpr Nanos kMinGap = 5 * kNanosPerMs;

  // timeout: "input_wait_timeout_ms"; tty_stop_timeout and pty: TtyStop's.
  InputWait(Nanos timeout, Nanos tty_stop_timeout, bool pty) noexcept
      : timeout_(timeout), asked_(timeout > 0), tty_stop_(tty_stop_timeout, pty) {}
  InputWait(const InputWait&) = delete;
  InputWait& operator=(const InputWait&) = delete;

  // Before the spawn, while nothing else can see the process.
  void set_stdin(const StdinFile& file) noexcept {
    stdin_ = file;
    if (asked()) settle_reach();
  }

  // ---- Any thread -------------------------------------------------------
  // The host wrote to the child's stdin, or closed it (sup_input_*).
  void note_input() noexcept;
  // sup_input_wanted was called: from now on the loop looks too. Returns
  // true the first time.
  bool ask() noexcept {
    if (asked()) return false;
    settle_reach();
    return !asked_.exchange(true, std::memory_order_acq_rel);
  }
  bool asked() const noexcept { return asked_.load(std::memory_order_acquire); }
  Nanos timeout() const noexcept { return timeout_; }
  // The loop has something to do for the child: looks, or stop checks.
  bool watching() const noexcept { return asked() || tty_stop_.on(); }

  // A look at the tree of main process pid (cgroup_dir: its cgroup's
  // directory fd in cgroup mode, else -1 for its process group), with
  // output_total the bytes read from its streams so far. Returns 1 waiting,
  // 0 not, SUP_EPERM where sup cannot see. blocking: waits for a look
  // under way on another thread (a caller); else returns -1 at once if
  // there is one (the loop).
  int look(GroupIndex& groups, pid_t pid, int cgroup_dir, uint64_t output_total, bool blocking);
  // The loop's first step of a look: the last verdict (1, 0, SUP_EPERM)
  // when nothing in the tree ran since the last whole look (and nothing
  // was read or written), else kWholeLook; -1 while a caller looks.
  static constexpr int kWholeLook = -2;
  int look_if_still(uint64_t output_total);
  // After a look: how long to wait before a second one can tell whether a
  // reader seen for the first time stays asleep (0: no second look needed).
  Nanos second_look_in() noexcept;

  // ---- Loop thread (lock-free) ------------------------------------------
  // When the loop has something to do next: the earlier of look_due and
  // the stop check's (kNever for neither).
  Nanos next_look(Nanos last_output) const noexcept {
    return std::min(look_due(last_output), tty_stop_.next_check(last_output));
  }
  // When the loop should look at /proc next (kNever when not asked): kQuiet
  // after the last output, kInterval after the last look, and the
  // timeout's end while waiting.
  Nanos look_due(Nanos last_output) const noexcept;
  // The main process's stop on its terminal (tty_stop.hpp), under
  // Process::work_mu_: when the next check is due, and a check's finding.
  Nanos stop_check_due(Nanos last_output) const noexcept { return tty_stop_.next_check(last_output); }
  void stop_checked(bool stopped_on_terminal, Nanos now) noexcept { tty_stop_.checked(stopped_on_terminal, now); }
  // A limit has run out: waiting for input since at least timeout ago, or
  // the main process stopped on its terminal for tty_stop_timeout.
  bool timed_out(Nanos now) const noexcept;
  // The result's "waiting_for_input" for a child that ended at ended_at
  // (the first signal sent to it, or its exit as the loop saw it): true
  // when the last stop check found the main process stopped on its
  // terminal (TtyStop::stopped_at_end); else nullopt
  // when not asked or sup could not see, or when no look came before an
  // end sup or a caller caused; else whether the last look found it
  // waiting with no output read and no input written since.
  std::optional<bool> at_end(Nanos ended_at, Nanos last_output, bool exited_by_itself) noexcept;

 private:
  // Takes mu_ (blocking) or tries to; false when a caller holds it.
  bool lock_for_look(std::unique_lock<std::mutex>& lock, bool blocking) noexcept;
  // Under mu_: the last verdict, if it still stands, else kWholeLook.
  int stands(uint64_t output_total, Nanos now);
  // Under mu_: the verdict from a look's findings.
  void judge(InputSeen seen, std::vector<std::pair<pid_t, uint64_t>>& readers, uint64_t output_total, Nanos now);
  int verdict() const noexcept;
  // Once asked, before any look: whether the tree can wait at all. A stdin
  // that never blocks a reader (none: /dev/null, a regular file) leaves
  // only a stop by SIGTTIN or SIGTTOU, which takes a controlling terminal
  // in the child's session: with none in the host's (the child shares it
  // without "pty"), nothing can wait and no look is ever made.
  void settle_reach() noexcept {
    if (stdin_.kind == StdinFile::Kind::none && !session_has_terminal())
      cannot_wait_.store(true, std::memory_order_release);
  }
  bool cannot_wait() const noexcept { return cannot_wait_.load(std::memory_order_acquire); }

  const Nanos timeout_;
  StdinFile stdin_;  // set before the spawn, then immutable
  std::atomic<bool> asked_;
  std::atomic<bool> cannot_wait_{false};  // settle_reach's verdict, set once
  std::atomic<uint64_t> inputs_{0};       // host writes and closes
  std::atomic<Nanos> last_input_at_{0};
  // Written under mu_ at each look, read lock-free by the loop's deadline
  // arithmetic: when the last look was, and since when the child has been
  // waiting (0: it is not).
  std::atomic<Nanos> look_at_{0};
  std::atomic<Nanos> waiting_since_{0};
  std::atomic<bool> settling_{false};  // state_ is candidate

  std::mutex mu_;
  enum class State { unknown, not_waiting, candidate, waiting, blind };
  State state_ = State::unknown;
  Nanos last_look_at_ = 0;
  Nanos since_ = 0;         // candidate or waiting since this look
  Nanos last_fed_at_ = 0;   // a look saw a reader woken since the previous
  uint64_t output_total_ = 0;
  uint64_t inputs_seen_ = 0;
  // The reading threads of the last look, and how long each had run
  // (schedstat): any change means it woke.
  std::vector<std::pair<pid_t, uint64_t>> readers_;
  // Group mode: members of the group the last scan of every process found
  // outside the main process's descendants.
  std::vector<pid_t> strays_;
  Nanos strays_scanned_at_ = 0;  // when the scan they came from was taken
  // The last whole look (not one that found nothing had run): when, and
  // every thread it saw with its run, sorted by tid.
  Nanos full_look_at_ = 0;
  std::vector<ThreadRun> last_threads_;
  // What the last whole look saw, and every thread of the tree with its
  // run then when it saw all of it (else empty): while none of them runs,
  // a look needs no more (none_ran).
  InputSeen seen_ = InputSeen::elsewhere;
  std::vector<ThreadRun> tree_;

  // "tty_stop_timeout_ms": its own state and locking (tty_stop.hpp).
  TtyStop tty_stop_;
};

}  // namespace sup
