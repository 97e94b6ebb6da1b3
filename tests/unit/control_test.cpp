// sup_interrupt and sup_abort: graceful and hard stops from any thread, latched,
// prompt, and powerless over a result that is already final.
#include <atomic>
#include <fstream>
#include <memory>
#include <thread>

#include "helpers.hpp"

namespace {

using suptest::sh;
using suptest::wait_for_output;

char process_state(pid_t pid) {
  std::string stat = suptest::read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close == std::string::npos ? '?' : stat[close + 2];
}

TEST(Interrupt, KeepsTheChildsLastWords) {
  SPAWN(p, sh("trap 'echo bye; echo last >&2; exit 0' TERM; echo ready; while :; do sleep 0.01; done"));
  ASSERT_TRUE(wait_for_output(p.get(), "ready"));
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "interrupted");
  EXPECT_EQ(p.output(SUP_STDOUT), "ready\nbye\n");
  // dash also reports the killed `sleep` ("Terminated") on stderr first.
  std::string err = p.output(SUP_STDERR);
  EXPECT_EQ(err.substr(err.size() - 5), "last\n") << err;
  EXPECT_EQ(sup_result_exit_code(p.get()), 0);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
  EXPECT_EQ(cJSON_GetArraySize(r.get("signals_sent")), 1);
}

TEST(Interrupt, SecondInterruptDoesNotRestartGrace) {
  suptest::SchedulerLag lag;
  SPAWN(p, sh("trap '' TERM; echo ready; sleep 10", "\"grace_ms\": 300"));
  ASSERT_TRUE(wait_for_output(p.get(), "ready"));
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  const cJSON* sent = r.get("signals_sent");
  ASSERT_EQ(cJSON_GetArraySize(sent), 2);
  const int64_t grace_us = r.signal_at_us(1) - r.signal_at_us(0);
  EXPECT_GE(grace_us, 300000);
  EXPECT_LT(grace_us, 1000 * (300 + lag.allowance(120))) << "the second interrupt restarted the grace period";
  EXPECT_EQ(r.str("outcome"), "interrupted");
  EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
}

TEST(Interrupt, EachGraceEndsOnTimeHoweverTheyInterleave) {
  suptest::SchedulerLag lag;
  // The loop is not woken by an interrupt the caller sent, only by the end
  // of its grace (or the child's exit): with several in flight, the earliest
  // end must still wake it, whatever order they come in, and one that comes
  // after the loop woke must be waited for anew.
  const int graces[] = {600, 150, 350, 100};
  std::vector<std::unique_ptr<suptest::Proc>> procs;
  for (int grace : graces)
    procs.push_back(std::make_unique<suptest::Proc>(
        sh("trap '' TERM; echo ready; sleep 30", "\"grace_ms\": " + std::to_string(grace))));
  for (auto& p : procs) {
    ASSERT_EQ(p->rc(), 0) << p->error();
    ASSERT_TRUE(wait_for_output(p->get(), "ready"));
  }
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(sup_interrupt(procs[i]->get()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // past the earliest end
  EXPECT_EQ(sup_interrupt(procs[3]->get()), 0);
  for (size_t i = 0; i < procs.size(); ++i) {
    suptest::Proc& p = *procs[i];
    ASSERT_TRUE(p.wait(5000));
    EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_INTERRUPTED);
    EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
    int sigs[4];
    double at[4];
    ASSERT_EQ(sup_result_signals(p.get(), sigs, at, 4), 2);
    EXPECT_EQ(sigs[0], SIGTERM);
    EXPECT_EQ(sigs[1], SIGKILL);
    EXPECT_GE(at[1] - at[0], graces[i]) << "grace " << graces[i];
    EXPECT_LT(at[1] - at[0], graces[i] + lag.allowance(150)) << "grace " << graces[i] << ": the kill came late";
  }
}

TEST(Interrupt, AHeldBackChildCanSayItsLastWords) {
  // Nobody reads, so backpressure holds stdout back and the shell blocks
  // writing to it. The interrupt must get its pipe read again at once (the
  // loop is woken for it, not left asleep until the grace's end), so that
  // the write finishes, the trap runs and its words come out.
  SPAWN(p, sh("trap 'echo bye; exit 0' TERM; while :; do printf '%01000d' 0; done",
              "\"backpressure_bytes\": 4096, \"grace_ms\": 3000"));
  auto total = [&] { return sup_output_total(p.get(), SUP_STDOUT); };
  ASSERT_TRUE(suptest::eventually([&] {
    int64_t before = total();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return before > 4096 && total() == before;
  }, 5000)) << "not held back: " << total();
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait(5000));
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_INTERRUPTED);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0) << "held back until the grace ran out";
  EXPECT_EQ(sup_result_exit_code(p.get()), 0);
  const std::string out = p.output(SUP_STDOUT);
  ASSERT_GE(out.size(), 4u);
  EXPECT_EQ(out.substr(out.size() - 4), "bye\n");
}

TEST(Interrupt, StoppedChildStillEndsGracefully) {
  SPAWN(p, sh("trap 'echo continued; exit 3' TERM; kill -STOP $$; echo never"));
  pid_t pid = sup_pid(p.get());
  ASSERT_TRUE(suptest::eventually([&] { return process_state(pid) == 'T'; }));
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait(3000));
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_INTERRUPTED);
  EXPECT_EQ(sup_result_exit_code(p.get()), 3);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
  EXPECT_EQ(p.output(SUP_STDOUT), "continued\n");
}

TEST(Abort, IsPrompt) {
  suptest::SchedulerLag lag;
  SPAWN(p, sh("trap '' TERM; echo ready; sleep 30"));
  ASSERT_TRUE(wait_for_output(p.get(), "ready"));
  double before = suptest::now_ms();
  EXPECT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_LT(suptest::now_ms() - before, lag.allowance(500)) << "scheduler lag " << lag.max_ms() << " ms";
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "aborted");
  EXPECT_EQ(r.str("term_signal"), "SIGKILL");
  EXPECT_TRUE(cJSON_IsTrue(r.get("forced_kill")));
  EXPECT_EQ(p.output(SUP_STDOUT), "ready\n");
  // The kill went out from sup_abort's thread without waking the loop, which
  // took it as its own when it saw the exit: recorded once, at its time.
  const cJSON* sent = r.get("signals_sent");
  ASSERT_EQ(cJSON_GetArraySize(sent), 1);
  EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 0), "signal")->valuestring, "SIGKILL");
  double kill_at = cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 0), "at_ms")->valuedouble;
  EXPECT_GT(kill_at, 0.0);
  EXPECT_LE(kill_at, r.num("duration_ms"));
}

// Spawns /bin/true 300 times and ends each at another point of its short
// life with `stop` (sup_abort or sup_interrupt), which signals the group from
// the caller's thread while the main process runs; the loop takes the signal
// as its own. Each child ends either "exited" with nothing sent (it exited
// by itself first) or `outcome` with exactly `signal` recorded, once: never
// "signaled" (a signal the loop did not know of), never a second one; and
// `stop` returned 0 for each it ended, even when the end was published
// before `stop` returned: every other child has a thread waiting in
// sup_poll, which sees the exit and publishes the result itself.
// *stopped counts those that did not exit first.
void race_stop_against_exit(int (*stop)(sup_proc*), const std::string& outcome, const char* signal,
                            bool forced_kill, int* stopped) {
  int exited = 0;
  *stopped = 0;
  for (int i = 0; i < 300; ++i) {
    SPAWN(p, "{\"argv\": [\"/bin/true\"]}");
    std::thread waiter;
    if (i % 2 == 0) waiter = std::thread([&p] { sup_poll(p.get(), 10000); });
    if (i % 3 == 1) std::this_thread::sleep_for(std::chrono::microseconds(50 * (i % 17)));
    int rc = stop(p.get());
    if (waiter.joinable()) waiter.join();
    EXPECT_TRUE(rc == 0 || rc == 1) << rc;
    ASSERT_TRUE(p.wait());
    auto r = p.result();
    int sent = cJSON_GetArraySize(r.get("signals_sent"));
    if (r.str("outcome") == "exited") {
      ++exited;
      EXPECT_EQ(sup_result_exit_code(p.get()), 0);
      EXPECT_EQ(sent, 0) << i;
      EXPECT_FALSE(cJSON_IsTrue(r.get("forced_kill"))) << i;
      continue;
    }
    ++*stopped;
    EXPECT_EQ(r.str("outcome"), outcome) << i << ": " << sup_result(p.get());
    EXPECT_EQ(rc, 0) << i;
    EXPECT_EQ(sent, 1) << i << ": " << sup_result(p.get());
    if (sent != 1) continue;
    EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(r.get("signals_sent"), 0), "signal")->valuestring, signal);
    // The signal reached it, or it was exiting already (a zombie ignores it).
    if (r.str("term_signal") != signal) {
      EXPECT_EQ(sup_result_exit_code(p.get()), 0) << sup_result(p.get());
    }
    EXPECT_EQ(cJSON_IsTrue(r.get("forced_kill")), forced_kill) << i;
  }
  std::printf("exited %d, %s %d\n", exited, outcome.c_str(), *stopped);
}

TEST(Abort, RacingTheExitIsEitherExitedOrAbortedNeverBoth) {
  int aborted = 0;
  race_stop_against_exit(sup_abort, "aborted", "SIGKILL", true, &aborted);
  // Aborted right after the spawn, most children never reach their exit.
  EXPECT_GT(aborted, 0);
}

TEST(Interrupt, RacingTheExitIsEitherExitedOrInterruptedNeverBoth) {
  int interrupted = 0;
  // /bin/true dies of SIGTERM: no SIGKILL follows.
  race_stop_against_exit(sup_interrupt, "interrupted", "SIGTERM", false, &interrupted);
  EXPECT_GT(interrupted, 0);
}

// Four threads interrupt at once while the idle timeout comes due: the
// interrupt signal goes out once, whoever sends it, and the grace still ends
// in one SIGKILL for a child that ignores it. The idle clock starts at
// "ready" (first_output_timeout_ms), after the trap: counted from the clone,
// 20 ms could end a shell that a loaded machine had not yet run that far.
TEST(Interrupt, ManyCallersAndATimeoutSendItOnce) {
  for (int i = 0; i < 40; ++i) {
    SPAWN(p, sh("trap '' TERM; echo ready; sleep 30",
                "\"grace_ms\": 50, \"idle_timeout_ms\": 20, \"first_output_timeout_ms\": 30000"));
    ASSERT_TRUE(wait_for_output(p.get(), "ready"));
    std::this_thread::sleep_for(std::chrono::microseconds(i * 500));
    std::vector<std::thread> callers;
    for (int t = 0; t < 4; ++t) callers.emplace_back([&] { sup_interrupt(p.get()); });
    for (auto& t : callers) t.join();
    ASSERT_TRUE(p.wait());
    auto r = p.result();
    const cJSON* sent = r.get("signals_sent");
    ASSERT_EQ(cJSON_GetArraySize(sent), 2) << i << ": " << sup_result(p.get());
    EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 0), "signal")->valuestring, "SIGTERM");
    EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 1), "signal")->valuestring, "SIGKILL");
    EXPECT_GE(r.signal_at_us(1) - r.signal_at_us(0), 50000) << i << ": " << sup_result(p.get());
    std::string outcome = r.str("outcome");
    EXPECT_TRUE(outcome == "interrupted" || outcome == "idle_timeout") << outcome;
    EXPECT_TRUE(cJSON_IsTrue(r.get("forced_kill")));
  }
}

// An interrupt and an abort from two threads at once: the abort wins the
// outcome, each signal is recorded at most once, in the order sent, and no
// interrupt follows the kill.
TEST(Interrupt, RacingAnAbortRecordsEachSignalOnceInOrder) {
  for (int i = 0; i < 200; ++i) {
    SPAWN(p, sh("trap '' TERM; echo ready; sleep 30"));
    ASSERT_TRUE(wait_for_output(p.get(), "ready"));
    // Both threads leave the starting line together, so that the two calls
    // overlap: the interrupt's check that nothing was killed yet, and the
    // abort's kill.
    std::atomic<int> ready{0};
    auto together = [&] {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
    };
    std::thread a([&] {
      together();
      sup_interrupt(p.get());
    });
    std::thread b([&] {
      together();
      sup_abort(p.get());
    });
    a.join();
    b.join();
    ASSERT_TRUE(p.wait());
    auto r = p.result();
    EXPECT_EQ(r.str("outcome"), "aborted") << i;
    const cJSON* sent = r.get("signals_sent");
    int n = cJSON_GetArraySize(sent);
    ASSERT_TRUE(n == 1 || n == 2) << i << ": " << sup_result(p.get());
    std::string last = cJSON_GetObjectItem(cJSON_GetArrayItem(sent, n - 1), "signal")->valuestring;
    std::string first = cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 0), "signal")->valuestring;
    EXPECT_EQ(last, "SIGKILL") << i << ": " << sup_result(p.get());
    if (n == 2) {
      EXPECT_EQ(first, "SIGTERM") << i;
      EXPECT_LE(cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 0), "at_ms")->valuedouble,
                cJSON_GetObjectItem(cJSON_GetArrayItem(sent, 1), "at_ms")->valuedouble);
    }
  }
}

TEST(Abort, DuringGraceWinsOverInterrupt) {
  suptest::SchedulerLag lag;
  SPAWN(p, sh("trap '' TERM; echo ready; sleep 30", "\"grace_ms\": 5000"));
  ASSERT_TRUE(wait_for_output(p.get(), "ready"));
  sup_interrupt(p.get());
  double before = suptest::now_ms();
  sup_abort(p.get());
  ASSERT_TRUE(p.wait());
  EXPECT_LT(suptest::now_ms() - before, lag.allowance(500)) << "scheduler lag " << lag.max_ms() << " ms";
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_ABORTED);
}

TEST(Priority, TimeoutAfterInterruptChangesNothing) {
  // A user's interrupt is latched: a deadline that comes due during its grace
  // neither turns it into a timeout nor cuts the grace short (it once did both).
  SPAWN(p, sh("trap 'sleep 0.6; echo bye; exit 0' TERM; echo ready; while :; do sleep 0.05; done",
              "\"grace_ms\": 3000, \"idle_timeout_ms\": 200, \"max_runtime_ms\": 400"));
  ASSERT_TRUE(wait_for_output(p.get(), "ready"));
  sup_interrupt(p.get());
  ASSERT_TRUE(p.wait(5000));
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_INTERRUPTED);
  EXPECT_EQ(sup_result_exit_code(p.get()), 0);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
  int sigs[4];
  double at[4];
  ASSERT_EQ(sup_result_signals(p.get(), sigs, at, 4), 1);
  EXPECT_EQ(sigs[0], SIGTERM);
  size_t len = 0;
  const char* out = sup_result_output(p.get(), SUP_STDOUT, &len);
  EXPECT_EQ(std::string(out, len), "ready\nbye\n");
}

TEST(Priority, InterruptAfterTimeoutKeepsTimeout) {
  SPAWN(p, sh("trap '' TERM; sleep 30", "\"grace_ms\": 300, \"idle_timeout_ms\": 100"));
  // The idle timeout fires at 100 ms and starts the grace period; the
  // interrupt lands inside it.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  sup_interrupt(p.get());
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT);
}

TEST(Final, AbortAndInterruptAfterCompletionChangeNothing) {
  SPAWN(p, sh("echo done; exit 5"));
  ASSERT_TRUE(p.wait());
  std::string before = sup_result(p.get());
  EXPECT_EQ(sup_abort(p.get()), 1);
  EXPECT_EQ(sup_interrupt(p.get()), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(std::string(sup_result(p.get())), before);
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED);
  EXPECT_EQ(sup_result_exit_code(p.get()), 5);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
}

TEST(Threads, AbortFromAnotherThreadWakesAWaitingPoll) {
  suptest::SchedulerLag lag;
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"]}");
  std::atomic<int> polled{-100};
  std::thread waiter([&] { polled = sup_poll(p.get(), -1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(polled.load(), -100);
  double before = suptest::now_ms();
  sup_abort(p.get());
  waiter.join();
  EXPECT_EQ(polled.load(), 1);
  EXPECT_LT(suptest::now_ms() - before, lag.allowance(500)) << "scheduler lag " << lag.max_ms() << " ms";
}

TEST(Poll, TimeoutCountsFromTheCallAcrossTheMainProcessExit) {
  suptest::SchedulerLag lag;
  // sup_poll first sleeps on the main process's exit, then on the result.
  // Here the shell exits at about 300 ms, but the sleeper it leaves (ignoring
  // SIGTERM, holding the pipes) keeps the result open until its SIGKILL,
  // after a 2 s grace: a 500 ms poll must end at 500 ms, neither at the exit
  // nor 500 ms after it.
  SPAWN(p, sh(suptest::term_ignoring_sleeper("sleep 0.3"), "\"grace_ms\": 2000"));
  double before = suptest::now_ms();
  EXPECT_EQ(sup_poll(p.get(), 500), 0);
  double waited = suptest::now_ms() - before;
  EXPECT_GE(waited, 499.0);
  EXPECT_LT(waited, 500 + lag.allowance(250)) << "scheduler lag " << lag.max_ms() << " ms";
  // The main process has exited by now; the result is still open.
  EXPECT_EQ(sup_poll(p.get(), 0), 0);
  before = suptest::now_ms();
  EXPECT_EQ(sup_poll(p.get(), 100), 0);
  EXPECT_GE(suptest::now_ms() - before, 99.0);
  ASSERT_EQ(sup_poll(p.get(), -1), 1);
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
}

TEST(Threads, ManyConcurrentRequestsAreLatchedOnce) {
  SPAWN(p, sh("trap 'exit 9' TERM; echo ready; while :; do sleep 0.01; done", "\"grace_ms\": 2000"));
  ASSERT_TRUE(wait_for_output(p.get(), "ready"));
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 100; ++j) sup_interrupt(p.get());
    });
  for (auto& t : threads) t.join();
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "interrupted");
  EXPECT_EQ(cJSON_GetArraySize(r.get("signals_sent")), 1);
  EXPECT_EQ(sup_result_exit_code(p.get()), 9);
}

sup_proc* g_from_handler = nullptr;
void abort_handler(int) { sup_abort(g_from_handler); }

TEST(Signals, AbortFromASignalHandler) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"]}");
  g_from_handler = p.get();
  struct sigaction sa {}, old{};
  sa.sa_handler = abort_handler;
  sigaction(SIGUSR1, &sa, &old);
  raise(SIGUSR1);
  sigaction(SIGUSR1, &old, nullptr);
  ASSERT_TRUE(p.wait(2000));
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_ABORTED);
}

TEST(Release, WhileRunningLeavesNoOrphanAndNoZombie) {
  sup_proc* p = nullptr;
  ASSERT_EQ(sup_spawn(sh("sleep 30 & echo $!; sleep 30").c_str(), &p), 0);
  pid_t pid = sup_pid(p);
  std::string out;
  uint64_t pos = 0;
  ASSERT_TRUE(suptest::eventually([&] {
    char buf[64];
    size_t n = 0;
    sup_output_read(p, SUP_STDOUT, &pos, buf, sizeof buf, &n);
    out.append(buf, n);
    return out.find('\n') != std::string::npos;
  }));
  pid_t grandchild = std::stoi(out);
  ASSERT_TRUE(suptest::running(grandchild));
  sup_release(p);
  EXPECT_TRUE(suptest::eventually([&] { return !suptest::running(grandchild); }, 500));
  // Reaped, not a zombie: the pid is gone from /proc.
  EXPECT_NE(access(("/proc/" + std::to_string(pid)).c_str(), F_OK), 0);
}

}  // namespace

namespace {

// A main process that leaves its own group for the host's (as a shell doing
// job control may): it says "moved" once it has, then runs `then` (Perl).
std::string joins_host_group(const std::string& then, const std::string& extra = "") {
  std::string script = "setpgrp(0, " + std::to_string(getpgrp()) + ") or die \"setpgrp: $!\"; $| = 1; print \"moved\\n\"; " + then;
  std::string spec = "{\"argv\": [\"perl\", \"-e\", " + suptest::q(script) + "]";
  if (!extra.empty()) spec += ", " + extra;
  return spec + "}";
}

bool said_moved(sup_proc* p) {
  return suptest::eventually([p] { return sup_output_total(p, SUP_STDOUT) >= 6; }, 10000);
}

std::vector<std::string> signal_names(const suptest::Json& r) {
  std::vector<std::string> names;
  const cJSON* item = nullptr;
  cJSON_ArrayForEach(item, r.get("signals_sent")) {
    const cJSON* sig = cJSON_GetObjectItemCaseSensitive(item, "signal");
    names.push_back(cJSON_IsString(sig) ? sig->valuestring : "?");
  }
  return names;
}

}  // namespace

// sup reaches the main process through its pidfd as well as its group: one
// that left the group is still interrupted, killed and reaped.
TEST(OutOfGroup, MainProcessIsInterrupted) {
  SPAWN(p, joins_host_group("sleep 30;"));
  ASSERT_TRUE(said_moved(p.get()));
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait(10000)) << "the interrupt did not reach the main process";
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "interrupted");
  EXPECT_EQ(r.str("term_signal"), "SIGTERM");
  EXPECT_EQ(signal_names(r), std::vector<std::string>{"SIGTERM"});
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
}

TEST(OutOfGroup, MainProcessIsKilledAfterGraceAndReaped) {
  pid_t pid = 0;
  {
    SPAWN(p, joins_host_group("$SIG{TERM} = 'IGNORE'; sleep 30;", "\"idle_timeout_ms\": 200, \"grace_ms\": 100"));
    pid = sup_pid(p.get());
    ASSERT_TRUE(said_moved(p.get()));
    ASSERT_TRUE(p.wait(10000)) << "the timeout's signals did not reach the main process";
    auto r = p.result();
    EXPECT_EQ(r.str("outcome"), "idle_timeout");
    EXPECT_EQ(r.str("term_signal"), "SIGKILL");
    EXPECT_EQ(signal_names(r), (std::vector<std::string>{"SIGTERM", "SIGKILL"}));
    EXPECT_EQ(sup_result_forced_kill(p.get()), 1);
  }
  // Released: reaped, neither running nor a zombie (the pid is gone, or a
  // stranger's).
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (std::getline(stat, line)) {
    EXPECT_EQ(line.find("(perl) Z"), std::string::npos) << line;
  }
}

TEST(OutOfGroup, ReleaseEndsItAtOnce) {
  suptest::SchedulerLag lag;
  sup_proc* p = nullptr;
  ASSERT_EQ(sup_spawn(joins_host_group("sleep 30;").c_str(), &p), 0);
  const pid_t pid = sup_pid(p);
  ASSERT_TRUE(said_moved(p));
  const double start = suptest::now_ms();
  sup_release(p);
  const double took = suptest::now_ms() - start;
  // A SIGKILL and a reap take well under a millisecond: 100 ms is generous,
  // and a loaded machine may add what it made this process's threads wait.
  // Without the pidfd the release waited for the child's whole life (30 s).
  EXPECT_LT(took, lag.allowance(100)) << "scheduler lag " << lag.max_ms() << " ms";
  EXPECT_FALSE(suptest::running(pid));
}

// signals_sent lists only signals that reached a process: a main process
// that exits 0 by itself, leaving a setsid'd holder of its pipe that no
// group signal can reach, shows none, and no forced kill.
TEST(OutOfGroup, NothingSentThatReachedNobody) {
  // The main process exits only once the holder is out of its group.
  SPAWN(p, sh("d=$(mktemp -d); mkfifo $d/out; setsid sh -c \"echo >$d/out; exec sleep 0.5\" & "
              "read x <$d/out; rm -r $d; exit 0",
              "\"grace_ms\": 50"));
  ASSERT_TRUE(p.wait(10000));
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_EQ(r.num("exit_code"), 0);
  EXPECT_TRUE(signal_names(r).empty()) << sup_result(p.get());
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
}

TEST(OutOfGroup, ANaturalExitShowsNoSignal) {
  SPAWN(p, sh("exit 0"));
  ASSERT_TRUE(p.wait(10000));
  auto r = p.result();
  EXPECT_TRUE(signal_names(r).empty()) << sup_result(p.get());
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
}
