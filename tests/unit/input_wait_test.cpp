// Waiting for input: sup_input_wanted and "input_wait_timeout_ms". A child
// that asks and waits is seen, however it reads (a shell's read, Python's
// input on a terminal, /dev/tty, Node's readline, Go's fmt.Scanln, a reader
// thread, a stop by SIGTTIN); one that sleeps, computes, reads another file
// or is being fed is never counted.
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>

#include "helpers.hpp"

namespace {

using suptest::now_ms;
using suptest::q;
using suptest::sh;

// How long a test waits for a reader to be seen at all. What sup promises,
// seen within 100 ms of the state beginning plus what a loaded machine adds,
// is asserted where it is measured (SchedulerLag's allowance); this is only how
// long a test waits before it says "never" (2 s was once too short for a
// cgroup-mode child under TSan, with tests/load.sh 3 and the suite's other
// passes beside it).
constexpr int kSeenWithinMs = 10000;
constexpr int kNeverOverMs = 1000;

// Read system calls this process (every thread: the library's too) has made.
long reads_so_far() {
  FILE* f = std::fopen("/proc/self/io", "re");
  if (f == nullptr) return -1;
  char line[128];
  long n = -1;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "syscr: %ld", &n) == 1) break;
  std::fclose(f);
  return n;
}

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

// The wall clock in ms, to compare with a stamp the child printed with
// bash's $EPOCHREALTIME right before it began to wait: a wait is timed from
// its real beginning, not from the spawn (under load a child's exec, or its
// `sleep` ending, can take hundreds of ms that no look could shorten).
double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The last "stamp:SECONDS" line of the child's stdout, in ms; -1 if none yet.
double child_stamp_ms(sup_proc* p) {
  std::string out;
  uint64_t pos = 0;
  char buf[4096];
  size_t n = 0;
  while (sup_output_read(p, SUP_STDOUT, &pos, buf, sizeof buf, &n) == 0 && n > 0) out.append(buf, n);
  const size_t at = out.rfind("stamp:");
  if (at == std::string::npos || out.find('\n', at) == std::string::npos) return -1;
  return std::strtod(out.c_str() + at + 6, nullptr) * 1000.0;
}

// {"argv": ["bash", "-c", script], <extra>}: bash for $EPOCHREALTIME.
std::string bash(const std::string& script, const std::string& extra) {
  return "{\"argv\": [\"bash\", \"-c\", " + suptest::q(script) + "], " + extra + "}";
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
  ASSERT_GE(ms_until_waiting(p.get()), 0);
  // The same through a pipe: libuv waits in epoll_wait on fd 0 itself.
  SPAWN(piped, "{\"argv\": [\"node\", \"-e\", "
               "\"require('readline').createInterface({input: process.stdin, output: process.stdout})"
               ".question('name? ', (a) => process.exit(0))\"], \"stdin\": \"pipe\"}");
  started(piped.get(), "name? ");
  ASSERT_GE(ms_until_waiting(piped.get()), 0);
}

TEST(InputWait, GoScanln) {
#ifdef SUP_GO_SCANLN
  SPAWN(p, "{\"argv\": [" + q(SUP_GO_SCANLN) + "], \"stdin\": \"pipe\"}");
  started(p.get(), "name? ");
  ASSERT_GE(ms_until_waiting(p.get()), 0);
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

// poll and select hold their sets in the process's memory, read through
// process_vm_readv: the stdin among other descriptors, not the first.
TEST(InputWait, PythonPollAndSelectOnStdinAmongOthers) {
  for (const char* wait : {"p = select.poll(); p.register(r); p.register(0); p.poll()",
                           "select.select([r, sys.stdin], [], [])"}) {
    SCOPED_TRACE(wait);
    SPAWN(p, "{\"argv\": [\"python3\", \"-c\", "
             "\"import os, select, sys\\nr, w = os.pipe()\\nprint('ready', flush=True)\\n" +
                 std::string(wait) + "\"], \"stdin\": \"pipe\"}");
    started(p.get(), "ready");
    ASSERT_GE(ms_until_waiting(p.get()), 0);
  }
}

// The host side on a terminal of the test's own, its controlling terminal:
// a child reading it from its own process group is stopped by SIGTTIN. The
// host is this test binary again, exec'd in a new session on the terminal
// (no library call between fork and exec), running only the test below.
constexpr const char* kHostOnTerminal = "SUP_TEST_HOST_ON_TERMINAL";

TEST(InputWaitOnTerminal, ChildStoppedReadingIt) {
  if (std::getenv(kHostOnTerminal) == nullptr) GTEST_SKIP() << "run by InputWait.StoppedReadingTheHostsTerminal";
  ASSERT_EQ(isatty(0), 1);
  {
    SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"read x\"], \"stdin\": \"inherit\"}");
    ASSERT_GE(ms_until_waiting(p.get()), 0) << "a stop by SIGTTIN not seen";
  }
  {
    // A stdin that never blocks, but the session has a terminal: the child
    // can still be stopped on it (/dev/tty from a background group), so
    // sup keeps looking.
    SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"read x < /dev/tty\"], \"input_wait_timeout_ms\": 60000}");
    ASSERT_GE(ms_until_waiting(p.get()), 0) << "a stop by SIGTTIN with stdin null not seen";
  }
  // With the limit, the stop ends the child as any wait for input: the
  // interrupt signal, then SIGCONT so that the stopped process acts on it.
  SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"read x\"], \"stdin\": \"inherit\", \"input_wait_timeout_ms\": 200}");
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_EQ(r.str("phase"), "input");
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
  EXPECT_EQ(r.str("term_signal"), "SIGTERM");
  EXPECT_TRUE(cJSON_IsFalse(r.get("forced_kill"))) << sup_result(p.get());
}

TEST(InputWait, StoppedReadingTheHostsTerminal) {
  suptest::rerun_on_own_terminal("InputWaitOnTerminal.ChildStoppedReadingIt", kHostOnTerminal, 30);
}

// Runs this test binary again with only `test` and the marker variable set,
// optionally as another user, and returns its exit status.
int run_self(const std::string& test, const char* marker_name, uid_t uid = 0, gid_t gid = 0,
             bool new_session = false) {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return -1;
  self[len] = '\0';
  std::string filter = "--gtest_filter=" + test;
  char* argv[] = {self, filter.data(), nullptr};
  std::string marker = std::string(marker_name) + "=1";
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(marker.data());
  env.push_back(nullptr);
  pid_t child = fork();
  if (child == 0) {
    if (uid != 0 && (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0)) _exit(126);
    if (new_session && setsid() < 0) _exit(126);
    execve(self, argv, env.data());
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

constexpr const char* kHostAsNobody = "SUP_TEST_HOST_AS_NOBODY";

// A prompt sup may not look at: su, set-uid root, asks for a password on
// its terminal, and a host that is not root may not read its syscall
// file. The answer is "cannot tell", never 0.
TEST(InputWaitAsNobody, SuPasswordPromptIsUnknown) {
  if (std::getenv(kHostAsNobody) == nullptr) GTEST_SKIP() << "run by InputWait.ProcessItMayNotInspect";
  ASSERT_NE(getuid(), 0u);
  SPAWN(p, "{\"argv\": [\"su\", \"-c\", \"true\", \"root\"], \"pty\": true}");
  started(p.get(), "assword");
  int rc = 0;
  ASSERT_TRUE(suptest::eventually([&] { return (rc = sup_input_wanted(p.get())) == SUP_EPERM; }, kSeenWithinMs))
      << "last: " << rc;
  for (int i = 0; i < 10; ++i) {
    rc = sup_input_wanted(p.get());
    EXPECT_EQ(rc, SUP_EPERM) << sup_strerror(rc);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_TRUE(cJSON_IsNull(p.result().get("waiting_for_input"))) << sup_result(p.get());
}

TEST(InputWait, ProcessItMayNotInspect) {
  if (getuid() != 0) GTEST_SKIP() << "needs root to run a host as another user";
  if (access("/usr/bin/su", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/su";
  struct stat st;
  if (stat("/usr/bin/su", &st) != 0 || (st.st_mode & S_ISUID) == 0) GTEST_SKIP() << "su is not set-uid";
  EXPECT_EQ(run_self("InputWaitAsNobody.SuPasswordPromptIsUnknown", kHostAsNobody, 65534, 65534), 0)
      << "the host running as nobody failed (its output is above)";
}

constexpr const char* kHostWithoutTerminal = "SUP_TEST_HOST_WITHOUT_TERMINAL";

// A host whose session has no controlling terminal: a child with a stdin
// that never blocks can never wait for input, so sup never reads /proc for
// it. Counted by the host's read calls, against children that are looked at.
TEST(InputWaitWithoutTerminal, NullStdinIsNeverLookedAt) {
  if (std::getenv(kHostWithoutTerminal) == nullptr) GTEST_SKIP() << "run by InputWait.NothingToLookForWithoutATerminal";
  ASSERT_LT(open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC), 0) << "the session has a terminal";
  constexpr int kChildren = 20;
  constexpr int kWindowMs = 1000;
  std::vector<std::unique_ptr<suptest::Proc>> nulls, pipes;
  for (int i = 0; i < kChildren; ++i) {
    nulls.push_back(std::make_unique<suptest::Proc>(sh("sleep 60", "\"input_wait_timeout_ms\": 500")));
    ASSERT_EQ(nulls.back()->rc(), 0) << nulls.back()->error();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  long before = reads_so_far();
  ASSERT_GE(before, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(kWindowMs));
  for (auto& p : nulls)
    for (int i = 0; i < 5; ++i) ASSERT_EQ(sup_input_wanted(p->get()), 0);
  const long null_reads = reads_so_far() - before;
  // The same children with a "pipe" stdin, whose reads could wait: looked at.
  for (int i = 0; i < kChildren; ++i) {
    pipes.push_back(std::make_unique<suptest::Proc>(sh("sleep 60", pipe_stdin("\"input_wait_timeout_ms\": 500"))));
    ASSERT_EQ(pipes.back()->rc(), 0) << pipes.back()->error();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  before = reads_so_far();
  std::this_thread::sleep_for(std::chrono::milliseconds(kWindowMs));
  const long pipe_reads = reads_so_far() - before;
  std::printf("read calls in %d ms: %ld for %d children with stdin null, %ld with a pipe\n", kWindowMs, null_reads,
              kChildren, pipe_reads);
  // What the test itself reads (/proc/self/io) is a few calls.
  EXPECT_LT(null_reads, 10);
  EXPECT_GT(pipe_reads, kChildren);
  for (auto& p : nulls) {
    ASSERT_EQ(sup_abort(p->get()), 0);
    ASSERT_TRUE(p->wait());
    EXPECT_TRUE(cJSON_IsFalse(p->result().get("waiting_for_input"))) << sup_result(p->get());
  }
}

TEST(InputWait, NothingToLookForWithoutATerminal) {
  EXPECT_EQ(run_self("InputWaitWithoutTerminal.NullStdinIsNeverLookedAt", kHostWithoutTerminal, 0, 0, true), 0)
      << "the host in a session without a terminal failed (its output is above)";
}

TEST(InputWait, TimeoutEndsAReaderAsIdleTimeoutOfPhaseInput) {
  suptest::SchedulerLag lag;
  const double start = now_ms();
  SPAWN(p, bash("echo stamp:$EPOCHREALTIME; read x", pipe_stdin("\"input_wait_timeout_ms\": 300")));
  ASSERT_TRUE(p.wait());
  const double took = now_ms() - start;
  const double waited = wall_ms() - child_stamp_ms(p.get());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_EQ(r.str("phase"), "input");
  EXPECT_EQ(sup_result_phase(p.get()), SUP_PHASE_INPUT);
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
  EXPECT_EQ(r.str("term_signal"), "SIGTERM");
  EXPECT_GE(took, 300);
  // From the read's beginning: the loop's looks (the first 30 ms after the
  // last output, the wait counted from it and confirmed 50 ms later), then
  // the limit, the signal and the shell's end.
  EXPECT_LT(waited, lag.allowance(300 + 150)) << "scheduler lag " << lag.max_ms() << " ms";
}

// A wait that begins after 2 s of silence: the loop's looks have backed
// off, and see it within min(2 s / 2, 4 s) + 150 ms (sup.h), then the limit.
TEST(InputWait, AWaitAfterALongSilenceIsSeenWithinTheBackOff) {
  suptest::SchedulerLag lag;
  const double start = now_ms();
  SPAWN(p, sh("sleep 2; read x", pipe_stdin("\"input_wait_timeout_ms\": 300")));
  ASSERT_TRUE(p.wait(20000));
  const double took = now_ms() - start;
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_EQ(r.str("phase"), "input");
  EXPECT_TRUE(cJSON_IsTrue(r.get("waiting_for_input"))) << sup_result(p.get());
  std::printf("ended after %.0f ms\n", took);
  EXPECT_GE(took, 2000 + 300);
  EXPECT_LT(took, lag.allowance(2000 + 1000 + 150 + 300 + 150)) << "scheduler lag " << lag.max_ms() << " ms";
}

// The same silence seen by a caller: its own call looks at once, and finds
// the tree changed when the shell goes on from `sleep` to `read`.
TEST(InputWait, ACallerSeesAWaitAfterALongSilenceAtOnce) {
  suptest::SchedulerLag lag;
  SPAWN(p, bash("sleep 3; echo stamp:$EPOCHREALTIME; read x", pipe_stdin()));
  ASSERT_EQ(sup_input_wanted(p.get()), 0);  // the loop looks from now on
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  ASSERT_EQ(sup_input_wanted(p.get()), 0);
  // The wait begins ~500 ms from now, right after the stamp.
  ASSERT_GE(ms_until_waiting(p.get()), 0) << "never seen waiting";
  const double seen = wall_ms();
  ASSERT_TRUE(suptest::eventually([&] { return child_stamp_ms(p.get()) > 0; }));
  const double ms = seen - child_stamp_ms(p.get());
  std::printf("seen waiting %.0f ms after the read began\n", ms);
  EXPECT_LT(ms, lag.allowance(150)) << "scheduler lag " << lag.max_ms() << " ms";
}

// Quiet children are looked at less and less often: over a second after
// 3 s of silence, a small part of the read calls of their first second.
TEST(InputWait, QuietChildrenAreLookedAtLessOften) {
  constexpr int kChildren = 20;
  std::vector<std::unique_ptr<suptest::Proc>> procs;
  for (int i = 0; i < kChildren; ++i) {
    procs.push_back(std::make_unique<suptest::Proc>(sh("sleep 60", pipe_stdin("\"input_wait_timeout_ms\": 60000"))));
    ASSERT_EQ(procs.back()->rc(), 0) << procs.back()->error();
  }
  long before = reads_so_far();
  ASSERT_GE(before, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const long first = reads_so_far() - before;
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  before = reads_so_far();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const long later = reads_so_far() - before;
  std::printf("read calls: %ld in the first second, %ld in the fourth\n", first, later);
  EXPECT_GT(first, 0);
  EXPECT_LT(later * 10, first);
}

TEST(InputWait, AReaderWhoseParentEndedIsStillOfTheGroup) {
  // The subshell starts the reader and exits: the reader is reparented out
  // of the main process's descendants, but stays in its group. (An
  // asynchronous command reads /dev/null unless given another stdin.)
  SPAWN(p, sh("exec 3<&0; (sh -c 'read x' <&3 3<&- &); echo up; exec sleep 100", pipe_stdin()));
  started(p.get(), "up");
  ASSERT_GE(ms_until_waiting(p.get()), 0);
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

TEST(InputWaitNot, AnotherPipe) {
  SPAWN(p, sh("echo up; sleep 100 | (read x)", pipe_stdin()));
  started(p.get(), "up");
  never_waiting(p.get());
}

TEST(InputWaitNot, PollOnAnotherPipeOnly) {
  SPAWN(p, "{\"argv\": [\"python3\", \"-c\", "
           "\"import os, select\\nr, w = os.pipe()\\nprint('ready', flush=True)\\n"
           "p = select.poll(); p.register(r); p.poll()\"], \"stdin\": \"pipe\"}");
  started(p.get(), "ready");
  never_waiting(p.get());
}

TEST(InputWaitNot, APipeStdinFedSlowly) {
  SPAWN(p, sh("echo up; cat > /dev/null", pipe_stdin()));
  started(p.get(), "up");
  // A byte every 100 ms. A reader fed within the last 250 ms (sup.h) is
  // being fed; only where this thread itself was held back longer than
  // that (a loaded machine) may a look rightly find it starved.
  const double start = now_ms();
  double last_fed = -1;
  int calls = 0;
  while (now_ms() - start < kNeverOverMs) {
    if (last_fed < 0 || now_ms() - last_fed >= 100) {
      ASSERT_EQ(sup_input_write(p.get(), "x", 1, nullptr), 0);
      last_fed = now_ms();
    }
    const int rc = sup_input_wanted(p.get());
    const double since_fed = now_ms() - last_fed;
    ASSERT_GE(rc, 0) << sup_strerror(rc);
    if (rc == 1) {
      EXPECT_GE(since_fed, 200) << "seen waiting " << since_fed << " ms after a byte";
    }
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(calls, 10);
}

TEST(InputWaitNot, PromptedAndComputing) {
  SPAWN(p, sh("printf 'name? '; while :; do :; done", pipe_stdin()));
  started(p.get(), "name? ");
  never_waiting(p.get());
}

}  // namespace
