// Loading and unloading the library many times leaks no thread, fd or memory,
// and really unloads it (no STB_GNU_UNIQUE symbol pins it).
#include <dlfcn.h>
#include <malloc.h>

#include "helpers.hpp"

// The handle left unreleased at unload stays allocated by design (a host
// thread could still be waiting on it); tell LeakSanitizer, when present.
extern "C" void __lsan_ignore_object(const void*) __attribute__((weak));

namespace {

struct Api {
  int (*spawn)(const char*, sup_proc**);
  int (*poll)(sup_proc*, int);
  int (*outcome)(sup_proc*);
  void (*release)(sup_proc*);
  int (*pid)(sup_proc*);
};

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

// One load, `spawns` supervised runs, and an unload. With leave_running, a
// `sleep 30` is still supervised, never released, at unload; returns its pid.
pid_t cycle(int spawns, bool leave_running) {
  void* lib = dlopen(SUP_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  if (lib == nullptr) return 0;
  Api api{sym<decltype(Api::spawn)>(lib, "sup_spawn"), sym<decltype(Api::poll)>(lib, "sup_poll"),
          sym<decltype(Api::outcome)>(lib, "sup_result_outcome"), sym<decltype(Api::release)>(lib, "sup_release"),
          sym<decltype(Api::pid)>(lib, "sup_pid")};
  EXPECT_TRUE(api.spawn && api.poll && api.outcome && api.release && api.pid);
  for (int i = 0; i < spawns; ++i) {
    sup_proc* p = nullptr;
    EXPECT_EQ(api.spawn("{\"argv\": [\"true\"]}", &p), 0);
    EXPECT_EQ(api.poll(p, 10000), 1);
    EXPECT_EQ(api.outcome(p), SUP_OUTCOME_EXITED);
    api.release(p);
  }
  pid_t pid = 0;
  if (leave_running) {
    sup_proc* running = nullptr;
    EXPECT_EQ(api.spawn("{\"argv\": [\"sleep\", \"30\"]}", &running), 0);
    if (__lsan_ignore_object != nullptr) __lsan_ignore_object(running);
    pid = api.pid(running);
    EXPECT_TRUE(suptest::running(pid));
  }
  EXPECT_EQ(dlclose(lib), 0);
  EXPECT_EQ(dlopen(SUP_LIBRARY_PATH, RTLD_NOW | RTLD_NOLOAD), nullptr) << "dlclose did not unload libsup";
  return pid;
}

TEST(Dlopen, LoadUnloadLoopLeaksNothing) {
  for (int i = 0; i < 5; ++i) cycle(2, false);
  // The warm-up's last threads have been joined but may not have left
  // /proc/self/task yet: count from a settled process (this test's own
  // thread only), not from one that is still shedding them.
  EXPECT_TRUE(suptest::eventually([] { return suptest::threads() == 1; }, 2000)) << suptest::threads();
  int fds = suptest::open_fds();
  int threads = suptest::threads();
  size_t heap = mallinfo2().uordblks;
  for (int i = 0; i < 100; ++i) cycle(2, false);
  EXPECT_EQ(suptest::open_fds(), fds);
  // pthread_join returns when the kernel clears the thread's tid, a moment
  // before the thread leaves /proc/self/task.
  EXPECT_TRUE(suptest::eventually([&] { return suptest::threads() == threads; }, 1000))
      << suptest::threads() << " threads, was " << threads;
  // Allocator and loader noise only (a few KiB, not growing with the
  // count): under 330 bytes a cycle, less than any handle or engine.
  EXPECT_LT(mallinfo2().uordblks - heap, 32u * 1024u);
}

TEST(Dlopen, UnloadEndsAChildThatWasNeverReleased) {
  int fds = suptest::open_fds();
  pid_t pid = cycle(1, true);
  // Killed and reaped by the unload: not even a zombie.
  EXPECT_NE(access(("/proc/" + std::to_string(pid)).c_str(), F_OK), 0);
  EXPECT_EQ(suptest::open_fds(), fds);
}

}  // namespace
