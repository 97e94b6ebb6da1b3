// The engine's own start, on the first sup_spawn, failing part-way: a
// descriptor, a thread or the loop's first watch refused. sup_spawn returns
// the error with its detail, nothing is left behind (no descriptor, no
// thread), and the next sup_spawn starts the engine afresh. The failures are
// injected by interposing timerfd_create, pthread_create and epoll_ctl;
// each case runs in a fresh process (a death test, re-executed), where no
// engine has started yet.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "helpers.hpp"

namespace {

// How many calls to let through before failing one; -1: none fails.
std::atomic<int> g_timerfd_fail_after{-1};
std::atomic<int> g_thread_fail_after{-1};
std::atomic<int> g_epoll_add_fail_after{-1};

// True if this call is the one to fail (and disarms the counter).
bool take(std::atomic<int>& after) {
  int left = after.load();
  while (left >= 0) {
    if (after.compare_exchange_weak(left, left - 1)) return left == 0;
  }
  return false;
}

}  // namespace

// libsup and libstdc++ (shared libraries) reach these through their PLT:
// this executable's definitions, exported, come first.
extern "C" int timerfd_create(int clockid, int flags) {
  using Real = int (*)(int, int);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "timerfd_create"));
  if (take(g_timerfd_fail_after)) {
    errno = EMFILE;
    return -1;
  }
  return real(clockid, flags);
}

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using Real = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_create"));
  if (take(g_thread_fail_after)) return EAGAIN;
  return real(thread, attr, start, arg);
}

extern "C" int epoll_ctl(int epfd, int op, int fd, struct epoll_event* event) {
  using Real = int (*)(int, int, int, struct epoll_event*);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "epoll_ctl"));
  if (op == EPOLL_CTL_ADD && take(g_epoll_add_fail_after)) {
    errno = ENOSPC;
    return -1;
  }
  return real(epfd, op, fd, event);
}

namespace {

// Inside the death test's child: a failed check says why and exits 1.
void require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  std::fflush(stderr);
  _exit(1);
}

// Arms one failure, then checks the first sup_spawn and the one after it.
void first_start_fails_cleanly(std::atomic<int>& counter, int after, int want_rc) {
  // libuv's first loop in a process opens a pipe that every later loop
  // shares and nothing closes (its signal lock): opened here first, so
  // that it is not counted against the engine.
  uv_loop_t loop;
  require(uv_loop_init(&loop) == 0 && uv_loop_close(&loop) == 0, "a libuv loop of the test's own");
  // The same for a thread: a sanitizer's runtime starts its own at the
  // first thread created.
  pid_t joined = 0;
  std::thread([&] { joined = static_cast<pid_t>(syscall(SYS_gettid)); }).join();
  // A joined thread can still be listed for a moment while the kernel
  // releases it: counted once it is gone.
  const std::string joined_task = "/proc/self/task/" + std::to_string(joined);
  for (int i = 0; i < 2000 && access(joined_task.c_str(), F_OK) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int threads = suptest::count_dir("/proc/self/task");
  const int fds = suptest::count_dir("/proc/self/fd");
  counter = after;
  sup_proc* p = nullptr;
  char err[256] = "";
  int rc = sup_spawn_ex("{\"argv\": [\"true\"]}", &p, err, sizeof err);
  require(rc == want_rc, "sup_spawn returned " + std::to_string(rc) + " (" + err + "), not " +
                             std::to_string(want_rc));
  require(p == nullptr, "a handle came back with the error");
  require(err[0] != '\0', "no detail in errbuf");
  require(counter.load() == -1, "the failure was never injected: the case proves nothing");
  require(suptest::count_dir("/proc/self/task") == threads,
          "threads left behind: " + std::to_string(suptest::count_dir("/proc/self/task") - threads));
  require(suptest::count_dir("/proc/self/fd") == fds,
          "descriptors left behind: " + std::to_string(suptest::count_dir("/proc/self/fd") - fds));
  // The engine starts on the next call, and works.
  rc = sup_spawn_ex(suptest::sh("echo fine").c_str(), &p, err, sizeof err);
  require(rc == 0, std::string("the next sup_spawn failed too: ") + err);
  require(sup_poll(p, 10000) == 1, "the next child never finished");
  size_t len = 0;
  const char* out = sup_result_output(p, SUP_STDOUT, &len);
  require(out != nullptr && std::string(out, len) == "fine\n", "the next child's output is wrong");
  sup_release(p);
  std::fprintf(stderr, "clean\n");
  _exit(0);
}

class EngineStart : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(EngineStart, ATimerItCannotMakeIsTheSpawnsErrorAndLeavesNothing) {
  // The engine makes two timerfds: the first and the second refused.
  EXPECT_EXIT(first_start_fails_cleanly(g_timerfd_fail_after, 0, SUP_EMFILE), ::testing::ExitedWithCode(0), "clean");
  EXPECT_EXIT(first_start_fails_cleanly(g_timerfd_fail_after, 1, SUP_EMFILE), ::testing::ExitedWithCode(0), "clean");
}

TEST_F(EngineStart, AThreadItCannotStartIsTheSpawnsErrorAndLeavesNothing) {
  // The loop thread first, then the spawner (the loop already running).
  EXPECT_EXIT(first_start_fails_cleanly(g_thread_fail_after, 0, SUP_EAGAIN), ::testing::ExitedWithCode(0), "clean");
  EXPECT_EXIT(first_start_fails_cleanly(g_thread_fail_after, 1, SUP_EAGAIN), ::testing::ExitedWithCode(0), "clean");
}

TEST_F(EngineStart, AWatchOfItsOwnItCannotMakeIsTheSpawnsErrorAndLeavesNothing) {
  // The loop's epoll refuses the engine's eventfd, then its timerfd.
  EXPECT_EXIT(first_start_fails_cleanly(g_epoll_add_fail_after, 0, -ENOSPC), ::testing::ExitedWithCode(0), "clean");
  EXPECT_EXIT(first_start_fails_cleanly(g_epoll_add_fail_after, 1, -ENOSPC), ::testing::ExitedWithCode(0), "clean");
}

}  // namespace
