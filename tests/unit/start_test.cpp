// Starting a child: calls that reach it in the moment after sup_spawn
// returns, before the loop thread watches it, and a start the loop cannot
// make (epoll_ctl failing, as when out of memory or past epoll's watch
// limit), or cannot start again once stopped, injected here by interposing
// epoll_ctl for libuv and the library.
#include <dlfcn.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "helpers.hpp"

namespace {

// The kind of descriptor (as /proc/self/fd names it, by prefix) whose next
// EPOLL_CTL_ADD fails with ENOSPC; null: none. One-shot.
std::atomic<const char*> g_fail_add{nullptr};
// The kind of descriptor whose next EPOLL_CTL_ADD is held up by g_delay_ms
// first (the loop thread, busy elsewhere, starts nothing meanwhile). One-shot.
std::atomic<const char*> g_delay_add{nullptr};
std::atomic<int> g_delay_ms{0};
std::atomic<bool> g_delaying{false};

bool fd_is(int fd, const char* kind) {
  char link[64], target[128];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0) return false;
  target[n] = '\0';
  return std::strncmp(target, kind, std::strlen(kind)) == 0;
}

}  // namespace

// libuv (a shared library) reaches epoll_ctl through its PLT: this
// executable's definition, exported (export_dynamic in meson.build), comes
// first.
extern "C" int epoll_ctl(int epfd, int op, int fd, struct epoll_event* event) {
  using Real = int (*)(int, int, int, struct epoll_event*);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "epoll_ctl"));
  const char* slow = g_delay_add.load();
  if (op == EPOLL_CTL_ADD && slow != nullptr && fd_is(fd, slow) && g_delay_add.compare_exchange_strong(slow, nullptr))
  {
    g_delaying = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(g_delay_ms.load()));
    g_delaying = false;
  }
  const char* kind = g_fail_add.load();
  if (op == EPOLL_CTL_ADD && kind != nullptr && fd_is(fd, kind) && g_fail_add.compare_exchange_strong(kind, nullptr)) {
    errno = ENOSPC;
    return -1;
  }
  return real(epfd, op, fd, event);
}

namespace {

using suptest::sh;

std::string first_signal(const suptest::Json& r) {
  const cJSON* first = cJSON_GetArrayItem(r.get("signals_sent"), 0);
  const cJSON* sig = cJSON_GetObjectItemCaseSensitive(first, "signal");
  return cJSON_IsString(sig) ? sig->valuestring : "<none>";
}

// A child run to its end with the loop watching it throughout: its result
// is waited for through sup_fd, not sup_poll, whose caller would take the
// watches over. libuv adds a started watch's fd to its epoll only in its
// next step; a loop that publishes the result has taken that step, so no
// add of this child's is left to take an injected failure meant for the
// next one. (With sup_poll, a caller could see the result while a loaded
// loop had not yet got that far.)
void warm_up() {
  SPAWN(warm, sh("true"));
  pollfd done{sup_fd(warm.get()), POLLIN, 0};
  ASSERT_GE(done.fd, 0);
  ASSERT_EQ(poll(&done, 1, 10000), 1);
  ASSERT_EQ(sup_poll(warm.get(), 0), 1);
}

// A child sup could not watch (the injected refusal taken) is ended by sup,
// and that is its result.
void expect_ended_by_sup(suptest::Proc& p) {
  ASSERT_TRUE(p.wait(5000)) << "a child sup could not watch was left running";
  EXPECT_EQ(g_fail_add.load(), nullptr) << "no watch was refused: the test proves nothing";
  suptest::Json r = p.result();
  EXPECT_EQ(r.str("outcome"), "aborted");
  EXPECT_TRUE(cJSON_IsTrue(r.get("forced_kill")));
  EXPECT_FALSE(suptest::running(sup_pid(p.get())));
}

// After a refused watch the engine goes on with the next child.
void expect_engine_goes_on() {
  SPAWN(after, sh("echo fine"));
  ASSERT_TRUE(after.wait());
  EXPECT_EQ(after.output(SUP_STDOUT), "fine\n");
}

TEST(Start, AWatchTheLoopCannotMakeEndsTheChildAndThatIsItsResult) {
  suptest::TempDir dir;
  for (const char* kind : {"anon_inode:[pidfd]", "pipe:"}) {
    SCOPED_TRACE(kind);
    std::string pidfile = dir.file(std::string("bg") + (kind[0] == 'p' ? "-pipe" : "-pidfd"));
    // The background sleep holds no pipe (>/dev/null): only the group kill
    // ends it.
    std::string script = "sleep 30 >/dev/null 2>&1 & echo $! >" + pidfile + "; exec sleep 30";
    // Spawned once first, so that the engine's own watches are made.
    warm_up();
    g_fail_add = kind;
    SPAWN(p, sh(script));
    ASSERT_NO_FATAL_FAILURE(expect_ended_by_sup(p));
    EXPECT_EQ(first_signal(p.result()), "SIGKILL");
    pid_t bg = static_cast<pid_t>(std::atoi(suptest::read_file(pidfile).c_str()));
    if (bg > 0) {
      EXPECT_TRUE(suptest::eventually([&] { return !suptest::running(bg); })) << "the group outlived it";
    }
  }
  g_fail_add = nullptr;
  expect_engine_goes_on();
}

// Held back: more than backpressure_bytes came, and nothing comes any more.
bool held_back(sup_proc* p, int64_t window) {
  return suptest::eventually([&] {
    int64_t before = sup_output_total(p, SUP_STDOUT);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return before > window && sup_output_total(p, SUP_STDOUT) == before;
  }, 5000);
}

// The same, for a child that wrote first_line before: kept.
void expect_ended_unwatched(suptest::Proc& p, const char* first_line) {
  ASSERT_NO_FATAL_FAILURE(expect_ended_by_sup(p));
  EXPECT_EQ(p.output(SUP_STDOUT).rfind(first_line, 0), 0u) << "what it wrote before was lost";
}

// While a caller waits in sup_poll it watches the child itself, and the
// loop stops its own watches (their fds leave libuv's epoll); they are
// started again when the caller leaves. libuv adds them back in its next
// step and aborts the whole host if epoll_ctl refuses then: a refusal must
// end this child, as at its start, and the host and engine go on.
TEST(Start, AWatchTheLoopCannotStartAgainEndsTheChildNotTheHost) {
  for (const char* kind : {"anon_inode:[pidfd]", "pipe:"}) {
    SCOPED_TRACE(kind);
    SPAWN(p, sh("echo ready; exec sleep 30"));
    ASSERT_TRUE(suptest::wait_for_output(p.get(), "ready")) << "the loop never read the child";
    g_fail_add = kind;
    // A short wait: the loop steps back while it lasts and watches again
    // after. Repeated, in case a loaded loop did not get to step back.
    for (int i = 0; i < 20 && g_fail_add.load() != nullptr; ++i) {
      if (sup_poll(p.get(), 50) == 1) break;
      suptest::eventually([] { return g_fail_add.load() == nullptr; }, 100);
    }
    ASSERT_NO_FATAL_FAILURE(expect_ended_unwatched(p, "ready\n"));
    g_fail_add = nullptr;
  }
  expect_engine_goes_on();
}

// Backpressure stops a stream's watch; a reader catching up starts it again,
// and so does the child's end (an interrupt here), which reads every pipe at
// full speed. Either start refused ends the child, and not the host.
TEST(Start, AHeldBackStreamTheLoopCannotWatchAgainEndsTheChildNotTheHost) {
  for (bool by_reader : {true, false}) {
    SCOPED_TRACE(by_reader ? "a reader catches up" : "an interrupt lifts backpressure");
    SPAWN(p, sh("echo ready; trap 'echo bye; exit 0' TERM; while :; do printf '%01000d' 0; done",
                "\"backpressure_bytes\": 4096, \"grace_ms\": 5000"));
    ASSERT_TRUE(held_back(p.get(), 4096)) << "not held back";
    g_fail_add = "pipe:";
    if (by_reader) {
      // All of it: the stream is read again once less than half the window
      // is unread.
      uint64_t pos = 0;
      std::vector<char> buf(65536);
      const auto held = static_cast<uint64_t>(sup_output_total(p.get(), SUP_STDOUT));
      while (pos < held) {
        size_t n = 0;
        ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n), 0);
        ASSERT_GT(n, 0u);
      }
    } else {
      ASSERT_EQ(sup_interrupt(p.get()), 0);
    }
    ASSERT_NO_FATAL_FAILURE(expect_ended_unwatched(p, "ready\n"));
    g_fail_add = nullptr;
  }
  expect_engine_goes_on();
}

// sup_spawn returns once the child has exec'd, while the loop thread may
// still be busy elsewhere (here with a firehose): what the caller asks for
// at once is latched and carried out when the loop takes the child on. The
// interrupt signal here is SIGWINCH, which a child ignores from its first
// instruction: only the grace period's SIGKILL, the loop's part of the
// request, ends it.
TEST(Start, APipeTakenByItsReaderBeforeTheLoopStartsTheChildCanStillBeRefused) {
  // The loop is held up in the first child's start() (its pidfd's watch,
  // and it has no pipe), while the second child's reader takes its stdout
  // (backpressure set: the reader reads the pipe itself) before the loop
  // has started it. Then the loop cannot make that pipe's watch: the child
  // is ended, and its reader's fd says so.
  warm_up();
  g_delay_ms = 500;
  g_delay_add = "anon_inode:[pidfd]";
  SPAWN(first, "{\"argv\": [\"sleep\", \"30\"], \"stdout\": \"null\", \"stderr\": \"null\"}");
  ASSERT_TRUE(suptest::eventually([] { return g_delaying.load(); }));
  SPAWN(p, sh("exec sleep 30", "\"backpressure_bytes\": 65536"));
  const int fd = sup_output_fd(p.get(), SUP_STDOUT);
  ASSERT_GE(fd, 0);
  // Refused from now on: the reader's own set took the pipe already.
  g_fail_add = "pipe:";
  EXPECT_TRUE(g_delaying.load()) << "the loop started the child first: the test proves nothing";
  ASSERT_NO_FATAL_FAILURE(expect_ended_by_sup(p));
  pollfd ended{fd, POLLIN, 0};
  EXPECT_EQ(poll(&ended, 1, 5000), 1) << "the reader's fd is not readable once final";
  g_fail_add = nullptr;
  g_delay_add = nullptr;
  sup_abort(first.get());
  expect_engine_goes_on();
}

TEST(Start, CallsRightAfterSpawnReachTheChild) {
  SPAWN(noise, "{\"argv\": [\"cat\", \"/dev/zero\"], \"max_output_bytes\": 65536}");
  for (int i = 0; i < 40; ++i) {
    SCOPED_TRACE(i);
    SPAWN(p, "{\"argv\": [\"sleep\", \"30\"], \"interrupt_signal\": \"SIGWINCH\", \"grace_ms\": 50}");
    if (i % 2 == 0) {
      EXPECT_EQ(sup_interrupt(p.get()), 0);
      ASSERT_TRUE(p.wait(5000)) << "the interrupt's grace period never ended";
      EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_INTERRUPTED);
      suptest::Json r = p.result();
      EXPECT_EQ(first_signal(r), "SIGWINCH");
      const cJSON* second = cJSON_GetArrayItem(r.get("signals_sent"), 1);
      const cJSON* sig = cJSON_GetObjectItemCaseSensitive(second, "signal");
      EXPECT_TRUE(cJSON_IsString(sig) && std::string(sig->valuestring) == "SIGKILL");
    } else {
      EXPECT_EQ(sup_abort(p.get()), 0);
      ASSERT_TRUE(p.wait(5000));
      EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_ABORTED);
      EXPECT_EQ(first_signal(p.result()), "SIGKILL");
    }
  }
  EXPECT_EQ(sup_abort(noise.get()), 0);
  ASSERT_TRUE(noise.wait());
}

}  // namespace

namespace {

// True while one of this process's threads sleeps in read(2).
bool asleep_in_read(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long nr = -1;
  return (in >> nr) && nr == SYS_read;
}

}  // namespace

// Two callers in sup_poll before the loop has the child both wake on each
// byte it writes: one reads it, the other must find the pipe empty and poll
// on, never sit in read() holding the process (the loop would then wait for
// it in start(), and every deadline of every child with it).
TEST(Start, TwoPollersBeforeTheLoopStartsTheChildBlockNothing) {
  // The loop is held up in the first child's start() (its pidfd's watch)
  // while the second child is spawned and polled by two threads.
  g_delay_ms = 2500;
  g_delay_add = "anon_inode:[pidfd]";
  SPAWN(first, sh("exec sleep 30"));
  // Many chances for the race, then silence past the idle timeout.
  SPAWN(p, sh("sleep 0.3; i=0; while [ $i -lt 150 ]; do printf x; sleep 0.005; i=$((i+1)); done; exec sleep 8",
              "\"idle_timeout_ms\": 300, \"grace_ms\": 100"));
  std::atomic<int> started{0};
  std::atomic<pid_t> tids[2] = {0, 0};
  int rcs[2] = {-100, -100};
  std::vector<std::thread> pollers;
  for (int i = 0; i < 2; ++i)
    pollers.emplace_back([&, i] {
      tids[i] = static_cast<pid_t>(syscall(SYS_gettid));
      ++started;
      rcs[i] = sup_poll(p.get(), -1);
    });
  ASSERT_TRUE(suptest::eventually([&] { return started.load() == 2; }));
  int seen_in_read = 0;
  bool loop_held = false;
  while (!p.wait(0)) {
    loop_held = loop_held || g_delaying.load();
    for (auto& tid : tids) seen_in_read += asleep_in_read(tid.load()) ? 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& t : pollers) t.join();
  EXPECT_TRUE(loop_held) << "the loop was not held up: the test proves nothing";
  EXPECT_EQ(seen_in_read, 0) << "a caller slept in read() on the child's pipe";
  EXPECT_EQ(rcs[0], 1);
  EXPECT_EQ(rcs[1], 1);
  // Ended by its idle timeout, not by its own exit 8 s later.
  EXPECT_EQ(p.result().str("outcome"), "idle_timeout");
  EXPECT_EQ(p.output(SUP_STDOUT), std::string(150, 'x'));
  g_delay_add = nullptr;
  sup_abort(first.get());
}

// A caller that waits in sup_poll finishes a short child itself, so the
// loop may take a new child on some milliseconds later (Process::kLazyStart,
// 5 ms). A caller that waits any other way must not wait that out: its call
// asks the loop to start the child at once. The fastest of 15 runs of
// `true` is final well within the delay, each way.
TEST(Start, WaitsOtherThanSupPollStartTheLoopAtOnce) {
  struct Way {
    const char* name;
    void (*wait)(sup_proc*);
  };
  const Way ways[] = {
      {"sup_fd",
       [](sup_proc* p) {
         pollfd done{sup_fd(p), POLLIN, 0};
         poll(&done, 1, 10000);
       }},
      {"sup_output_wait",
       [](sup_proc* p) {
         while (sup_output_wait(p, SUP_POS_IGNORE, SUP_POS_IGNORE, 10000) == 0) {
         }
       }},
      {"sup_poll(p, 0)",
       [](sup_proc* p) {
         while (sup_poll(p, 0) == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
       }},
      {"sup_result",
       [](sup_proc* p) {
         while (sup_result(p) == nullptr) std::this_thread::sleep_for(std::chrono::microseconds(100));
       }},
  };
  for (const Way& way : ways) {
    double fastest = 1e9;
    for (int i = 0; i < 15; ++i) {
      SPAWN(p, "{\"argv\": [\"true\"]}");
      const double t0 = suptest::now_ms();
      way.wait(p.get());
      fastest = std::min(fastest, suptest::now_ms() - t0);
      ASSERT_EQ(sup_poll(p.get(), 0), 1) << way.name;
      EXPECT_EQ(p.result().str("outcome"), "exited") << way.name;
    }
    EXPECT_LT(fastest, 3.0) << way.name << ": the fastest of 15 took " << fastest << " ms";
  }
}
