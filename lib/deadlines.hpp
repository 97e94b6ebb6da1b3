// The clock of one child's silence and runtime: when its idle, first-output
// and max-runtime limits end, from the times it is told (the exec, each
// byte, a held-back reader's progress). It reads no clock and sends nothing,
// so that its arithmetic is tested with made-up times (deadlines_test.cpp).
#pragma once

#include "clock.hpp"

namespace sup {

// Which limit ended the child: the silence before its first byte, the
// silence after one, the runtime, or the wait for input (input_wait.cpp).
enum class TimeoutKind { idle, first_output, max_runtime, input };

// Where the silence is in the child's life: before the exec nothing is
// counted; before the first byte the first-output limit applies, if set;
// after it the idle limit.
enum class Silence { not_started, before_first_byte, after_first_byte };

// Locking: a member of Process (deadlines_). Every call is under the
// process's work_mu_ (the loop thread, or a caller reading the pipes or
// finishing the process), but launched(), which the spawner makes before
// anything else can see the process. The limits are immutable.
class Deadlines {
 public:
  // Limits in ns, 0 for none. called_at: when sup_spawn was called, where
  // the max runtime counts from (Process's constructor says why).
  Deadlines(Nanos idle_timeout, Nanos first_output_timeout, Nanos max_runtime, Nanos called_at) noexcept
      : idle_timeout_(idle_timeout),
        first_output_timeout_(first_output_timeout),
        max_runtime_(max_runtime),
        called_at_(called_at) {}

  // The exec: the first silence counts from here, not from the call (a
  // child is not silent before it exists).
  void launched(Nanos started_at) noexcept;
  // A byte was read. Returns true when this first byte turned the
  // first-output limit into the idle limit, which may end before the
  // deadline armed: the caller arms again. (A deadline that only moves later
  // is armed again when the timer fires.)
  bool note_output(Nanos now) noexcept;
  // The child was held back by a reader (sup's own, or the host's fd for a
  // tee), not silent: its idle clock restarts, the first byte still to come.
  void note_activity(Nanos now) noexcept { last_activity_ = now; }

  Nanos last_activity() const noexcept { return last_activity_; }
  Nanos started_at() const noexcept { return started_at_; }
  Silence silence() const noexcept { return silence_; }

  // When the silence limit that applies now ends (the first-output limit
  // before the first byte, when set; else the idle limit), or kNever.
  // reader_last_read: the latest read by the reader of a held-back stream,
  // 0 for none: its reads are activity as much as the child's bytes.
  Nanos silence_deadline(Nanos reader_last_read) const noexcept;
  // Which limit silence_deadline() is.
  TimeoutKind silence_kind() const noexcept;
  // When the max runtime ends, or kNever.
  Nanos runtime_deadline() const noexcept;
  // The earlier of the two.
  Nanos next(Nanos reader_last_read) const noexcept;
  // Whether a limit is over at now, and which: the silence's when both are
  // (it is the one the child's behaviour decided).
  bool over(Nanos now, Nanos reader_last_read, TimeoutKind* kind) const noexcept;

 private:
  // The last byte read, or the last time a reader freed the child; the exec
  // until then. First in the object: a live reader's read writes it, and
  // Process::prefetch_for_read asks for its cache line.
  Nanos last_activity_ = 0;
  const Nanos idle_timeout_;
  const Nanos first_output_timeout_;
  const Nanos max_runtime_;
  const Nanos called_at_;
  Silence silence_ = Silence::not_started;
  // The exec, where the first silence is counted from.
  Nanos started_at_ = 0;
};

}  // namespace sup
