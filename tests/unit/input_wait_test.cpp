// Waiting for input: sup_input_wanted and "input_wait_timeout_ms". A child
// that asks and waits is seen, however it reads (a shell's read, Python's
// input on a terminal, /dev/tty, Node's readline, Go's fmt.Scanln, a reader
// thread, a stop by SIGTTIN); one that sleeps, computes, reads another file
// or is being fed is never counted.
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

#include "helpers.hpp"

namespace {

using suptest::now_ms;
using suptest::q;
using suptest::sh;

// What the tests promise: seen within 100 ms of the state beginning, plus
// what a loaded machine adds; asserted with a wide margin.
constexpr int kSeenWithinMs = 2000;
constexpr int kNeverOverMs = 1000;

// Polls sup_input_wanted until it says 1; returns the ms it took, or -1.
double ms_until_waiting(sup_proc* p, int within_ms = kSeenWithinMs) {
  const double start = now_ms();
  while (now_ms() - start < within_ms) {
    int rc = sup_input_wanted(p);
    if (rc == 1) return now_ms() - start;
    EXPECT_EQ(rc, 0) << sup_strerror(rc);
    if (rc < 0) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// sup_input_wanted says 0 every time for over_ms; `each` runs between calls.
void never_waiting(sup_proc* p, const std::function<void()>& each = nullptr, int over_ms = kNeverOverMs) {
  const double start = now_ms();
  int calls = 0;
  while (now_ms() - start < over_ms) {
    if (each) each();
    int rc = sup_input_wanted(p);
    ASSERT_EQ(rc, 0) << "after " << now_ms() - start << " ms: " << sup_strerror(rc);
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(calls, 10);
}

bool have(const char* program) { return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0; }

std::string pipe_stdin(const std::string& extra = "") {
  return "\"stdin\": \"pipe\"" + (extra.empty() ? "" : ", " + extra);
}

// The child must have begun (its first output) before "never" means anything.
void started(sup_proc* p, const std::string& marker) { ASSERT_TRUE(suptest::wait_for_output(p, marker)) << marker; }

TEST(InputWait, ReadFromAPipeNobodyWrites) {
  suptest::SchedulerLag lag;
  SPAWN(p, sh("read x", pipe_stdin()));
  const double ms = ms_until_waiting(p.get());
  ASSERT_GE(ms, 0) << "never seen waiting";
  std::printf("seen waiting after %.0f ms\n", ms);
  // 100 ms of the state beginning (the shell's start, a few ms) plus what
  // the scheduler kept this process's threads waiting.
  EXPECT_LT(ms, lag.allowance(150)) << "scheduler lag " << lag.max_ms() << " ms";
  // Still waiting on the next call: it has not moved.
  EXPECT_EQ(sup_input_wanted(p.get()), 1);
  ASSERT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "aborted");
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
  EXPECT_EQ(sup_input_wanted(p.get()), SUP_ESRCH);
}

TEST(InputWait, PythonInputOnItsTerminal) {
  SPAWN(p, "{\"argv\": [\"python3\", \"-c\", \"input('name? ')\"], \"pty\": true}");
  started(p.get(), "name? ");
  ASSERT_GE(ms_until_waiting(p.get()), 0);
  // Answered, it goes on and ends: not waiting at its end.
  ASSERT_EQ(sup_input_write(p.get(), "ann\n", 4, nullptr), 0);
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_TRUE(cJSON_IsFalse(r.get("waiting_for_input"))) << sup_result(p.get());
}

TEST(InputWait, ReadOfDevTtyIsTheTerminal) {
  SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"echo go; read x < /dev/tty\"], \"pty\": true}");
  started(p.get(), "go");
  ASSERT_GE(ms_until_waiting(p.get()), 0);
}

TEST(InputWait, NodeReadlineQuestion) {
  if (!have("node")) GTEST_SKIP() << "node is not installed";
  SPAWN(p, "{\"argv\": [\"node\", \"-e\", "
           "\"require('readline').createInterface({input: process.stdin, output: process.stdout})"
           ".question('name? ', (a) => { console.log('hi ' + a); process.exit(0); })\"], \"pty\": true}");
  started(p.get(), "name? ");
  ASSERT_GE(ms_until_waiting(p.get(), 5000), 0);
  // The same through a pipe: libuv waits in epoll_wait on fd 0 itself.
  SPAWN(piped, "{\"argv\": [\"node\", \"-e\", "
               "\"require('readline').createInterface({input: process.stdin, output: process.stdout})"
               ".question('name? ', (a) => process.exit(0))\"], \"stdin\": \"pipe\"}");
  started(piped.get(), "name? ");
  ASSERT_GE(ms_until_waiting(piped.get(), 5000), 0);
}

TEST(InputWait, GoScanln) {
#ifdef SUP_GO_SCANLN
  SPAWN(p, "{\"argv\": [" + q(SUP_GO_SCANLN) + "], \"stdin\": \"pipe\"}");
  started(p.get(), "name? ");
  ASSERT_GE(ms_until_waiting(p.get(), 5000), 0);
  ASSERT_EQ(sup_input_write(p.get(), "gopher\n", 7, nullptr), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_NE(p.output(SUP_STDOUT).find("hello gopher"), std::string::npos);
#else
  GTEST_SKIP() << "go was not found when the build was configured: the Go program was not built";
#endif
}

TEST(InputWait, PythonThreadReadsWhileTheMainThreadJoins) {
  SPAWN(p, "{\"argv\": [\"python3\", \"-c\", "
           "\"import sys, threading\\nprint('ready', flush=True)\\n"
           "t = threading.Thread(target=sys.stdin.readline)\\nt.start()\\nt.join()\"], \"stdin\": \"pipe\"}");
  started(p.get(), "ready");
  ASSERT_GE(ms_until_waiting(p.get()), 0);
}

// The host side on a terminal of the test's own, its controlling terminal:
// a child reading it from its own process group is stopped by SIGTTIN.
// Runs in a forked helper (a new session), which reports through its exit
// status: 0 all seen, else the step that failed.
int stopped_reader_helper(int slave) {
  if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) != 0) return 10;
  if (dup2(slave, 0) < 0) return 11;
  sup_proc* p = nullptr;
  if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"read x\"], \"stdin\": \"inherit\"}", &p) != 0) return 12;
  int seen = 0;
  for (int i = 0; i < 200 && seen != 1; ++i) {
    seen = sup_input_wanted(p);
    if (seen < 0) return 13;
    if (seen != 1) usleep(10000);
  }
  sup_release(p);
  if (seen != 1) return 14;
  // With the limit, the stop ends the child as any wait for input: the
  // interrupt signal, then SIGCONT so that the stopped process acts on it.
  if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"read x\"], \"stdin\": \"inherit\", \"input_wait_timeout_ms\": 200}",
                &p) != 0)
    return 15;
  if (sup_poll(p, 10000) != 1) return 16;
  const std::string r = sup_result(p);
  sup_release(p);
  if (r.find("\"outcome\": \"idle_timeout\", \"phase\": \"input\"") == std::string::npos) return 17;
  if (r.find("\"waiting_for_input\": true") == std::string::npos) return 18;
  if (r.find("\"forced_kill\": false") == std::string::npos) return 19;
  return 0;
}

TEST(InputWait, StoppedReadingTheHostsTerminal) {
  int master = -1, slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    close(master);
    _exit(stopped_reader_helper(slave));
  }
  close(slave);
  int status = 0;
  // The master stays open (a hang-up would end the helper's session) and
  // is drained, although nothing should be written to it.
  for (int i = 0; i < 3000; ++i) {
    if (waitpid(helper, &status, WNOHANG) == helper) break;
    char buf[256];
    fcntl(master, F_SETFL, O_NONBLOCK);
    (void)!read(master, buf, sizeof buf);
    usleep(10000);
  }
  close(master);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "helper step " << WEXITSTATUS(status) << " failed";
}

TEST(InputWait, TimeoutEndsAReaderAsIdleTimeoutOfPhaseInput) {
  suptest::SchedulerLag lag;
  const double start = now_ms();
  SPAWN(p, sh("read x", pipe_stdin("\"input_wait_timeout_ms\": 300")));
  ASSERT_TRUE(p.wait());
  const double took = now_ms() - start;
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_EQ(r.str("phase"), "input");
  EXPECT_EQ(sup_result_phase(p.get()), SUP_PHASE_INPUT);
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
  EXPECT_EQ(r.str("term_signal"), "SIGTERM");
  EXPECT_GE(took, 300);
  // The loop's looks: the first 30 ms after the last output, the wait
  // counted from it and confirmed 50 ms later; then the limit, the signal
  // and the shell's end.
  EXPECT_LT(took, lag.allowance(300 + 150)) << "scheduler lag " << lag.max_ms() << " ms";
}

TEST(InputWait, AReaderWhoseParentEndedIsStillOfTheGroup) {
  // The subshell starts the reader and exits: the reader is reparented out
  // of the main process's descendants, but stays in its group. (An
  // asynchronous command reads /dev/null unless given another stdin.)
  SPAWN(p, sh("exec 3<&0; (sh -c 'read x' <&3 3<&- &); echo up; exec sleep 100", pipe_stdin()));
  started(p.get(), "up");
  ASSERT_GE(ms_until_waiting(p.get(), 4000), 0);
}

TEST(InputWait, ReadInCgroupMode) {
  const std::string why = suptest::cgroup_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  SPAWN(p, sh("echo up; sh -c 'read x'", pipe_stdin("\"contain\": \"cgroup\"")));
  started(p.get(), "up");
  ASSERT_GE(ms_until_waiting(p.get()), 0);
}

TEST(InputWait, AskedAndExitedIsFalse) {
  SPAWN(p, sh("read x; echo \"got $x\"", pipe_stdin()));
  ASSERT_GE(ms_until_waiting(p.get()), 0);
  ASSERT_EQ(sup_input_write(p.get(), "y\n", 2, nullptr), 0);
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_TRUE(cJSON_IsFalse(r.get("waiting_for_input"))) << sup_result(p.get());
}

TEST(InputWait, TimeoutDoesNotEndAChildThatIsFed) {
  SPAWN(p, sh("while read x; do echo \"got $x\"; done", pipe_stdin("\"input_wait_timeout_ms\": 400")));
  for (int i = 0; i < 12; ++i) {
    ASSERT_EQ(sup_input_write(p.get(), "y\n", 2, nullptr), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(sup_input_close(p.get()), 0);
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_TRUE(cJSON_IsFalse(r.get("waiting_for_input"))) << sup_result(p.get());
}

TEST(InputWait, NotAskedIsNull) {
  SPAWN(p, sh("echo hi"));
  ASSERT_TRUE(p.wait());
  EXPECT_TRUE(cJSON_IsNull(p.result().get("waiting_for_input"))) << sup_result(p.get());
  EXPECT_EQ(sup_input_wanted(p.get()), SUP_ESRCH);
  EXPECT_EQ(sup_input_wanted(nullptr), SUP_EINVAL);
}

TEST(InputWait, SpecKeyIsChecked) {
  sup_proc* p = nullptr;
  char err[SUP_ERRBUF_SIZE] = "";
  EXPECT_EQ(sup_spawn_ex("{\"argv\": [\"true\"], \"input_wait_timeout_ms\": -5}", &p, err, sizeof err), SUP_EINVAL);
  EXPECT_NE(std::string(err).find("input_wait_timeout_ms"), std::string::npos) << err;
  EXPECT_EQ(sup_spawn_ex("{\"argv\": [\"true\"], \"input_wait_timeout_ms\": \"1s\"}", &p, err, sizeof err), SUP_EINVAL);
  EXPECT_NE(std::string(err).find("input_wait_timeout_ms"), std::string::npos) << err;
}

// ---- Not waiting --------------------------------------------------------

TEST(InputWaitNot, Sleep) {
  SPAWN(p, sh("echo up; sleep 5", pipe_stdin()));
  started(p.get(), "up");
  never_waiting(p.get());
}

TEST(InputWaitNot, BusyLoop) {
  SPAWN(p, sh("echo up; while :; do :; done", pipe_stdin()));
  started(p.get(), "up");
  never_waiting(p.get());
}

TEST(InputWaitNot, AFifoOfItsOwnNobodyWrites) {
  suptest::TempDir dir;
  const std::string fifo = dir.file("f");
  SPAWN(p, sh("mkfifo " + fifo + " && exec 3<>" + fifo + " && echo up && read x <&3", pipe_stdin()));
  started(p.get(), "up");
  never_waiting(p.get());
}

TEST(InputWaitNot, APipeStdinFedSlowly) {
  SPAWN(p, sh("echo up; cat > /dev/null", pipe_stdin()));
  started(p.get(), "up");
  double last = 0;
  never_waiting(p.get(), [&] {
    if (now_ms() - last < 100) return;
    last = now_ms();
    ASSERT_EQ(sup_input_write(p.get(), "x", 1, nullptr), 0);
  });
}

TEST(InputWaitNot, PromptedAndComputing) {
  SPAWN(p, sh("printf 'name? '; while :; do :; done", pipe_stdin()));
  started(p.get(), "name? ");
  never_waiting(p.get());
}

}  // namespace
