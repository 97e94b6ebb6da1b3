// The deadlines and the escalation of a child, as pure state: made-up
// times, no child process (lib/deadlines.hpp).
#include <gtest/gtest.h>

#include "deadlines.hpp"
#include "escalation_state.hpp"

namespace {

using sup::Deadlines;
using sup::kNever;
using sup::Nanos;
using sup::Silence;
using sup::TimeoutKind;

constexpr Nanos kMs = sup::kNanosPerMs;
// A call time far from 0, so that no test passes by an accident of zeros.
constexpr Nanos kCalled = 1'000'000 * kMs;

TEST(Deadlines, NoLimitsNoDeadline) {
  Deadlines d(0, 0, 0, kCalled);
  d.launched(kCalled + 3 * kMs);
  EXPECT_EQ(d.silence_deadline(0), kNever);
  EXPECT_EQ(d.runtime_deadline(), kNever);
  EXPECT_EQ(d.next(0), kNever);
  TimeoutKind kind = TimeoutKind::input;
  EXPECT_FALSE(d.over(kNever - 1, 0, &kind));
  EXPECT_EQ(kind, TimeoutKind::input);  // untouched
}

TEST(Deadlines, IdleCountsFromTheExecNotTheCall) {
  Deadlines d(100 * kMs, 0, 0, kCalled);
  const Nanos exec = kCalled + 40 * kMs;
  d.launched(exec);
  EXPECT_EQ(d.silence(), Silence::before_first_byte);
  EXPECT_EQ(d.silence_deadline(0), exec + 100 * kMs);
  EXPECT_EQ(d.silence_kind(), TimeoutKind::idle);
}

TEST(Deadlines, IdleDeadlineMovesWithEachByte) {
  Deadlines d(100 * kMs, 0, 0, kCalled);
  d.launched(kCalled);
  TimeoutKind kind;
  EXPECT_FALSE(d.note_output(kCalled + 90 * kMs));  // no first-output limit: nothing to re-arm
  EXPECT_EQ(d.silence(), Silence::after_first_byte);
  EXPECT_EQ(d.last_activity(), kCalled + 90 * kMs);
  EXPECT_EQ(d.silence_deadline(0), kCalled + 190 * kMs);
  EXPECT_FALSE(d.over(kCalled + 150 * kMs, 0, &kind));  // past the first deadline, not the moved one
  d.note_output(kCalled + 180 * kMs);
  EXPECT_EQ(d.silence_deadline(0), kCalled + 280 * kMs);
  EXPECT_FALSE(d.over(kCalled + 279 * kMs, 0, &kind));
  ASSERT_TRUE(d.over(kCalled + 280 * kMs, 0, &kind));
  EXPECT_EQ(kind, TimeoutKind::idle);
}

TEST(Deadlines, AHeldBackReadersReadIsActivity) {
  Deadlines d(100 * kMs, 0, 0, kCalled);
  d.launched(kCalled);
  d.note_output(kCalled + 10 * kMs);
  // A reader that read later than the child's last byte keeps it alive; an
  // older read changes nothing.
  EXPECT_EQ(d.silence_deadline(kCalled + 50 * kMs), kCalled + 150 * kMs);
  EXPECT_EQ(d.silence_deadline(kCalled + 5 * kMs), kCalled + 110 * kMs);
  // A resume restarts the clock without being a byte.
  d.note_activity(kCalled + 70 * kMs);
  EXPECT_EQ(d.silence_deadline(0), kCalled + 170 * kMs);
}

TEST(Deadlines, FirstOutputLimitUntilTheFirstByte) {
  Deadlines d(50 * kMs, 300 * kMs, 0, kCalled);
  const Nanos exec = kCalled + 20 * kMs;
  d.launched(exec);
  EXPECT_EQ(d.silence_kind(), TimeoutKind::first_output);
  EXPECT_EQ(d.silence_deadline(0), exec + 300 * kMs);
  // Activity that is not a byte does not end the first-output phase.
  d.note_activity(exec + 100 * kMs);
  EXPECT_EQ(d.silence_kind(), TimeoutKind::first_output);
  EXPECT_EQ(d.silence_deadline(0), exec + 300 * kMs);
  TimeoutKind kind;
  ASSERT_TRUE(d.over(exec + 300 * kMs, 0, &kind));
  EXPECT_EQ(kind, TimeoutKind::first_output);
}

TEST(Deadlines, TheFirstByteTurnsToTheIdleLimitAndAsksToRearm) {
  Deadlines d(50 * kMs, 300 * kMs, 0, kCalled);
  d.launched(kCalled);
  // The idle deadline (byte + 50 ms) is sooner than the armed first-output
  // one (exec + 300 ms): the caller must arm again.
  EXPECT_TRUE(d.note_output(kCalled + 10 * kMs));
  EXPECT_EQ(d.silence_kind(), TimeoutKind::idle);
  EXPECT_EQ(d.silence_deadline(0), kCalled + 60 * kMs);
  // Only the first byte asks.
  EXPECT_FALSE(d.note_output(kCalled + 20 * kMs));
  EXPECT_EQ(d.silence_deadline(0), kCalled + 70 * kMs);
}

TEST(Deadlines, FirstOutputWithoutIdleEndsSilenceLimits) {
  Deadlines d(0, 300 * kMs, 0, kCalled);
  d.launched(kCalled);
  EXPECT_EQ(d.silence_deadline(0), kCalled + 300 * kMs);
  // No idle limit to turn to: no deadline sooner, nothing to re-arm.
  EXPECT_FALSE(d.note_output(kCalled + 10 * kMs));
  EXPECT_EQ(d.silence_deadline(0), kNever);
}

TEST(Deadlines, MaxRuntimeCountsFromTheCallAndCapsTheIdleClock) {
  Deadlines d(100 * kMs, 0, 250 * kMs, kCalled);
  d.launched(kCalled + 30 * kMs);
  EXPECT_EQ(d.runtime_deadline(), kCalled + 250 * kMs);
  // A child that writes every 50 ms is never idle, but runs out of time.
  TimeoutKind kind;
  for (Nanos t = kCalled + 50 * kMs; t < kCalled + 250 * kMs; t += 50 * kMs) {
    d.note_output(t);
    EXPECT_FALSE(d.over(t, 0, &kind)) << t;
  }
  EXPECT_EQ(d.next(0), kCalled + 250 * kMs);
  ASSERT_TRUE(d.over(kCalled + 250 * kMs, 0, &kind));
  EXPECT_EQ(kind, TimeoutKind::max_runtime);
}

TEST(Deadlines, TheEarlierLimitIsTheNextDeadline) {
  Deadlines d(100 * kMs, 0, 1000 * kMs, kCalled);
  d.launched(kCalled);
  EXPECT_EQ(d.next(0), kCalled + 100 * kMs);
  d.note_output(kCalled + 950 * kMs);
  EXPECT_EQ(d.next(0), kCalled + 1000 * kMs);
}

TEST(Deadlines, SilenceWinsWhenBothAreOver) {
  // Both limits over at once (the loop woke late): the child's silence is
  // what is reported, as the idle limit is looked at first.
  Deadlines d(100 * kMs, 0, 100 * kMs, kCalled);
  d.launched(kCalled);
  TimeoutKind kind;
  ASSERT_TRUE(d.over(kCalled + 500 * kMs, 0, &kind));
  EXPECT_EQ(kind, TimeoutKind::idle);
  Deadlines f(0, 100 * kMs, 100 * kMs, kCalled);
  f.launched(kCalled);
  ASSERT_TRUE(f.over(kCalled + 500 * kMs, 0, &kind));
  EXPECT_EQ(kind, TimeoutKind::first_output);
}

// ---- The escalation (lib/escalation_state.hpp) -------------------------

using sup::Cause;
using sup::Escalation;
using sup::EscalationState;
using sup::TimeoutAction;

TEST(EscalationState, StartsWithNothingSentAndNoDeadline) {
  EscalationState e(500 * kMs, 15, TimeoutAction::interrupt, kCalled);
  EXPECT_EQ(e.stage(), Escalation::none);
  EXPECT_EQ(e.cause(), Cause::none);
  EXPECT_FALSE(e.kill_sent());
  EXPECT_FALSE(e.forced_kill());
  EXPECT_FALSE(e.kill_due(kNever - 1));
  EXPECT_EQ(e.next(false), kNever);
  EXPECT_EQ(e.next(true), kNever);
  EXPECT_FALSE(e.end_waits_over(kNever - 1));
  EXPECT_TRUE(e.signals().empty());
}

TEST(EscalationState, TheGraceEndsInTheKill) {
  EscalationState e(500 * kMs, 15, TimeoutAction::interrupt, kCalled);
  const Nanos sent = kCalled + 100 * kMs;
  e.interrupt_sent(sent);
  EXPECT_EQ(e.stage(), Escalation::interrupt_sent);
  EXPECT_EQ(e.kill_at(), sent + 500 * kMs);
  EXPECT_EQ(e.next(false), sent + 500 * kMs);
  EXPECT_FALSE(e.kill_due(sent + 499 * kMs));
  EXPECT_TRUE(e.kill_due(sent + 500 * kMs));
  e.killed(sent + 500 * kMs, /*delivered=*/true, /*draining=*/false);
  EXPECT_EQ(e.stage(), Escalation::kill_sent);
  EXPECT_TRUE(e.forced_kill());
  // Killed: no kill is due any more, and the grace is no deadline.
  EXPECT_FALSE(e.kill_due(kNever - 1));
  EXPECT_EQ(e.next(false), kNever);
}

TEST(EscalationState, TheStageNeverGoesBack) {
  EscalationState e(500 * kMs, 15, TimeoutAction::interrupt, kCalled);
  e.interrupt_sent(kCalled + 10 * kMs);
  // A second interrupt (a caller's, adopted late) does not move the kill.
  e.interrupt_sent(kCalled + 300 * kMs);
  EXPECT_EQ(e.kill_at(), kCalled + 510 * kMs);
  e.killed(kCalled + 20 * kMs, /*delivered=*/true, /*draining=*/false);
  e.interrupt_sent(kCalled + 30 * kMs);
  EXPECT_EQ(e.stage(), Escalation::kill_sent);
  EXPECT_FALSE(e.kill_due(kNever - 1));
}

TEST(EscalationState, AKillThatReachedNobodyIsNotForced) {
  EscalationState e(500 * kMs, 15, TimeoutAction::kill, kCalled);
  e.killed(kCalled + 10 * kMs, /*delivered=*/false, /*draining=*/false);
  EXPECT_TRUE(e.kill_sent());
  EXPECT_FALSE(e.forced_kill());
  // A later delivered one (end_unwatched's fallback) makes it forced, and
  // nothing makes it unforced.
  e.killed(kCalled + 20 * kMs, /*delivered=*/true, /*draining=*/false);
  e.killed(kCalled + 30 * kMs, /*delivered=*/false, /*draining=*/false);
  EXPECT_TRUE(e.forced_kill());
}

TEST(EscalationState, TheHigherCauseWins) {
  EscalationState e(500 * kMs, 15, TimeoutAction::interrupt, kCalled);
  e.raise(Cause::interrupted);
  EXPECT_EQ(e.cause(), Cause::interrupted);
  e.time_out(TimeoutKind::first_output);
  EXPECT_EQ(e.cause(), Cause::timed_out);
  EXPECT_EQ(e.timeout_kind(), TimeoutKind::first_output);
  e.raise(Cause::aborted);
  e.raise(Cause::interrupted);
  EXPECT_EQ(e.cause(), Cause::aborted);
}

TEST(EscalationState, AfterTheExitAKillWaitsForThePipesBriefly) {
  EscalationState e(500 * kMs, 15, TimeoutAction::interrupt, kCalled);
  const Nanos now = kCalled + 1000 * kMs;
  e.killed(now, /*delivered=*/true, /*draining=*/true);
  EXPECT_EQ(e.next(true), now + EscalationState::kPipeDrainAfterKill);
  // While the main process runs the pipes are no deadline.
  EXPECT_EQ(e.next(false), kNever);
  EXPECT_FALSE(e.end_waits_over(now + EscalationState::kPipeDrainAfterKill - 1));
  EXPECT_TRUE(e.end_waits_over(now + EscalationState::kPipeDrainAfterKill));
}

TEST(EscalationState, ThePipeWaitCountsFromTheFirstCall) {
  EscalationState e(500 * kMs, 15, TimeoutAction::interrupt, kCalled);
  e.give_up_pipes_soon(kCalled + 10 * kMs);
  e.give_up_pipes_soon(kCalled + 90 * kMs);
  EXPECT_EQ(e.next(true), kCalled + 10 * kMs + EscalationState::kPipeDrainAfterKill);
}

TEST(EscalationState, TeeCopiesWaitWhileTheHostsFdTakesThem) {
  EscalationState e(500 * kMs, 15, TimeoutAction::interrupt, kCalled);
  const Nanos exit = kCalled + 50 * kMs;
  e.copies_wait_from(exit);
  e.copies_wait_from(exit + 10 * kMs);  // the wait began already
  EXPECT_EQ(e.next(true), exit + EscalationState::kTeeStall);
  // The host's fd took a copy: the wait starts again from it.
  e.copies_progressed(exit + 700 * kMs);
  EXPECT_EQ(e.next(true), exit + 700 * kMs + EscalationState::kTeeStall);
  EXPECT_FALSE(e.end_waits_over(exit + EscalationState::kTeeStall));
  EXPECT_TRUE(e.end_waits_over(exit + 700 * kMs + EscalationState::kTeeStall));
}

TEST(EscalationState, TheKillDuringTheGraceComesFirst) {
  EscalationState e(200 * kMs, 15, TimeoutAction::interrupt, kCalled);
  e.copies_wait_from(kCalled);
  e.interrupt_sent(kCalled);
  EXPECT_EQ(e.next(true), kCalled + 200 * kMs);
}

TEST(EscalationState, SignalsAreRecordedSinceTheCallInTimeOrder) {
  EscalationState e(500 * kMs, 2, TimeoutAction::interrupt, kCalled);
  e.record(2, kCalled + 30 * kMs);
  e.record(9, kCalled + 530 * kMs);
  e.record(10, kCalled + 10 * kMs);  // a host's signal, adopted late
  e.sort_signals();
  const auto& sent = e.signals();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].signal, 10);
  EXPECT_EQ(sent[0].at, 10 * kMs);
  EXPECT_EQ(sent[1].signal, 2);
  EXPECT_EQ(sent[2].signal, 9);
  EXPECT_EQ(sent[2].at, 530 * kMs);
  const auto taken = e.take_signals();
  EXPECT_EQ(taken.size(), 3u);
}

TEST(EscalationState, TheSettingsAreTheSpecs) {
  EscalationState e(750 * kMs, 2, TimeoutAction::kill, kCalled);
  EXPECT_EQ(e.grace(), 750 * kMs);
  EXPECT_EQ(e.interrupt_signal(), 2);
  EXPECT_EQ(e.on_timeout(), TimeoutAction::kill);
}

}  // namespace
