// sup_expire: the max runtime as if it had come, from another thread or a
// signal handler; and the child's signal dispositions ("keep_ignored_signals",
// "reset_signals"), read back from /proc in the child.
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "helpers.hpp"

namespace {

using suptest::sh;

std::string signal_name_at(const suptest::Json& r, int index) {
  const cJSON* sig = cJSON_GetObjectItem(cJSON_GetArrayItem(r.get("signals_sent"), index), "signal");
  return cJSON_IsString(sig) ? sig->valuestring : "";
}

TEST(Expire, FromAnotherThreadIsTheMaxRuntime) {
  SPAWN(p, sh("echo up; sleep 30", "\"idle_timeout_ms\": 60000"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  const double start = suptest::now_ms();
  std::thread([&] { EXPECT_EQ(sup_expire(p.get()), 0); }).join();
  ASSERT_TRUE(p.wait());
  EXPECT_LT(suptest::now_ms() - start, 3000);  // the interrupt, not the grace's kill
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "max_runtime");
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_MAX_RUNTIME);
  EXPECT_EQ(sup_result_term_signal(p.get()), SIGTERM);
  EXPECT_EQ(signal_name_at(r, 0), "SIGTERM");
  EXPECT_TRUE(cJSON_IsNull(r.get("phase")));
}

TEST(Expire, EscalatesAsTheDeadlineWould) {
  // The interrupt signal the spec names, then SIGKILL after the grace.
  SPAWN(p, sh("trap '' INT; echo up; sleep 30", "\"interrupt_signal\": \"INT\", \"grace_ms\": 200"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  EXPECT_EQ(sup_expire(p.get()), 0);
  EXPECT_EQ(sup_expire(p.get()), 0);  // latched again: nothing sent twice
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "max_runtime");
  EXPECT_EQ(signal_name_at(r, 0), "SIGINT");
  EXPECT_EQ(signal_name_at(r, 1), "SIGKILL");
  EXPECT_EQ(cJSON_GetArraySize(r.get("signals_sent")), 2);
  EXPECT_GE(r.signal_at_us(1) - r.signal_at_us(0), 200000);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
}

TEST(Expire, OnTimeoutKillKillsAtOnce) {
  SPAWN(p, sh("echo up; sleep 30", "\"on_timeout\": \"kill\""));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  EXPECT_EQ(sup_expire(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().str("outcome"), "max_runtime");
  EXPECT_EQ(sup_result_term_signal(p.get()), SIGKILL);
}

std::atomic<sup_proc*> g_target{nullptr};
std::atomic<int> g_handler_rc{-100};
std::atomic<int> g_handler_errno{0};

void on_alarm(int) {
  errno = 1234;
  g_handler_rc.store(sup_expire(g_target.load()));
  g_handler_errno.store(errno);
}

TEST(Expire, FromASignalHandler) {
  SPAWN(p, sh("echo up; sleep 30"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  g_target = p.get();
  struct sigaction sa {}, old {};
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, &old);
  raise(SIGALRM);
  sigaction(SIGALRM, &old, nullptr);
  EXPECT_EQ(g_handler_rc.load(), 0);
  EXPECT_EQ(g_handler_errno.load(), 1234);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().str("outcome"), "max_runtime");
}

TEST(Expire, WhileACallerWaitsInPoll) {
  // The caller drives the child itself meanwhile (sup_poll's wait): the
  // request still reaches the loop.
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"]}");
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(sup_expire(p.get()), 0);
  });
  EXPECT_EQ(sup_poll(p.get(), 10000), 1);
  later.join();
  EXPECT_EQ(p.result().str("outcome"), "max_runtime");
}

TEST(Expire, AfterTheResultIsFinalChangesNothing) {
  SPAWN(p, sh("echo done; exit 3"));
  ASSERT_TRUE(p.wait());
  std::string before = sup_result(p.get());
  EXPECT_EQ(sup_expire(p.get()), 1);
  EXPECT_EQ(sup_expire(p.get()), 1);
  EXPECT_EQ(std::string(sup_result(p.get())), before);
  EXPECT_EQ(p.result().str("outcome"), "exited");
  EXPECT_EQ(sup_result_exit_code(p.get()), 3);
}

TEST(Expire, AfterAnInterruptTheInterruptStands) {
  SPAWN(p, sh("trap 'exit 5' TERM; echo up; while :; do sleep 0.05; done", "\"grace_ms\": 5000"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  EXPECT_EQ(sup_expire(p.get()), 0);
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "interrupted");
  EXPECT_EQ(cJSON_GetArraySize(r.get("signals_sent")), 1);
}

TEST(Expire, BadHandle) { EXPECT_EQ(sup_expire(nullptr), SUP_EINVAL); }

// ---- keep_ignored_signals / reset_signals ---------------------------------

// The child's SigIgn mask from /proc/self/status, as the child itself
// prints it (bit sig - 1).
uint64_t child_ignored(const std::string& extra) {
  suptest::Proc p(sh("exec grep '^SigIgn:' /proc/self/status", extra));
  EXPECT_EQ(p.rc(), 0) << p.error();
  if (p.rc() != 0 || !p.wait()) return ~uint64_t{0};
  std::string out = p.output(SUP_STDOUT);
  size_t colon = out.find(':');
  if (colon == std::string::npos) return ~uint64_t{0};
  return std::strtoull(out.c_str() + colon + 1, nullptr, 16);
}

uint64_t bit(int sig) { return uint64_t{1} << (sig - 1); }

// While alive, the host ignores exactly sigs: they are set to SIG_IGN, and
// every other signal this process was started ignoring is at its default
// (a suite run as a background job of a non-interactive shell starts with
// SIGINT and SIGQUIT ignored, which the child would rightly keep). Puts
// back what was there.
class Ignoring {
 public:
  explicit Ignoring(std::initializer_list<int> sigs) {
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction now {};
      if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &now) != 0) continue;
      if (now.sa_handler != SIG_IGN || std::find(sigs.begin(), sigs.end(), sig) != sigs.end()) continue;
      set(sig, SIG_DFL);
    }
    for (int sig : sigs) set(sig, SIG_IGN);
  }
  ~Ignoring() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) sigaction(it->first, &it->second, nullptr);
  }

 private:
  void set(int sig, void (*disposition)(int)) {
    struct sigaction to {}, old {};
    to.sa_handler = disposition;
    if (sigaction(sig, &to, &old) == 0) saved_.push_back({sig, old});
  }
  std::vector<std::pair<int, struct sigaction>> saved_;
};

void on_usr2(int) {}

TEST(ChildSignals, ByDefaultEverySignalIsAtItsDefault) {
  Ignoring ign({SIGPIPE, SIGUSR1, SIGHUP});
  // `sh -c` itself ignores nothing it did not inherit.
  EXPECT_EQ(child_ignored(""), 0u);
  EXPECT_EQ(child_ignored("\"keep_ignored_signals\": false"), 0u);
}

TEST(ChildSignals, KeepIgnoredKeepsTheHostsIgnoredOnes) {
  Ignoring ign({SIGPIPE, SIGUSR1, SIGHUP, SIGXFSZ});
  struct sigaction handler {}, old {};
  handler.sa_handler = on_usr2;
  sigaction(SIGUSR2, &handler, &old);
  const uint64_t got = child_ignored("\"keep_ignored_signals\": true");
  sigaction(SIGUSR2, &old, nullptr);
  EXPECT_EQ(got, bit(SIGPIPE) | bit(SIGUSR1) | bit(SIGHUP) | bit(SIGXFSZ));
  EXPECT_EQ(got & bit(SIGUSR2), 0u);  // a handler is not passed on
}

TEST(ChildSignals, ResetSignalsAreAtTheirDefault) {
  Ignoring ign({SIGPIPE, SIGUSR1, SIGHUP, SIGXFSZ, SIGRTMIN + 1});
  EXPECT_EQ(child_ignored("\"keep_ignored_signals\": true, \"reset_signals\": [\"PIPE\", \"SIGXFSZ\", 1, \"rtmin+1\"]"),
            bit(SIGUSR1));
  // Named but not ignored by the host: nothing to do; alone, they change
  // nothing either (everything is at its default).
  EXPECT_EQ(child_ignored("\"keep_ignored_signals\": true, \"reset_signals\": [\"TERM\"]"),
            bit(SIGPIPE) | bit(SIGUSR1) | bit(SIGHUP) | bit(SIGXFSZ) | bit(SIGRTMIN + 1));
  EXPECT_EQ(child_ignored("\"reset_signals\": [\"PIPE\"]"), 0u);
  EXPECT_EQ(child_ignored("\"keep_ignored_signals\": true, \"reset_signals\": []"),
            bit(SIGPIPE) | bit(SIGUSR1) | bit(SIGHUP) | bit(SIGXFSZ) | bit(SIGRTMIN + 1));
}

TEST(ChildSignals, IgnoredPipeIsSeenByTheChild) {
  // What a shell's `trap '' PIPE` passes on: `yes` into a closed pipe gets
  // EPIPE and says so, instead of dying silently.
  Ignoring ign({SIGPIPE});
  SPAWN(p, sh("yes | :", "\"keep_ignored_signals\": true"));
  ASSERT_TRUE(p.wait());
  EXPECT_NE(p.output(SUP_STDERR).find("Broken pipe"), std::string::npos) << p.output(SUP_STDERR);
  SPAWN(q, sh("yes | :"));
  ASSERT_TRUE(q.wait());
  EXPECT_EQ(q.output(SUP_STDERR), "");
}

TEST(ChildSignals, BadValuesNameTheKey) {
  struct Case {
    const char* extra;
    const char* detail;
  } cases[] = {
      {"\"keep_ignored_signals\": 1", "spec: keep_ignored_signals: must be true or false"},
      {"\"reset_signals\": \"PIPE\"", "spec: reset_signals: must be an array"},
      {"\"reset_signals\": [\"PIPE\", \"NOPE\"]", "spec: reset_signals[1]: unknown signal \"NOPE\""},
      {"\"reset_signals\": [true]", "spec: reset_signals[0]: must be a signal name"},
      {"\"reset_signals\": [65]", "spec: reset_signals[0]: no such signal number"},
      {"\"reset_signals\": [1.5]", "spec: reset_signals[0]: no such signal number"},
  };
  for (const Case& c : cases) {
    suptest::Proc p(sh("true", c.extra));
    EXPECT_EQ(p.rc(), SUP_EINVAL) << c.extra;
    EXPECT_EQ(p.error().rfind(c.detail, 0), 0u) << c.extra << ": " << p.error();
  }
}

}  // namespace
