// A zero timeout is a check: sup_poll(p, 0) and sup_output_wait(..., 0)
// return at once and never enter a timed wait, which sleeps in futex for the
// thread's timer slack (50 us) even when its time has already passed. The
// shims call sup_poll(p, 0) before every live read. Timed condition-variable
// waits are counted by interposing the pthread calls libstdc++ makes.
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <atomic>

#include "helpers.hpp"

namespace {
std::atomic<int> g_timed_waits{0};
}  // namespace

// libsup reaches these through its PLT: this executable's definitions,
// exported (export_dynamic in meson.build), come first.
extern "C" int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                      const struct timespec* abstime) {
  using Real = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_cond_clockwait"));
  g_timed_waits.fetch_add(1);
  return real(cond, mutex, clock, abstime);
}

extern "C" int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const struct timespec* abstime) {
  using Real = int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_cond_timedwait"));
  g_timed_waits.fetch_add(1);
  return real(cond, mutex, abstime);
}

namespace {

using suptest::sh;

TEST(ZeroTimeout, PollAndOutputWaitCheckWithoutWaiting) {
  sup_proc* p = nullptr;
  ASSERT_EQ(sup_spawn(sh("exec sleep 30").c_str(), &p), 0);

  // The interposition sees the library's timed waits: a 1 ms wait for
  // output that does not come is one.
  g_timed_waits.store(0);
  EXPECT_EQ(sup_output_wait(p, 0, 0, 1), 0);
  ASSERT_GE(g_timed_waits.load(), 1) << "pthread_cond_clockwait/timedwait not interposed: the test would prove nothing";

  g_timed_waits.store(0);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(sup_poll(p, 0), 0);
    ASSERT_EQ(sup_output_wait(p, 0, 0, 0), 0);
  }
  EXPECT_EQ(g_timed_waits.load(), 0);

  ASSERT_GE(sup_abort(p), 0);
  EXPECT_EQ(sup_poll(p, -1), 1);
  // Final: a zero timeout says so at once too.
  EXPECT_EQ(sup_poll(p, 0), 1);
  EXPECT_EQ(sup_output_wait(p, 0, 0, 0), 1);
  sup_release(p);
}

}  // namespace
