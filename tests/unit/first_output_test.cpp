// "first_output_timeout_ms" and "phase"; "env_clear".
#include "helpers.hpp"

namespace {

using suptest::sh;

std::string phase(const suptest::Json& j) {
  const cJSON* v = j.get("phase");
  return cJSON_IsString(v) ? v->valuestring : cJSON_IsNull(v) ? "null" : "<missing>";
}

TEST(FirstOutput, ASilentChildIsEndedWithPhaseFirstOutput) {
  SPAWN(p, sh("sleep 30", "\"first_output_timeout_ms\": 300, \"idle_timeout_ms\": 100, \"grace_ms\": 100"));
  ASSERT_TRUE(p.wait(20000));
  auto j = p.result();
  EXPECT_EQ(j.str("outcome"), "idle_timeout");
  EXPECT_EQ(phase(j), "first_output");
  EXPECT_EQ(sup_result_phase(p.get()), SUP_PHASE_FIRST_OUTPUT);
  // The shorter idle limit did not apply before the first byte.
  EXPECT_GE(j.signal_at_us(0), 300000);
}

TEST(FirstOutput, TheIdleClockStartsAtTheFirstByte) {
  // Silent for 1 s (past the idle limit, within the first-output one), then
  // one byte, then silent: ended by the idle limit counted from that byte.
  SPAWN(p, sh("sleep 1; echo first; exec sleep 30",
              "\"first_output_timeout_ms\": 10000, \"idle_timeout_ms\": 300, \"grace_ms\": 100"));
  ASSERT_TRUE(p.wait(30000));
  auto j = p.result();
  EXPECT_EQ(j.str("outcome"), "idle_timeout");
  EXPECT_EQ(phase(j), "idle");
  EXPECT_EQ(sup_result_phase(p.get()), SUP_PHASE_IDLE);
  EXPECT_EQ(p.output(SUP_STDOUT), "first\n");
  EXPECT_GE(j.signal_at_us(0), 1300000);
  // Ended by the idle limit, which the first byte made the earlier
  // deadline, not at the first-output limit's 10 s (a margin for load).
  EXPECT_LT(j.signal_at_us(0), 8000000);
}

TEST(FirstOutput, OutputInTimeRunsToTheEnd) {
  SPAWN(p, sh("echo hi; sleep 0.5; echo bye", "\"first_output_timeout_ms\": 5000"));
  ASSERT_TRUE(p.wait(20000));
  auto j = p.result();
  EXPECT_EQ(j.str("outcome"), "exited");
  EXPECT_EQ(phase(j), "null");
  EXPECT_EQ(sup_result_phase(p.get()), SUP_PHASE_NONE);
}

TEST(FirstOutput, StderrCountsAsOutput) {
  SPAWN(p, sh("echo e >&2; sleep 1; echo done", "\"first_output_timeout_ms\": 500"));
  ASSERT_TRUE(p.wait(20000));
  EXPECT_EQ(p.result().str("outcome"), "exited");
}

TEST(FirstOutput, PhaseOfOtherOutcomes) {
  SPAWN(idle, sh("sleep 30", "\"idle_timeout_ms\": 200, \"grace_ms\": 100"));
  SPAWN(longer, sh("while :; do echo x; sleep 0.02; done", "\"max_runtime_ms\": 200, \"first_output_timeout_ms\": 100000"));
  ASSERT_TRUE(idle.wait(20000));
  ASSERT_TRUE(longer.wait(20000));
  EXPECT_EQ(phase(idle.result()), "idle");
  EXPECT_EQ(sup_result_phase(idle.get()), SUP_PHASE_IDLE);
  EXPECT_EQ(longer.result().str("outcome"), "max_runtime");
  EXPECT_EQ(phase(longer.result()), "null");
  EXPECT_EQ(sup_result_phase(longer.get()), SUP_PHASE_NONE);
}

TEST(FirstOutput, PhaseBeforeFinalAndBadArguments) {
  SPAWN(p, sh("sleep 30"));
  EXPECT_EQ(sup_result_phase(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_phase(nullptr), SUP_EINVAL);
  for (const char* bad : {"-1", "1.5", "\"5\""}) {
    sup_proc* q = nullptr;
    char err[256] = "";
    std::string spec = std::string("{\"argv\": [\"true\"], \"first_output_timeout_ms\": ") + bad + "}";
    EXPECT_EQ(sup_spawn_ex(spec.c_str(), &q, err, sizeof err), SUP_EINVAL);
    EXPECT_EQ(std::string(err).rfind("spec: first_output_timeout_ms: ", 0), 0u) << err;
  }
  sup_proc* q = nullptr;
  char err[256] = "";
  EXPECT_EQ(sup_spawn_ex("{\"argv\": [\"true\"], \"first_output_timeout_ms\": 10, \"stdout\": \"null\", "
                         "\"stderr\": \"null\"}", &q, err, sizeof err), SUP_EINVAL);
  EXPECT_EQ(std::string(err).rfind("spec: first_output_timeout_ms: sup reads neither stream", 0), 0u) << err;
}

TEST(EnvClear, TheEnvironmentIsExactlyEnv) {
  SPAWN(p, "{\"argv\": [\"/usr/bin/env\"], \"env_clear\": true, \"env\": {\"A\": \"1\", \"HOME\": null}}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "A=1\n");
}

TEST(EnvClear, WithoutPathInEnvTheDefaultPathIsSearched) {
  // "env" is in /usr/bin (and /bin): found through "/bin:/usr/bin".
  SPAWN(p, "{\"argv\": [\"env\"], \"env_clear\": true}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0);
  EXPECT_EQ(p.output(SUP_STDOUT), "");
}

TEST(EnvClear, EnvsPathIsTheOneSearched) {
  sup_proc* q = nullptr;
  char err[512] = "";
  EXPECT_EQ(sup_spawn_ex("{\"argv\": [\"env\"], \"env_clear\": true, \"env\": {\"PATH\": \"/nonexistent\"}}", &q,
                         err, sizeof err),
            SUP_ENOENT);
  EXPECT_NE(std::string(err).find("/nonexistent"), std::string::npos) << err;
  // The host's own environment is untouched and still inherited without it.
  setenv("SUP_ENV_CLEAR_TEST", "host", 1);
  SPAWN(p, sh("echo \"$SUP_ENV_CLEAR_TEST\""));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "host\n");
  SPAWN(c, "{\"argv\": [\"sh\", \"-c\", \"echo \\\"[$SUP_ENV_CLEAR_TEST]\\\"\"], \"env_clear\": true}");
  ASSERT_TRUE(c.wait());
  EXPECT_EQ(c.output(SUP_STDOUT), "[]\n");
  unsetenv("SUP_ENV_CLEAR_TEST");
}

TEST(EnvClear, MustBeABoolean) {
  sup_proc* q = nullptr;
  char err[256] = "";
  EXPECT_EQ(sup_spawn_ex("{\"argv\": [\"true\"], \"env_clear\": 1}", &q, err, sizeof err), SUP_EINVAL);
  EXPECT_EQ(std::string(err), "spec: env_clear: must be true or false");
}

}  // namespace
