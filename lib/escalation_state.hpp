// How far sup has gone in ending one child: why (the cause), the stage of
// the interrupt-then-kill escalation and when its kill comes, whether a
// SIGKILL reached anyone, how long the end waits for pipes and tee copies,
// and the signals recorded for the result. Pure state on times given to it:
// Process sends the signals (escalation.cpp) and tells it what went out.
#pragma once

#include <vector>

#include "clock.hpp"
#include "deadlines.hpp"
#include "spec.hpp"

namespace sup {

// How far the signals sent to the process group have gone. Never goes back.
enum class Escalation { none, interrupt_sent, kill_sent };

// Why sup ended the main process, ordered by the outcome priority: a later
// cause replaces an earlier one only if it ranks higher.
enum class Cause { none = 0, interrupted = 1, timed_out = 2, aborted = 3 };

struct SignalSent {
  int signal;
  Nanos at;  // since spawn
};

// Locking: a member of Process (escalation_). The settings (grace(),
// interrupt_signal(), on_timeout()) are immutable and read by any thread
// (sup_interrupt's first step sends the signal from the caller's). All else
// is under the process's work_mu_: the loop thread, or a caller finishing
// the process. What callers send without that lock is latched in
// CallerSignals (caller_signals.hpp) and adopted into this state under it
// (Process::adopt_caller_signals).
class EscalationState {
 public:
  // After SIGKILL to the group, how long a pipe may stay open before the
  // result is published anyway: only a process that left the group can hold
  // it then.
  static constexpr Nanos kPipeDrainAfterKill = 100 * kNanosPerMs;
  // Once the main process has exited, how long the tee copies may wait
  // without the host's fd taking any before the rest is dropped.
  static constexpr Nanos kTeeStall = 1000 * kNanosPerMs;

  // Reserves room for an interrupt and a SIGKILL up front, so that
  // recording one on the loop thread never allocates: may throw
  // std::bad_alloc, where the caller of sup_spawn gets SUP_ENOMEM.
  EscalationState(Nanos grace, int interrupt_signal, TimeoutAction on_timeout, Nanos called_at);

  Nanos grace() const noexcept { return grace_; }
  int interrupt_signal() const noexcept { return interrupt_signal_; }
  TimeoutAction on_timeout() const noexcept { return on_timeout_; }

  Escalation stage() const noexcept { return stage_; }
  bool kill_sent() const noexcept { return stage_ == Escalation::kill_sent; }
  Cause cause() const noexcept { return cause_; }
  // Which limit timed the child out; meaningful with Cause::timed_out.
  TimeoutKind timeout_kind() const noexcept { return timeout_kind_; }
  bool forced_kill() const noexcept { return forced_kill_; }
  Nanos kill_at() const noexcept { return kill_at_; }

  // A cause to end the child: kept if it outranks the one there.
  void raise(Cause cause) noexcept;
  // A limit ran out: the cause, and which limit (the first cause stands:
  // the callers only time out a child nothing else is ending).
  void time_out(TimeoutKind kind) noexcept;
  // The interrupt went out at `at` (sup's, or a caller's adopted): the kill
  // comes after the grace. Only from none: the stage never goes back.
  void interrupt_sent(Nanos at) noexcept;
  // SIGKILL went to the group (by whichever thread); delivered: it reached
  // a process (forced_kill only then). draining: the main process has
  // exited, and its pipes are waited for only briefly from now on.
  void killed(Nanos now, bool delivered, bool draining) noexcept;
  // The grace is over: the interrupt turns into SIGKILL.
  bool kill_due(Nanos now) const noexcept { return stage_ == Escalation::interrupt_sent && now >= kill_at_; }

  // The main process has exited, and the group was killed or can no longer
  // be signalled: the pipes are waited for as briefly as after a SIGKILL,
  // from the first call.
  void give_up_pipes_soon(Nanos now) noexcept;
  // Once the main process has exited: the host's fd took a tee copy (the
  // wait starts again), or the wait for the copies begins (from the first
  // call).
  void copies_progressed(Nanos now) noexcept { tee_give_up_at_ = now + kTeeStall; }
  void copies_wait_from(Nanos now) noexcept;
  // A wait of the end (pipes, copies) is over: the result is published
  // with what there is.
  bool end_waits_over(Nanos now) const noexcept;
  // The earliest of the kill and the end's waits, or kNever. draining: the
  // main process has exited (only then do the end's waits count).
  Nanos next(bool draining) const noexcept;

  // Records sig, sent at `at` (monotonic), for the result's signals_sent.
  // Never allocates for the first two; may throw std::bad_alloc after.
  void record(int sig, Nanos at);
  const std::vector<SignalSent>& signals() const noexcept { return signals_sent_; }
  // Into time order: the host's signals are adopted late (host_signal.cpp).
  void sort_signals();
  // For the result, once: the list is empty afterwards.
  std::vector<SignalSent> take_signals() noexcept { return std::move(signals_sent_); }

 private:
  const Nanos grace_;
  const int interrupt_signal_;
  const TimeoutAction on_timeout_;
  const Nanos called_at_;
  Escalation stage_ = Escalation::none;
  Cause cause_ = Cause::none;
  TimeoutKind timeout_kind_ = TimeoutKind::idle;
  Nanos kill_at_ = 0;           // when interrupt_sent turns into SIGKILL
  Nanos give_up_pipes_at_ = 0;  // after SIGKILL, how long the pipes may stay open
  Nanos tee_give_up_at_ = 0;    // after the exit, how long the tee copies may wait
  bool forced_kill_ = false;
  std::vector<SignalSent> signals_sent_;
};

}  // namespace sup
