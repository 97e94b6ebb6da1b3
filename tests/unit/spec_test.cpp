// Every malformed spec is rejected up front with SUP_EINVAL and a message
// that names the key and the problem; nothing is started.
#include "helpers.hpp"

namespace {

struct BadSpec {
  const char* spec;
  const char* message;
};

class MalformedSpec : public ::testing::TestWithParam<BadSpec> {};

TEST_P(MalformedSpec, IsRejectedWithDetail) {
  const BadSpec& bad = GetParam();
  sup_proc* p = reinterpret_cast<sup_proc*>(0x1);
  char err[256] = "untouched";
  EXPECT_EQ(sup_spawn_ex(bad.spec, &p, err, sizeof err), SUP_EINVAL);
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(std::string(err).find(bad.message), std::string::npos) << "got: " << err;
}

INSTANTIATE_TEST_SUITE_P(
    Spec, MalformedSpec,
    ::testing::Values(
        BadSpec{"", "not valid JSON"},
        BadSpec{"{\"argv\": [\"true\"]", "not valid JSON"},
        BadSpec{"{\"argv\": [\"true\"]} trailing", "not valid JSON"},
        BadSpec{"[\"true\"]", "must be a JSON object"},
        BadSpec{"{}", "argv: is required"},
        BadSpec{"{\"argv\": []}", "argv: must not be empty"},
        BadSpec{"{\"argv\": \"true\"}", "argv: must be an array"},
        BadSpec{"{\"argv\": [\"true\", 3]}", "argv[1]: must be a string"},
        BadSpec{"{\"argv\": [\"\"]}", "argv[0]: must not be empty"},
        BadSpec{"{\"argv\": [\"true\"], \"frobnicate\": 1}", "frobnicate: unknown key"},
        BadSpec{"{\"argv\": [\"true\"], \"argv\": [\"false\"]}", "argv: appears twice"},
        BadSpec{"{\"argv\": [\"true\"], \"cwd\": 5}", "cwd: must be a string"},
        BadSpec{"{\"argv\": [\"true\"], \"cwd\": \"\"}", "cwd: must not be empty"},
        BadSpec{"{\"argv\": [\"true\"], \"env\": [\"A=1\"]}", "env: must be an object"},
        BadSpec{"{\"argv\": [\"true\"], \"env\": {\"A\": 1}}", "env.A: must be a string"},
        BadSpec{"{\"argv\": [\"true\"], \"env\": {\"A=B\": \"1\"}}", "must not contain '='"},
        BadSpec{"{\"argv\": [\"true\"], \"env\": {\"\": \"1\"}}", "must not be empty"},
        BadSpec{"{\"argv\": [\"true\"], \"stdin\": \"keyboard\"}", "stdin: must be"},
        BadSpec{"{\"argv\": [\"true\"], \"stdin\": {\"text\": \"x\"}}", "stdin.text: unknown key"},
        BadSpec{"{\"argv\": [\"true\"], \"stdin\": {}}", "must hold \"data\""},
        BadSpec{"{\"argv\": [\"true\"], \"stdin\": {\"data\": 7}}", "stdin.data: must be a string"},
        BadSpec{"{\"argv\": [\"true\"], \"stdin\": 0}", "stdin: must be"},
        BadSpec{"{\"argv\": [\"true\"], \"idle_timeout_ms\": -1}", "idle_timeout_ms: must not be negative"},
        BadSpec{"{\"argv\": [\"true\"], \"idle_timeout_ms\": 1.5}", "idle_timeout_ms: must be a whole number"},
        BadSpec{"{\"argv\": [\"true\"], \"idle_timeout_ms\": \"5\"}", "idle_timeout_ms: must be a non-negative integer"},
        BadSpec{"{\"argv\": [\"true\"], \"max_runtime_ms\": -5}", "max_runtime_ms: must not be negative"},
        BadSpec{"{\"argv\": [\"true\"], \"max_runtime_ms\": 1e300}", "max_runtime_ms: too large"},
        BadSpec{"{\"argv\": [\"true\"], \"grace_ms\": -1}", "grace_ms: must not be negative"},
        BadSpec{"{\"argv\": [\"true\"], \"grace_ms\": null}", "grace_ms: must be a non-negative integer"},
        BadSpec{"{\"argv\": [\"true\"], \"interrupt_signal\": \"SIGFOO\"}", "unknown signal \"SIGFOO\""},
        BadSpec{"{\"argv\": [\"true\"], \"interrupt_signal\": 0}", "no such signal number"},
        BadSpec{"{\"argv\": [\"true\"], \"interrupt_signal\": 99}", "no such signal number"},
        BadSpec{"{\"argv\": [\"true\"], \"interrupt_signal\": true}", "must be a signal name"},
        BadSpec{"{\"argv\": [\"true\"], \"on_timeout\": \"explode\"}", "on_timeout: must be \"interrupt\" or \"kill\""},
        BadSpec{"{\"argv\": [\"true\"], \"max_output_bytes\": -1}", "max_output_bytes: must not be negative"},
        BadSpec{"{\"argv\": [\"true\"], \"backpressure_bytes\": 0.5}", "backpressure_bytes: must be a whole number"},
        BadSpec{"{\"argv\": [\"true\"], \"tty_foreground\": 1}", "tty_foreground: must be true or false"},
        BadSpec{"{\"argv\": [\"true\"], \"require_sentinel\": \"yes\"}", "require_sentinel: must be true or false"},
        BadSpec{"{\"argv\": [\"true\"], \"tty_foreground\": true}", "needs \"stdin\": \"inherit\""}));

TEST(Spec, NullArgumentsAreRejected) {
  sup_proc* p = nullptr;
  EXPECT_EQ(sup_spawn(nullptr, &p), SUP_EINVAL);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(sup_spawn("{\"argv\": [\"true\"]}", nullptr), SUP_EINVAL);
  char err[64];
  EXPECT_EQ(sup_spawn_ex("{\"argv\": [\"true\"]}", nullptr, err, sizeof err), SUP_EINVAL);
  EXPECT_STREQ(err, "out: NULL");
}

TEST(Spec, DetailIsTruncatedToTheBuffer) {
  sup_proc* p = nullptr;
  char err[8];
  std::memset(err, 'x', sizeof err);
  EXPECT_EQ(sup_spawn_ex("{}", &p, err, sizeof err), SUP_EINVAL);
  EXPECT_EQ(std::strlen(err), sizeof err - 1);
  EXPECT_EQ(sup_spawn_ex("{}", &p, nullptr, 0), SUP_EINVAL);
}

TEST(Spec, AcceptsEveryKeyAtOnce) {
  SPAWN(p, "{\"argv\": [\"cat\"], \"cwd\": \"/\", \"env\": {\"A\": \"1\", \"B\": null},"
           " \"stdin\": {\"data\": \"x\"}, \"idle_timeout_ms\": 5000, \"max_runtime_ms\": 5000,"
           " \"grace_ms\": 100, \"interrupt_signal\": \"INT\", \"on_timeout\": \"kill\","
           " \"max_output_bytes\": 1024, \"backpressure_bytes\": 0, \"tty_foreground\": false}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "x");
}

TEST(Spec, SignalParse) {
  EXPECT_EQ(sup_signal_parse("TERM"), SIGTERM);
  EXPECT_EQ(sup_signal_parse("SIGint"), SIGINT);
  EXPECT_EQ(sup_signal_parse("9"), SIGKILL);
  EXPECT_EQ(sup_signal_parse("SIGNOPE"), SUP_EINVAL);
  EXPECT_EQ(sup_signal_parse("0"), SUP_EINVAL);
  EXPECT_EQ(sup_signal_parse("9x"), SUP_EINVAL);
  EXPECT_EQ(sup_signal_parse(nullptr), SUP_EINVAL);
}

TEST(Spec, SignalForms) {
  for (const char* sig : {"\"SIGINT\"", "\"INT\"", "\"int\"", "2"}) {
    SPAWN(p, std::string("{\"argv\": [\"sleep\", \"10\"], \"interrupt_signal\": ") + sig + "}");
    ASSERT_EQ(sup_interrupt(p.get()), 0);
    ASSERT_TRUE(p.wait());
    EXPECT_EQ(sup_result_term_signal(p.get()), SIGINT) << sig;
  }
}

}  // namespace
