// The deadlines and the escalation of a child, as pure state: made-up
// times, no child process (lib/deadlines.hpp).
#include <gtest/gtest.h>

#include "deadlines.hpp"

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

}  // namespace
