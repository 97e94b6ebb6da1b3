// Defects an adversarial review found, each pinned by the behaviour a user
// relies on: fork() in the host, closed stdio, a full fd table, held-back
// streams at a timeout, bytes in a pipe at an idle deadline, live reads at
// the edges of the capture.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <fstream>

#include "helpers.hpp"

// A forked child abandons the parent's engine on purpose (its threads are
// not there to stop): LeakSanitizer, run at exit() in that child, would call
// the abandoned memory leaked. Only the test process itself is checked.
#if defined(__SANITIZE_ADDRESS__)
static const pid_t g_test_pid = getpid();
extern "C" int __lsan_is_turned_off() { return getpid() != g_test_pid; }
#endif

namespace {

using suptest::sh;

// TSan cannot run threads in a forked child of a threaded process.
#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() GTEST_SKIP() << "ThreadSanitizer does not support threads after fork()"
#else
#define SKIP_UNDER_TSAN() (void)0
#endif

// Runs body in a forked child (no exec) and returns its exit status; a
// child that hangs is killed after timeout_ms and reported as -1.
int in_forked_child(const std::function<int()>& body, int timeout_ms = 10000) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = 1;
    try {
      rc = body();
    } catch (...) {
    }
    _exit(rc);
  }
  double end = suptest::now_ms() + timeout_ms;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (suptest::now_ms() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(Fork, InheritedHandlesAreInertAndNewSpawnsWork) {
  SKIP_UNDER_TSAN();
  SPAWN(p, sh("echo parent; sleep 30"));
  sup_proc* inherited = p.get();
  int rc = in_forked_child([&] {
    if (sup_poll(inherited, 0) != SUP_ECHILD) return 2;
    if (sup_abort(inherited) != SUP_ECHILD) return 3;
    if (sup_output_total(inherited, SUP_STDOUT) != SUP_ECHILD) return 4;
    if (sup_result(inherited) != nullptr) return 5;
    sup_release(inherited);  // memory only
    sup_proc* mine = nullptr;
    if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"exit 4\"]}", &mine) != 0) return 6;
    if (sup_poll(mine, 5000) != 1) return 7;
    int code = sup_result_exit_code(mine);
    sup_release(mine);
    return code == 4 ? 0 : 8;
  });
  EXPECT_EQ(rc, 0);
  // The parent's handle and child are untouched by the fork.
  EXPECT_EQ(sup_poll(p.get(), 0), 0);
  EXPECT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_ABORTED);
}

TEST(Fork, ChildThatExitsWithoutSpawningDoesNotHang) {
  SKIP_UNDER_TSAN();
  SPAWN(p, sh("sleep 30"));
  // exit() runs the library's static destructors: they must not wait for
  // threads that do not exist in the child.
  int rc = in_forked_child([] {
    exit(0);
    return 0;
  });
  EXPECT_EQ(rc, 0);
  rc = in_forked_child([] {
    sup_proc* q = nullptr;
    if (sup_spawn("{\"argv\": [\"sleep\", \"30\"]}", &q) != 0) return 2;
    exit(0);  // the fresh engine in the child kills and reaps its child
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

// The host runs out of memory while a child floods its output: supervision
// goes on (the loop thread used to die of std::bad_alloc, and the host with
// it), every byte is counted, and the child's last words are kept. RLIMIT_AS
// stands in for the host's memory running out; the sanitizers reserve
// terabytes of address space, so it is not tried under them.
TEST(Memory, HostOutOfMemoryKeepsSupervisingAndTheLastWords) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "RLIMIT_AS cannot be lowered under a sanitizer's shadow memory";
#endif
  int rc = in_forked_child([] {
    sup_proc* p = nullptr;
    // The child waits until the host's limit is in place (only the timing of
    // the failure depends on it: 200 MB outgrows the limit either way).
    if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"sleep 0.3; head -c 200000000 /dev/zero; echo last words\"],"
                  " \"max_output_bytes\": 1000000000}",
                  &p) != 0)
      return 2;
    long vm_kb = 0;
    if (FILE* f = fopen("/proc/self/status", "r")) {
      char line[256];
      while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0) vm_kb = atol(line + 7);
      fclose(f);
    }
    if (vm_kb == 0) return 3;
    const rlim_t limit = static_cast<rlim_t>(vm_kb + 32 * 1024) * 1024;
    struct rlimit r = {limit, limit};
    if (setrlimit(RLIMIT_AS, &r) != 0) return 4;
    if (sup_poll(p, 60000) != 1) return 5;
    if (sup_result_outcome(p) != SUP_OUTCOME_EXITED || sup_result_exit_code(p) != 0) return 6;
    if (sup_output_total(p, SUP_STDOUT) != 200000011) return 7;
    if (sup_result_omitted_bytes(p, SUP_STDOUT) <= 0) return 8;  // it did run out
    size_t len = 0;
    const char* out = sup_result_output(p, SUP_STDOUT, &len);
    if (out == nullptr || len < 11 || std::string(out + len - 11, 11) != "last words\n") return 9;
    sup_release(p);
    return 0;
  }, 90000);
  EXPECT_EQ(rc, 0);
}

TEST(Stdio, ClosedHostStdioNeverReachesTheLoopsFds) {
  SKIP_UNDER_TSAN();
  int rc = in_forked_child([] {
    close(0);
    close(1);
    close(2);
    sup_proc* p = nullptr;
    if (sup_spawn("{\"argv\": [\"readlink\", \"/proc/self/fd/0\"], \"stdin\": \"inherit\"}", &p) != 0) return 2;
    if (sup_poll(p, 5000) != 1) return 3;
    size_t len = 0;
    const char* out = sup_result_output(p, SUP_STDOUT, &len);
    bool ok = std::string(out, len) == "/dev/null\n";
    sup_release(p);
    // The host's 0-2 are as it left them: closed, not epoll or eventfd.
    for (int fd = 0; fd < 3; ++fd)
      if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) return 4;
    return ok ? 0 : 5;
  });
  EXPECT_EQ(rc, 0);
}

TEST(Limits, FullFdTableAtTheFirstSpawnIsEmfile) {
  SKIP_UNDER_TSAN();
  int rc = in_forked_child([] {
    rlimit few{16, 16};
    setrlimit(RLIMIT_NOFILE, &few);
    while (open("/dev/null", O_RDONLY) >= 0) {
    }
    sup_proc* p = nullptr;
    char why[SUP_ERRBUF_SIZE];
    int part = -1;
    int spawn_rc = sup_spawn_v2("{\"argv\": [\"true\"]}", &p, why, sizeof why, &part);
    return spawn_rc == SUP_EMFILE && part == SUP_PART_SYSTEM ? 0 : 2;
  });
  EXPECT_EQ(rc, 0);
}

TEST(Backpressure, TimeoutWithNoReaderEndsPromptlyAndCountsEverything) {
  suptest::SchedulerLag lag;
  // A held-back stream once made the result wait out the whole grace after
  // the child was dead, then SIGKILL a dead group, and drop the piped bytes.
  SPAWN(p, "{\"argv\": [\"head\", \"-c\", \"1000000\", \"/dev/zero\"], \"backpressure_bytes\": 4096,"
           " \"max_runtime_ms\": 300, \"grace_ms\": 3000}");
  double start = suptest::now_ms();
  ASSERT_TRUE(p.wait(10000));
  EXPECT_LT(suptest::now_ms() - start, lag.allowance(2000)) << "scheduler lag " << lag.max_ms() << " ms";
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_MAX_RUNTIME);
  EXPECT_EQ(sup_result_forced_kill(p.get()), 0);
  // head wrote until SIGTERM or the end: every byte it got out is counted.
  auto r = p.result();
  int64_t total = sup_output_total(p.get(), SUP_STDOUT);
  EXPECT_EQ(static_cast<int64_t>(cJSON_GetObjectItem(r.get("stdout"), "bytes")->valuedouble), total);
  EXPECT_GT(total, 4096);
}

// Held back past backpressure_bytes, a stream is read again only once half
// the window is left unread: each resume refills half a window instead of
// one read, so the loop and the reader do not trade a wake-up per read.
TEST(Backpressure, ResumesAtHalfTheWindowNotJustBelowIt) {
  constexpr uint64_t kWindow = 65536;
  SPAWN(p, "{\"argv\": [\"head\", \"-c\", \"4000000\", \"/dev/zero\"], \"backpressure_bytes\": 65536}");
  auto total = [&] { return static_cast<uint64_t>(sup_output_total(p.get(), SUP_STDOUT)); };
  // Held back: the count stops growing above the window.
  auto settled = [&] {
    uint64_t before = total();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return before > kWindow && total() == before;
  };
  ASSERT_TRUE(suptest::eventually(settled, 5000)) << total();
  uint64_t pos = 0;
  std::vector<char> buf(512);
  auto read_until_unread = [&](uint64_t unread) {
    while (total() - pos > unread) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), total() - pos - unread));
      size_t n = 0;
      ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), want, &n), 0);
      ASSERT_GT(n, 0u);
    }
  };
  // Below the window but above half of it: still held back.
  read_until_unread(kWindow - 4096);
  uint64_t held = total();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(total(), held) << "resumed with " << held - pos << " bytes unread";
  // At half the window: read again, a refill of about half a window or more.
  read_until_unread(kWindow / 2);
  ASSERT_TRUE(suptest::eventually([&] { return total() >= held + kWindow / 2; }, 5000))
      << total() - held << " bytes after resuming";
  ASSERT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
}

TEST(Backpressure, ExitWithUnreadOutputLosesNothingForTheReader) {
  SPAWN(p, "{\"argv\": [\"head\", \"-c\", \"200000\", \"/dev/urandom\"], \"backpressure_bytes\": 4096,"
           " \"max_output_bytes\": 1024}");
  // Read slowly; the child exits while most of its output is unread.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t pos = 0;
  std::string got;
  std::vector<char> buf(1000);
  for (;;) {
    bool final = sup_poll(p.get(), 0) == 1;
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n), 0);
    got.append(buf.data(), n);
    if (n == 0 && final) break;
    if (n == 0) sup_output_wait(p.get(), pos, SUP_POS_IGNORE, 1000);
  }
  EXPECT_EQ(got.size(), 200000u);
  EXPECT_EQ(pos, 200000u);
}

TEST(LiveOutput, PositionPastTheEndIsAnErrorNotAStall) {
  SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"echo a; sleep 0.2; head -c 100000 /dev/zero\"],"
           " \"backpressure_bytes\": 1000}");
  ASSERT_EQ(sup_output_wait(p.get(), 0, SUP_POS_IGNORE, 5000), 1);
  uint64_t pos = 1000000;
  char buf[16];
  size_t n = 7;
  EXPECT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), SUP_EINVAL);
  EXPECT_EQ(pos, 1000000u) << "nothing moved";
  EXPECT_EQ(n, 0u);
  // The stream is not held back for good: a real reader drains it.
  pos = 0;
  std::vector<char> big(65536);
  uint64_t got = 0;
  for (;;) {
    bool final = sup_poll(p.get(), 0) == 1;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, big.data(), big.size(), &n), 0);
    got += n;
    if (n == 0 && final) break;
    if (n == 0) {
      ASSERT_EQ(sup_output_wait(p.get(), pos, SUP_POS_IGNORE, 5000), 1);
    }
  }
  EXPECT_EQ(got, 100002u);
}

TEST(LiveOutput, ZeroCapacityWithNullBuffer) {
  SPAWN(p, sh("echo hi"));
  ASSERT_TRUE(p.wait());
  uint64_t pos = 0;
  size_t n = 9;
  EXPECT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, nullptr, 0, &n), 0);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(pos, 0u);
}

TEST(ResultText, CharacterAcrossHeadAndTailIsWholeWhenNothingWasDropped) {
  SPAWN(p, "{\"argv\": [\"printf\", \"a\\\\342\\\\202\\\\254\"], \"max_output_bytes\": 4}");
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  const cJSON* out = r.get("stdout");
  EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(out, "truncated")));
  EXPECT_STREQ(cJSON_GetObjectItem(out, "captured")->valuestring, "a\xE2\x82\xAC");
}

// A FUSE mount whose directory "slow" takes `seconds` to look up; empty
// path() when FUSE is not available here.
class SlowMount {
 public:
  explicit SlowMount(double seconds) {
    char tmpl[] = "/tmp/sup-slowfs.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return;
    dir_ = tmpl;
    struct stat before {};
    stat(dir_.c_str(), &before);
    server_ = fork();
    if (server_ == 0) {
      std::string secs = std::to_string(seconds);
      execl("/usr/bin/python3", "python3", SUP_SLOWFS_SCRIPT, dir_.c_str(), secs.c_str(), nullptr);
      _exit(127);
    }
    // Mounted once the directory's device changes.
    bool mounted = suptest::eventually(
        [&] {
          struct stat now {};
          return stat(dir_.c_str(), &now) == 0 && now.st_dev != before.st_dev;
        },
        5000);
    if (!mounted) stop();
  }
  ~SlowMount() { stop(); }
  std::string slow_dir() const { return server_ > 0 ? dir_ + "/slow" : std::string(); }

 private:
  void stop() {
    if (server_ > 0) {
      umount2(dir_.c_str(), MNT_DETACH);
      kill(server_, SIGTERM);
      waitpid(server_, nullptr, 0);
      server_ = -1;
    }
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  std::string dir_;
  pid_t server_ = -1;
};

TEST(Design, ASlowSpawnStallsNoOtherChild) {
  suptest::SchedulerLag lag;
  SlowMount fs(2.5);
  if (fs.slow_dir().empty()) GTEST_SKIP() << "no FUSE here (Debian: fuse3, python3-fusepy; root)";
  // A child that talks every 300 ms with a 1 s idle timeout, and one to abort.
  SPAWN(chatty, sh("i=0; while [ $i -lt 12 ]; do echo $i; sleep 0.3; i=$((i+1)); done", "\"idle_timeout_ms\": 1000"));
  SPAWN(victim, sh("sleep 30"));
  std::atomic<bool> spawned{false};
  std::thread slow([&] {
    suptest::Proc p("{\"argv\": [\"pwd\"], \"cwd\": " + suptest::q(fs.slow_dir()) + "}");
    spawned = p.rc() == 0 && p.wait();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The chdir is under way in the slow child; supervision goes on.
  double start = suptest::now_ms();
  EXPECT_EQ(sup_abort(victim.get()), 0);
  ASSERT_TRUE(victim.wait(5000));
  EXPECT_LT(suptest::now_ms() - start, lag.allowance(500)) << "an abort waited for someone else's exec";
  EXPECT_FALSE(spawned.load()) << "the slow spawn finished too early to prove anything";
  slow.join();
  EXPECT_TRUE(spawned.load());
  ASSERT_TRUE(chatty.wait(10000));
  EXPECT_EQ(sup_result_outcome(chatty.get()), SUP_OUTCOME_EXITED) << "output sat unread while the loop was stalled";
}

// A clone runs on its caller's thread (the sentinel, not the cloning
// thread, ends the tree if the host dies): one caller's child stuck in its
// chdir holds up that caller alone, not another thread's spawn.
TEST(Design, ASlowChdirStallsNoOtherSpawn) {
  suptest::SchedulerLag lag;
  SlowMount fs(2.5);
  if (fs.slow_dir().empty()) GTEST_SKIP() << "no FUSE here (Debian: fuse3, python3-fusepy; root)";
  std::atomic<bool> spawned{false};
  std::thread slow([&] {
    suptest::Proc p("{\"argv\": [\"pwd\"], \"cwd\": " + suptest::q(fs.slow_dir()) + "}");
    spawned = p.rc() == 0 && p.wait();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  double start = suptest::now_ms();
  SPAWN(quick, "{\"argv\": [\"true\"]}");
  EXPECT_LT(suptest::now_ms() - start, lag.allowance(500)) << "a spawn waited for someone else's chdir";
  ASSERT_TRUE(quick.wait(5000));
  EXPECT_EQ(sup_result_outcome(quick.get()), SUP_OUTCOME_EXITED);
  EXPECT_FALSE(spawned.load()) << "the slow spawn finished too early to prove anything";
  slow.join();
  EXPECT_TRUE(spawned.load());
}

// max_runtime is a cap on the caller's wait: it counts from the sup_spawn
// call, so 1.5 s of the child's own stalled chdir, before its exec, eats
// into a 1 s cap instead of moving the deadline to 2.5 s after the call.
// The first idle period, though, starts once the child runs: a 1 s idle
// timeout does not end a child whose start took as long the moment it is
// supervised.
TEST(Design, MaxRuntimeCountsFromTheCallAndIdleFromTheChild) {
  suptest::SchedulerLag lag;
  SlowMount fs(1.5);
  if (fs.slow_dir().empty()) GTEST_SKIP() << "no FUSE here (Debian: fuse3, python3-fusepy; root)";
  std::string cwd = "\"cwd\": " + suptest::q(fs.slow_dir());
  int quiet_outcome = -1;
  std::string quiet_out;
  double quiet_returned = 0;
  std::thread quiet([&] {
    double called = suptest::now_ms();
    suptest::Proc p(sh("echo up; sleep 0.2; echo done", "\"idle_timeout_ms\": 1000, " + cwd));
    quiet_returned = suptest::now_ms() - called;
    if (p.rc() == 0 && p.wait()) {
      quiet_outcome = sup_result_outcome(p.get());
      quiet_out = p.output(SUP_STDOUT);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  double before = suptest::now_ms();
  suptest::Proc capped("{\"argv\": [\"sleep\", \"30\"], \"max_runtime_ms\": 1000, " + cwd + "}");
  ASSERT_EQ(capped.rc(), 0);
  double returned = suptest::now_ms() - before;
  EXPECT_GE(returned, 900) << "the spawn was not held up: this proves nothing";
  ASSERT_TRUE(capped.wait(10000));
  double elapsed = suptest::now_ms() - before;
  EXPECT_EQ(sup_result_outcome(capped.get()), SUP_OUTCOME_MAX_RUNTIME);
  EXPECT_LT(elapsed, returned + lag.allowance(700)) << "max_runtime counted from the clone, not from the call";
  double duration = sup_result_duration_ms(capped.get());
  EXPECT_GE(duration, returned - 50) << "duration_ms does not count from the call";
  EXPECT_LE(duration, elapsed);
  int sig = 0;
  double at = 0;
  ASSERT_EQ(sup_result_signals(capped.get(), &sig, &at, 1), 1);
  EXPECT_EQ(sig, SIGTERM);
  EXPECT_GE(at, 1000.0) << "at_ms and the deadline count from different instants";
  quiet.join();
  EXPECT_GE(quiet_returned, 1000) << "the quiet child's start was not held up: this proves nothing";
  EXPECT_EQ(quiet_outcome, SUP_OUTCOME_EXITED) << "idled out before the child could speak";
  EXPECT_EQ(quiet_out, "up\ndone\n");
}

}  // namespace

namespace {

// The state letter of one of this process's threads ('S': asleep in a
// system call), '?' if it is gone.
char thread_state(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return '?';
  size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

}  // namespace

// Once sup_release has begun, a waiter is told SUP_ECANCELED, never 1: a
// waiter that trusted a 1 would read a result whose memory is about to go.
// Release's own kill makes the result final while the waiters still wait.
TEST(Release, EveryWaiterIsCanceledNeverToldFinal) {
  for (int round = 0; round < 30; ++round) {
    sup_proc* p = nullptr;
    ASSERT_EQ(sup_spawn(sh("exec sleep 30", "\"stdin\": \"pipe\"").c_str(), &p), 0);
    // A full stdin pipe, so that sup_input_wait waits.
    std::string chunk(65536, 'x');
    size_t written = 1;
    while (sup_input_write(p, chunk.data(), chunk.size(), &written) == 0 && written > 0) {
    }
    std::atomic<pid_t> tids[3] = {0, 0, 0};
    std::atomic<int> rcs[3] = {-1000, -1000, -1000};
    std::vector<std::thread> waiters;
    for (int i = 0; i < 3; ++i)
      waiters.emplace_back([&, i] {
        tids[i] = static_cast<pid_t>(syscall(SYS_gettid));
        if (i == 0) rcs[i] = sup_poll(p, -1);
        if (i == 1) rcs[i] = sup_input_wait(p, -1);
        if (i == 2) rcs[i] = sup_output_wait(p, 0, 0, -1);
      });
    // All three asleep inside their calls: none begins after the release.
    ASSERT_TRUE(suptest::eventually([&] {
      for (auto& tid : tids)
        if (tid.load() == 0 || thread_state(tid.load()) != 'S') return false;
      return true;
    }, 10000));
    sup_release(p);
    for (auto& t : waiters) t.join();
    EXPECT_EQ(rcs[0].load(), SUP_ECANCELED) << "sup_poll, round " << round;
    EXPECT_EQ(rcs[1].load(), SUP_ECANCELED) << "sup_input_wait, round " << round;
    EXPECT_EQ(rcs[2].load(), SUP_ECANCELED) << "sup_output_wait, round " << round;
    if (HasFailure()) break;
  }
}

// A spawn with tty_foreground that fails in the child (exec or cwd) leaves
// the host's terminal with the host's group: else the host's next read of
// it fails with EIO or stops it with SIGTTIN. The host here is a forked
// child that leads a session on a pseudo-terminal made for the test, in
// its foreground.
TEST(Terminal, AFailedSpawnHandsTheTerminalBack) {
  SKIP_UNDER_TSAN();
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0) << strerror(errno);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave = ptsname(master);
  char dir_template[] = "/tmp/sup-tty-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string garbage = std::string(dir_template) + "/garbage";
  {
    std::ofstream out(garbage);
    out << "\x01\x02\x03 not a program\n";
  }
  ASSERT_EQ(chmod(garbage.c_str(), 0755), 0);
  const std::string tail = ", \"stdin\": \"inherit\", \"tty_foreground\": true}";
  const std::vector<std::pair<std::string, int>> failing = {
      {"{\"argv\": [\"/nonexistent/cmd\"]" + tail, SUP_ENOENT},
      {"{\"argv\": [" + suptest::q(garbage) + "]" + tail, SUP_ENOEXEC},
      {"{\"argv\": [\"true\"], \"cwd\": \"/nonexistent\"" + tail, SUP_ENOENT},
  };
  int status = in_forked_child([&] {
    if (setsid() < 0) return 2;
    int tty = open(slave.c_str(), O_RDWR);
    if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) != 0 || dup2(tty, 0) != 0) return 3;
    if (tcgetpgrp(0) != getpgrp()) return 4;
    for (size_t i = 0; i < failing.size(); ++i) {
      sup_proc* p = nullptr;
      if (sup_spawn(failing[i].first.c_str(), &p) != failing[i].second) return 10 + static_cast<int>(i);
      if (tcgetpgrp(0) != getpgrp()) return 20 + static_cast<int>(i);
    }
    // The child that ran hands it back too.
    sup_proc* p = nullptr;
    if (sup_spawn(("{\"argv\": [\"true\"]" + tail).c_str(), &p) != 0) return 30;
    if (sup_poll(p, 10000) != 1) return 31;
    sup_release(p);
    return tcgetpgrp(0) == getpgrp() ? 0 : 32;
  });
  close(master);
  unlink(garbage.c_str());
  rmdir(dir_template);
  // 20 + i: after failing spawn i, the terminal's foreground group was not
  // the host's.
  EXPECT_EQ(status, 0);
}
