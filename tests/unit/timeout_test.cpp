// Idle timeout, max runtime and the escalation they start. Thresholds are
// hundreds of milliseconds; assertions allow generous lateness, never earliness.
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
  double before = suptest::now_ms();
  SPAWN(p, "{\"argv\": [\"sleep\", \"10\"], \"idle_timeout_ms\": 200}");
  ASSERT_TRUE(p.wait());
  double elapsed = suptest::now_ms() - before;
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_GE(elapsed, 200.0);
  EXPECT_LT(elapsed, 1500.0);
  double term_at = signal_at(r, 0, "SIGTERM");
  EXPECT_GE(term_at, 200.0);
  EXPECT_LT(term_at, 1000.0);
  EXPECT_TRUE(cJSON_IsNull(r.get("exit_code")));
  EXPECT_EQ(r.str("term_signal"), "SIGTERM");
  EXPECT_FALSE(cJSON_IsTrue(r.get("forced_kill")));
}

TEST(IdleTimeout, ChildSilentPastThresholdIsTimedOutBeforeItSpeaks) {
  SPAWN(p, sh("printf early; sleep 0.6; echo late", "\"idle_timeout_ms\": 200"));
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_EQ(p.output(SUP_STDOUT), "early");
  double term_at = signal_at(r, 0, "SIGTERM");
  EXPECT_GE(term_at, 200.0);
  EXPECT_LT(term_at, 600.0);
}

TEST(IdleTimeout, PartialChunksWithoutNewlineCountAsActivity) {
  SPAWN(p, sh("for i in 1 2 3 4 5; do printf '.'; sleep 0.1; done; printf done", "\"idle_timeout_ms\": 400"));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED);
  EXPECT_EQ(p.output(SUP_STDOUT), ".....done");
}

TEST(MaxRuntime, ContinuousOutputIsEndedWithTheOutputSoFar) {
  double before = suptest::now_ms();
  SPAWN(p, sh("while :; do echo tick; sleep 0.01; done", "\"max_runtime_ms\": 300, \"idle_timeout_ms\": 200"));
  ASSERT_TRUE(p.wait());
  double elapsed = suptest::now_ms() - before;
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "max_runtime");
  EXPECT_GE(elapsed, 300.0);
  EXPECT_LT(elapsed, 2000.0);
  EXPECT_GE(signal_at(r, 0, "SIGTERM"), 300.0);
  std::string out = p.output(SUP_STDOUT);
  EXPECT_GE(out.size(), 5 * std::string("tick\n").size());
  EXPECT_EQ(out.compare(0, 5, "tick\n"), 0);
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDOUT), static_cast<int64_t>(out.size()));
}

TEST(Escalation, ChildIgnoringTheInterruptSignalIsKilledAfterGrace) {
  SPAWN(p, sh("trap '' TERM; echo started; sleep 10", "\"idle_timeout_ms\": 100, \"grace_ms\": 200"));
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
  EXPECT_LT(grace_us, 800000);
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
