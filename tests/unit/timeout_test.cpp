// Idle timeout, max runtime and the escalation they start. Thresholds are
// hundreds of milliseconds; assertions allow generous lateness, never earliness.
#include <algorithm>
#include <sstream>

#include "helpers.hpp"

namespace {

using suptest::sh;

double signal_at(const suptest::Json& r, size_t index, const char* name) {
  const cJSON* sig = cJSON_GetArrayItem(r.get("signals_sent"), static_cast<int>(index));
  if (sig == nullptr) return -1;
  const cJSON* n = cJSON_GetObjectItem(sig, "signal");
  if (!cJSON_IsString(n) || std::string(n->valuestring) != name) return -2;
  return cJSON_GetObjectItem(sig, "at_ms")->valuedouble;
}

TEST(IdleTimeout, ByteEverySixtyPercentOfThresholdIsNeverTimedOut) {
  // 600 ms is 60% of 1 s; the 400 ms of slack absorb a loaded machine's
  // jitter (a fork and exec of sleep per byte).
  SPAWN(p, sh("for i in 1 2 3 4; do printf x; sleep 0.6; done", "\"idle_timeout_ms\": 1000"));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED);
  EXPECT_EQ(sup_result_exit_code(p.get()), 0);
  EXPECT_EQ(p.output(SUP_STDOUT), "xxxx");
}

TEST(IdleTimeout, StderrAloneKeepsTheChildAlive) {
  SPAWN(p, sh("for i in 1 2 3 4; do printf e >&2; sleep 0.6; done", "\"idle_timeout_ms\": 1000"));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED);
  EXPECT_EQ(p.output(SUP_STDERR), "eeee");
  EXPECT_EQ(p.output(SUP_STDOUT), "");
}

TEST(IdleTimeout, SilentChildIsTimedOutAtTheThresholdNotBefore) {
  suptest::SchedulerLag lag;
  double before = suptest::now_ms();
  SPAWN(p, "{\"argv\": [\"sleep\", \"10\"], \"idle_timeout_ms\": 200}");
  ASSERT_TRUE(p.wait());
  double elapsed = suptest::now_ms() - before;
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_GE(elapsed, 200.0);
  EXPECT_LT(elapsed, 200.0 + lag.allowance(1300)) << "scheduler lag " << lag.max_ms() << " ms";
  double term_at = signal_at(r, 0, "SIGTERM");
  EXPECT_GE(term_at, 200.0);
  EXPECT_LT(term_at, 200.0 + lag.allowance(300)) << "scheduler lag " << lag.max_ms() << " ms";
  EXPECT_TRUE(cJSON_IsNull(r.get("exit_code")));
  EXPECT_EQ(r.str("term_signal"), "SIGTERM");
  EXPECT_FALSE(cJSON_IsTrue(r.get("forced_kill")));
}

TEST(IdleTimeout, ChildSilentPastThresholdIsTimedOutBeforeItSpeaks) {
  // Never early: 200 ms after the last byte at the soonest. Late only by
  // what the scheduler explains (this process's threads kept waiting as
  // long). The child would speak again only after 10 s, which no load here
  // reaches: a late SIGTERM shows in the bound, not as an "exited" outcome.
  suptest::SchedulerLag lag;
  SPAWN(p, sh("printf early; sleep 10; echo late", "\"idle_timeout_ms\": 200"));
  ASSERT_TRUE(p.wait(20000));
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_EQ(p.output(SUP_STDOUT), "early");
  double term_at = signal_at(r, 0, "SIGTERM");
  EXPECT_GE(term_at, 200.0);
  EXPECT_LT(term_at, 200.0 + lag.allowance(400)) << "scheduler lag " << lag.max_ms() << " ms";
}

TEST(IdleTimeout, PartialChunksWithoutNewlineCountAsActivity) {
  // A byte every 100 ms (no newline) against a 400 ms idle timeout. The
  // child's own clock (CLOCK_MONOTONIC, on stderr) says when each byte went
  // out: only a child that itself fell silent for 400 ms may be timed out,
  // as a loaded machine can make it; then nothing is asserted about it.
  SPAWN(p, "{\"argv\": [\"perl\", \"-e\", "
           "\"use Time::HiRes qw(clock_gettime sleep CLOCK_MONOTONIC); $| = 1; "
           "for (1..5) { print '.'; printf STDERR qq(%.3f\\\\n), clock_gettime(CLOCK_MONOTONIC) * 1000; sleep 0.1 } "
           "printf STDERR qq(%.3f\\\\n), clock_gettime(CLOCK_MONOTONIC) * 1000; print 'done'\"], "
           "\"idle_timeout_ms\": 400}");
  ASSERT_TRUE(p.wait());
  double widest = 0, previous = -1;
  std::istringstream stamps(p.output(SUP_STDERR));
  for (double at; stamps >> at; previous = at)
    if (previous >= 0) widest = std::max(widest, at - previous);
  if (widest >= 400.0) {
    EXPECT_NE(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED) << "the child was silent for " << widest << " ms";
    return;
  }
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED) << "widest gap the child saw: " << widest << " ms";
  EXPECT_EQ(p.output(SUP_STDOUT), ".....done");
}

TEST(MaxRuntime, ContinuousOutputIsEndedWithTheOutputSoFar) {
  suptest::SchedulerLag lag;
  double before = suptest::now_ms();
  SPAWN(p, sh("while :; do echo tick; sleep 0.01; done", "\"max_runtime_ms\": 300, \"idle_timeout_ms\": 200"));
  ASSERT_TRUE(p.wait());
  double elapsed = suptest::now_ms() - before;
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "max_runtime");
  EXPECT_GE(elapsed, 300.0);
  EXPECT_LT(elapsed, 300.0 + lag.allowance(1700)) << "scheduler lag " << lag.max_ms() << " ms";
  EXPECT_GE(signal_at(r, 0, "SIGTERM"), 300.0);
  std::string out = p.output(SUP_STDOUT);
  EXPECT_GE(out.size(), 5 * std::string("tick\n").size());
  EXPECT_EQ(out.compare(0, 5, "tick\n"), 0);
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDOUT), static_cast<int64_t>(out.size()));
}

TEST(Escalation, ChildIgnoringTheInterruptSignalIsKilledAfterGrace) {
  suptest::SchedulerLag lag;
  // The idle limit starts at "started", once the shell ignores SIGTERM (a
  // shell not yet past `trap` 100 ms after its exec would die of it).
  SPAWN(p, sh("trap '' TERM; echo started; sleep 10",
              "\"first_output_timeout_ms\": 10000, \"idle_timeout_ms\": 100, \"grace_ms\": 200"));
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_TRUE(cJSON_IsTrue(r.get("forced_kill")));
  EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
  EXPECT_EQ(sup_result_term_signal(p.get()), SIGKILL);
  EXPECT_GE(signal_at(r, 0, "SIGTERM"), 100.0);
  EXPECT_GT(signal_at(r, 1, "SIGKILL"), 0.0);
  const int64_t grace_us = r.signal_at_us(1) - r.signal_at_us(0);
  EXPECT_GE(grace_us, 200000);
  EXPECT_LT(grace_us, 1000 * (200 + lag.allowance(600))) << "scheduler lag " << lag.max_ms() << " ms";
  EXPECT_EQ(p.output(SUP_STDOUT), "started\n");
}

TEST(Escalation, OnTimeoutKillSendsSigkillAtOnce) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"10\"], \"idle_timeout_ms\": 100, \"on_timeout\": \"kill\"}");
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_GE(signal_at(r, 0, "SIGKILL"), 100.0);
  EXPECT_EQ(cJSON_GetArraySize(r.get("signals_sent")), 1);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
}

TEST(Escalation, CustomInterruptSignalIsUsed) {
  SPAWN(p, sh("trap 'echo got INT; exit 4' INT; while :; do sleep 0.01; done",
              "\"idle_timeout_ms\": 100, \"interrupt_signal\": \"SIGINT\""));
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_GE(signal_at(r, 0, "SIGINT"), 100.0);
  EXPECT_EQ(p.output(SUP_STDOUT), "got INT\n");
  EXPECT_EQ(sup_result_exit_code(p.get()), 4);
}

TEST(Escalation, ExitBeforeTheDeadlineIsTheOutcome) {
  // The main process speaks (the setup before may be slow on a loaded
  // machine) and exits; a leftover keeps the pipe open, silent, past the idle
  // threshold and until SIGKILL after grace. The exit, not a timeout, is the
  // outcome.
  SPAWN(p, sh(suptest::term_ignoring_sleeper("printf x; exit 7"),
              "\"idle_timeout_ms\": 1000, \"grace_ms\": 1500"));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED);
  EXPECT_EQ(sup_result_exit_code(p.get()), 7);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
}

TEST(MaxRuntime, ShorterThanIdleWins) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"10\"], \"idle_timeout_ms\": 5000, \"max_runtime_ms\": 150}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_MAX_RUNTIME);
  EXPECT_GE(sup_result_duration_ms(p.get()), 150.0);
}

}  // namespace
