// "tty_stop_timeout_ms": a child whose main process is stopped by SIGTTIN or
// SIGTTOU (it opened /dev/tty from a group without the terminal, as a
// password prompt does) is ended as a wait for input; a reader of its
// stdin pipe, a stop by SIGSTOP and a caller's own SIGTTIN are not.
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "helpers.hpp"

namespace {

using suptest::sh;

// What the limit promises: ended within 100 ms after the limit for a stop
// in the first second of quiet, plus what a loaded machine adds; asserted
// with a wide margin.
constexpr int kLimitMs = 200;
constexpr int kSlackMs = 1500;
// A child that must not be ended is watched this long: many times the limit.
constexpr int kNotEndedMs = 1200;

std::string pipe_stdin(const std::string& extra) { return "\"stdin\": \"pipe\", " + extra; }
std::string tty_stop(int ms) { return "\"tty_stop_timeout_ms\": " + std::to_string(ms); }

TEST(TtyStop, SpecErrorsNameTheKey) {
  sup_proc* p = nullptr;
  char err[256] = "";
  for (const char* bad : {"-5", "\"1s\"", "1.5", "true", "null"}) {
    SCOPED_TRACE(bad);
    const std::string spec = std::string("{\"argv\": [\"true\"], \"tty_stop_timeout_ms\": ") + bad + "}";
    EXPECT_EQ(sup_spawn_ex(spec.c_str(), &p, err, sizeof err), SUP_EINVAL);
    EXPECT_NE(std::string(err).find("tty_stop_timeout_ms"), std::string::npos) << err;
    EXPECT_EQ(p, nullptr);
  }
  SPAWN(ok, "{\"argv\": [\"true\"], \"tty_stop_timeout_ms\": 0}");
  ASSERT_TRUE(ok.wait());
  EXPECT_EQ(ok.result().str("outcome"), "exited");
}

// Without a terminal in its session a child cannot be stopped on one: the
// limit changes nothing, and a quiet child runs its course.
TEST(TtyStop, ChildThatExitsIsUntouched) {
  SPAWN(p, sh("sleep 0.3; echo done", tty_stop(50)));
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited") << sup_result(p.get());
  EXPECT_EQ(p.output(SUP_STDOUT), "done\n");
  EXPECT_TRUE(cJSON_IsNull(r.get("waiting_for_input"))) << sup_result(p.get());
}

// The host side on a terminal of the test's own, its controlling terminal
// (as in the input-wait suite): the host is this test binary again, exec'd
// in a new session on the terminal, running only the tests below.
constexpr const char* kHostOnTerminal = "SUP_TEST_TTY_STOP_HOST";

class TtyStopOnTerminal : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv(kHostOnTerminal) == nullptr) GTEST_SKIP() << "run by TtyStop.OnAHostsTerminal";
    ASSERT_EQ(isatty(0), 1);
  }
};

void expect_ended_on_stop(suptest::Proc& p) {
  ASSERT_TRUE(p.wait(kLimitMs + 10 * kSlackMs)) << "still running";
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout") << sup_result(p.get());
  EXPECT_EQ(r.str("phase"), "input") << sup_result(p.get());
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
  // The interrupt signal, then SIGCONT so that the stopped process acts on it.
  EXPECT_EQ(r.str("term_signal"), "SIGTERM") << sup_result(p.get());
  EXPECT_TRUE(cJSON_IsFalse(r.get("forced_kill"))) << sup_result(p.get());
  // Never before the limit, and within 100 ms after it plus the slack. The
  // stop comes a few ms after the spawn (sh's exec and open of /dev/tty).
  const double sent_ms = r.signal_at_us(0) / 1000.0;
  EXPECT_GE(sent_ms, kLimitMs) << sup_result(p.get());
  EXPECT_LE(sent_ms, kLimitMs + 100 + kSlackMs) << sup_result(p.get());
}

TEST_F(TtyStopOnTerminal, DevTtyReaderWithNullStdinIsEnded) {
  SPAWN(p, sh("read x < /dev/tty", tty_stop(kLimitMs)));
  expect_ended_on_stop(p);
}

TEST_F(TtyStopOnTerminal, DevTtyReaderWithPipeStdinIsEnded) {
  SPAWN(p, sh("read x < /dev/tty", pipe_stdin(tty_stop(kLimitMs))));
  expect_ended_on_stop(p);
}

// SIGTTOU: setting the terminal's modes from a background group.
TEST_F(TtyStopOnTerminal, TerminalConfigurerIsEnded) {
  SPAWN(p, sh("stty -echo < /dev/tty", tty_stop(kLimitMs)));
  expect_ended_on_stop(p);
}

TEST_F(TtyStopOnTerminal, StopAfterOutputAndQuietIsEnded) {
  // A prompt, a second of quiet, then the read: the checks have slowed.
  SPAWN(p, sh("echo 'password:'; sleep 1.2; read x < /dev/tty", pipe_stdin(tty_stop(kLimitMs))));
  ASSERT_TRUE(p.wait(1200 + kLimitMs + 10 * kSlackMs)) << "still running";
  auto r = p.result();
  EXPECT_EQ(r.str("phase"), "input") << sup_result(p.get());
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
  EXPECT_EQ(p.output(SUP_STDOUT), "password:\n");
  // The checks are then half the limit apart at most.
  const double sent_ms = r.signal_at_us(0) / 1000.0;
  EXPECT_GE(sent_ms, 1200 + kLimitMs) << sup_result(p.get());
  EXPECT_LE(sent_ms, 1200 + kLimitMs + kLimitMs / 2 + 100 + kSlackMs) << sup_result(p.get());
}

// Waiting on its stdin pipe is what a caller may want: never ended by it.
TEST_F(TtyStopOnTerminal, PipeReaderIsNotEnded) {
  SPAWN(p, sh("read x; echo \"got $x\"", pipe_stdin(tty_stop(50))));
  EXPECT_EQ(sup_poll(p.get(), kNotEndedMs), 0) << sup_result(p.get());
  size_t written = 0;
  ASSERT_EQ(sup_input_write(p.get(), "late\n", 5, &written), 0);
  ASSERT_EQ(sup_input_close(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().str("outcome"), "exited") << sup_result(p.get());
  EXPECT_EQ(p.output(SUP_STDOUT), "got late\n");
}

TEST_F(TtyStopOnTerminal, SigstopIsNotEnded) {
  // Stopped by its own SIGSTOP, then by the caller's SIGTSTP after a SIGCONT.
  SPAWN(p, sh("kill -STOP $$; echo resumed; sleep 30", tty_stop(50)));
  EXPECT_EQ(sup_poll(p.get(), kNotEndedMs), 0) << sup_result(p.get());
  ASSERT_EQ(sup_signal(p.get(), SIGCONT), 0);
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "resumed"));
  ASSERT_EQ(sup_signal(p.get(), SIGTSTP), 0);
  EXPECT_EQ(sup_poll(p.get(), kNotEndedMs), 0) << sup_result(p.get());
  ASSERT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().str("outcome"), "aborted") << sup_result(p.get());
}

// A SIGTTIN the caller sent itself is a pause it chose; a stop on the
// terminal after the caller's SIGCONT counts again.
TEST_F(TtyStopOnTerminal, CallersOwnSigttinIsNotEnded) {
  SPAWN(p, sh("read x < /dev/tty", pipe_stdin(tty_stop(kLimitMs))));
  // Before or after its own stop on the terminal: the caller's stands.
  ASSERT_EQ(sup_signal(p.get(), SIGTTIN), 0);
  EXPECT_EQ(sup_poll(p.get(), kNotEndedMs), 0) << sup_result(p.get());
  ASSERT_EQ(sup_signal(p.get(), SIGCONT), 0);
  ASSERT_TRUE(p.wait(kLimitMs + 10 * kSlackMs)) << "still running";
  auto r = p.result();
  EXPECT_EQ(r.str("phase"), "input") << sup_result(p.get());
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
}

// With input_wait_timeout_ms too, the earlier limit ends it.
TEST_F(TtyStopOnTerminal, BothLimitsTheEarlierWins) {
  constexpr int kLong = 10000;
  for (bool stop_first : {true, false}) {
    SCOPED_TRACE(stop_first ? "tty_stop_timeout_ms first" : "input_wait_timeout_ms first");
    const int stop_ms = stop_first ? kLimitMs : kLong;
    const int wait_ms = stop_first ? kLong : kLimitMs;
    SPAWN(p, sh("read x < /dev/tty",
                pipe_stdin(tty_stop(stop_ms) + ", \"input_wait_timeout_ms\": " + std::to_string(wait_ms))));
    ASSERT_TRUE(p.wait(kLimitMs + 10 * kSlackMs)) << "still running";
    auto r = p.result();
    EXPECT_EQ(r.str("phase"), "input") << sup_result(p.get());
    EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
    const double sent_ms = r.signal_at_us(0) / 1000.0;
    EXPECT_GE(sent_ms, kLimitMs) << sup_result(p.get());
    EXPECT_LE(sent_ms, kLimitMs + 100 + kSlackMs) << sup_result(p.get());
  }
  // A pipe reader under both: the input wait's limit, not the stop's.
  SPAWN(p, sh("read x", pipe_stdin(tty_stop(50) + ", \"input_wait_timeout_ms\": 300")));
  ASSERT_TRUE(p.wait(300 + 10 * kSlackMs)) << "still running";
  EXPECT_EQ(p.result().str("phase"), "input") << sup_result(p.get());
  EXPECT_GE(p.result().signal_at_us(0) / 1000.0, 300) << sup_result(p.get());
}

TEST(TtyStop, OnAHostsTerminal) {
  suptest::rerun_on_own_terminal("TtyStopOnTerminal.*", kHostOnTerminal, 90);
}

}  // namespace
