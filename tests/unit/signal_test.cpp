// Signal names as bash's `kill -l` prints them, parsed back in every form;
// sup_signal from any thread or a signal handler, never an ending.
#include <algorithm>
#include <atomic>
#include <cctype>

#include "helpers.hpp"

namespace {

using suptest::sh;

std::string bash_name(int sig) {
  std::string cmd = "bash -c 'kill -l " + std::to_string(sig) + "' 2>/dev/null";
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[64];
  while (fgets(buf, sizeof buf, f) != nullptr) out += buf;
  pclose(f);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

TEST(SignalNames, MatchBashAndRoundTripEveryForm) {
  for (int sig = 1; sig <= 64; ++sig) {
    const char* name = sup_signal_name(sig);
    ASSERT_NE(name, nullptr) << sig;
    // bash prints nothing for glibc's two reserved signals.
    std::string bash = bash_name(sig);
    EXPECT_EQ(name, bash.empty() ? "SIG" + std::to_string(sig) : "SIG" + bash) << sig;
    std::string n = name;
    EXPECT_EQ(sup_signal_parse(name), sig) << n;
    EXPECT_EQ(sup_signal_parse(n.substr(3).c_str()), sig) << n;
    EXPECT_EQ(sup_signal_parse(lower(n).c_str()), sig) << n;
    EXPECT_EQ(sup_signal_parse(std::to_string(sig).c_str()), sig);
    EXPECT_EQ(sup_signal_parse(("SIG" + std::to_string(sig)).c_str()), sig);
    // The spec's interrupt_signal takes the same names.
    suptest::Proc p("{\"argv\": [\"true\"], \"interrupt_signal\": \"" + n + "\"}");
    EXPECT_EQ(p.rc(), 0) << n << ": " << p.error();
  }
}

TEST(SignalNames, OutOfRangeAndMalformed) {
  EXPECT_EQ(sup_signal_name(0), nullptr);
  EXPECT_EQ(sup_signal_name(65), nullptr);
  EXPECT_EQ(sup_signal_name(-1), nullptr);
  EXPECT_STREQ(sup_signal_name(SIGTERM), "SIGTERM");
  EXPECT_STREQ(sup_signal_name(SIGRTMIN), "SIGRTMIN");
  EXPECT_STREQ(sup_signal_name(SIGRTMAX), "SIGRTMAX");
  // Every offset in range is accepted, not only the printed form.
  EXPECT_EQ(sup_signal_parse("RTMIN+20"), SIGRTMIN + 20);
  EXPECT_EQ(sup_signal_parse("sigrtmax-20"), SIGRTMAX - 20);
  EXPECT_EQ(sup_signal_parse("IOT"), SIGABRT);
  for (const char* bad : {"SIG", "SIG0", "65", "RTMIN+", "RTMIN-1", "RTMAX+1", "RTMIN+31", "RTMAX-31", "TERM ",
                          "+5", "-5", "SIGRTMIN+x", ""})
    EXPECT_EQ(sup_signal_parse(bad), SUP_EINVAL) << bad;
}

TEST(SignalNames, InterruptSignalByRealTimeName) {
  SPAWN(p, sh("trap 'echo got; exit 0' RTMIN+3; echo up; while :; do sleep 0.01; done",
              "\"interrupt_signal\": \"SIGRTMIN+3\""));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait());
  auto j = p.result();
  EXPECT_EQ(p.output(SUP_STDOUT), "up\ngot\n");
  EXPECT_EQ(j.str("outcome"), "interrupted");
  const cJSON* first = cJSON_GetArrayItem(j.get("signals_sent"), 0);
  EXPECT_STREQ(cJSON_GetObjectItem(first, "signal")->valuestring, "SIGRTMIN+3");
}

TEST(Signal, ReachesTheChildWithoutChangingTheOutcome) {
  SPAWN(p, sh("trap 'echo usr1' USR1; trap 'echo hup; exit 7' HUP; echo up; while :; do sleep 0.01; done"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  EXPECT_EQ(sup_signal(p.get(), SIGUSR1), 0);
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\nusr1\n"));
  EXPECT_EQ(sup_signal(p.get(), SIGHUP), 0);
  ASSERT_TRUE(p.wait());
  auto j = p.result();
  EXPECT_EQ(j.str("outcome"), "exited");
  EXPECT_EQ(j.num("exit_code"), 7);
  EXPECT_EQ(p.output(SUP_STDOUT), "up\nusr1\nhup\n");
  const cJSON* sent = j.get("signals_sent");
  ASSERT_EQ(cJSON_GetArraySize(sent), 2);
  EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 0), "signal")->valuestring, "SIGUSR1");
  EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 1), "signal")->valuestring, "SIGHUP");
  EXPECT_LE(j.signal_at_us(0), j.signal_at_us(1));
  EXPECT_EQ(j.get("forced_kill")->type, cJSON_False);
}

TEST(Signal, AChildKilledByItIsSignaled) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"]}");
  EXPECT_EQ(sup_signal(p.get(), SIGRTMIN + 6), 0);
  ASSERT_TRUE(p.wait());
  auto j = p.result();
  EXPECT_EQ(j.str("outcome"), "signaled");
  EXPECT_EQ(j.str("term_signal"), "SIGRTMIN+6");
  EXPECT_EQ(sup_result_term_signal(p.get()), SIGRTMIN + 6);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
  int sigs[4];
  ASSERT_EQ(sup_result_signals(p.get(), sigs, nullptr, 4), 1);
  EXPECT_EQ(sigs[0], SIGRTMIN + 6);
}

TEST(Signal, ProbeAndFinalAndBadArguments) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"]}");
  EXPECT_EQ(sup_signal(p.get(), 0), 0);
  EXPECT_EQ(sup_signal(p.get(), -1), SUP_EINVAL);
  EXPECT_EQ(sup_signal(p.get(), 65), SUP_EINVAL);
  EXPECT_EQ(sup_signal(nullptr, SIGTERM), SUP_EINVAL);
  EXPECT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_signal(p.get(), 0), SUP_ESRCH);
  EXPECT_EQ(sup_signal(p.get(), SIGTERM), SUP_ESRCH);
  EXPECT_STRNE(sup_strerror(SUP_ESRCH), "unknown error");
  // The probe sent nothing: only the abort's SIGKILL is listed.
  EXPECT_EQ(sup_result_signals(p.get(), nullptr, nullptr, 0), 1);
  EXPECT_EQ(p.result().str("outcome"), "aborted");
}

TEST(Signal, AfterSupsOwnInterruptTheListIsInTimeOrder) {
  SPAWN(p, sh("trap 'echo usr1' USR1; trap 'exit 0' TERM; echo up; while :; do sleep 0.01; done"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  EXPECT_EQ(sup_signal(p.get(), SIGUSR1), 0);
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait());
  auto j = p.result();
  EXPECT_EQ(j.str("outcome"), "interrupted");
  const cJSON* sent = j.get("signals_sent");
  ASSERT_EQ(cJSON_GetArraySize(sent), 2);
  EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 0), "signal")->valuestring, "SIGUSR1");
  EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 1), "signal")->valuestring, "SIGTERM");
}

std::atomic<sup_proc*> g_target{nullptr};
std::atomic<int> g_handler_rc{1};

void on_alarm(int) { g_handler_rc.store(sup_signal(g_target.load(), SIGUSR2)); }

TEST(Signal, FromASignalHandlerAndFromOtherThreads) {
  SPAWN(p, sh("n=0; trap 'n=$((n+1)); echo usr2' USR2; echo up; while [ $n -lt 9 ]; do sleep 0.01; done"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\n"));
  g_target = p.get();
  struct sigaction sa {}, old {};
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, &old);
  raise(SIGALRM);
  sigaction(SIGALRM, &old, nullptr);
  EXPECT_EQ(g_handler_rc.load(), 0);
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "up\nusr2\n"));
  // Eight more, from eight threads, each once the previous one was seen
  // (the shell's trap would coalesce signals pending together).
  for (int i = 2; i <= 9; ++i) {
    std::thread([&] { EXPECT_EQ(sup_signal(p.get(), SIGUSR2), 0); }).join();
    std::string expected = "up\n";
    for (int k = 0; k < i; ++k) expected += "usr2\n";
    ASSERT_TRUE(suptest::wait_for_output(p.get(), expected)) << i;
  }
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().str("outcome"), "exited");
  EXPECT_EQ(sup_result_signals(p.get(), nullptr, nullptr, 0), 9);
}

}  // namespace
