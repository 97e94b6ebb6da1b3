// Every code an Errors line of include/sup.h lists, returned by its call:
// each call is driven into each listed error. Descriptor and memory
// exhaustion are injected by interposing eventfd, poll and operator new for
// the library (exported, so that libsup's calls reach them; meson.build).
// Not driven here, named instead: sup_spawn's SUP_EAGAIN (out of processes:
// root ignores RLIMIT_NPROC), SUP_ENOSYS (a kernel older than 5.9) and
// -ESHUTDOWN (the library unloading: tests/unit/dlopen_test.cpp); the
// exec and cwd codes are driven in process_test.cpp and abi_test.cpp, and
// SUP_ECANCELED of the three waits in reliability_test.cpp
// (Release.EveryWaiterIsCanceledNeverToldFinal).
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <new>
#include <string>

#include "helpers.hpp"

namespace {
// Per thread: only the calls of the thread under test fail.
thread_local int t_eventfd_errno = 0;
thread_local int t_poll_errno = 0;
thread_local size_t t_fail_new_from = 0;  // 0: never; else sizes >= this fail
}  // namespace

extern "C" int eventfd(unsigned int initval, int flags) {
  using Real = int (*)(unsigned int, int);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "eventfd"));
  if (t_eventfd_errno != 0) {
    errno = t_eventfd_errno;
    return -1;
  }
  return real(initval, flags);
}

extern "C" int poll(struct pollfd* fds, nfds_t nfds, int timeout) {
  using Real = int (*)(struct pollfd*, nfds_t, int);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "poll"));
  if (t_poll_errno != 0) {
    errno = t_poll_errno;
    return -1;
  }
  return real(fds, nfds, timeout);
}

void* operator new(size_t size) {
  if (t_fail_new_from != 0 && size >= t_fail_new_from) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace {

using suptest::sh;

// Runs body in a forked child and returns its exit status (-1: hung).
int in_forked_child(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = 1;
    try {
      rc = body();
    } catch (...) {
    }
    _exit(rc);
  }
  int status = 0;
  double end = suptest::now_ms() + 10000;
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

TEST(Errors, NullHandleIsEinvalEverywhere) {
  uint64_t pos = 0;
  size_t n = 0;
  double d = 0;
  EXPECT_EQ(sup_poll(nullptr, 0), SUP_EINVAL);
  EXPECT_EQ(sup_interrupt(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_abort(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_fd(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_pid(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_output_read(nullptr, SUP_STDOUT, &pos, nullptr, 0, &n), SUP_EINVAL);
  EXPECT_EQ(sup_output_wait(nullptr, 0, 0, 0), SUP_EINVAL);
  EXPECT_EQ(sup_output_total(nullptr, SUP_STDOUT), SUP_EINVAL);
  EXPECT_EQ(sup_output_fd(nullptr, SUP_STDOUT), SUP_EINVAL);
  EXPECT_EQ(sup_input_write(nullptr, "x", 1, &n), SUP_EINVAL);
  EXPECT_EQ(sup_input_wait(nullptr, 0), SUP_EINVAL);
  EXPECT_EQ(sup_input_fd(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_input_close(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_outcome(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_exit_code(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_term_signal(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_forced_kill(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_duration_ms(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_omitted_bytes(nullptr, SUP_STDOUT), SUP_EINVAL);
  EXPECT_EQ(sup_result_status_lost(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_rusage(nullptr, &d, &d, nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_signals(nullptr, nullptr, nullptr, 0), SUP_EINVAL);
  EXPECT_EQ(sup_signal_parse(nullptr), SUP_EINVAL);
  sup_proc* out = nullptr;
  EXPECT_EQ(sup_spawn(nullptr, &out), SUP_EINVAL);
  EXPECT_EQ(sup_spawn("{}", nullptr), SUP_EINVAL);
}

TEST(Errors, BadArgumentsOnALiveHandleAreEinval) {
  SPAWN(p, sh("exec sleep 30", "\"stdin\": \"pipe\""));
  uint64_t pos = 0;
  size_t n = 0;
  char buf[8];
  EXPECT_EQ(sup_poll(p.get(), -2), SUP_EINVAL);
  EXPECT_EQ(sup_output_wait(p.get(), 0, 0, -2), SUP_EINVAL);
  EXPECT_EQ(sup_input_wait(p.get(), -2), SUP_EINVAL);
  EXPECT_EQ(sup_output_read(p.get(), 3, &pos, buf, sizeof buf, &n), SUP_EINVAL);
  EXPECT_EQ(sup_output_read(p.get(), SUP_STDOUT, nullptr, buf, sizeof buf, &n), SUP_EINVAL);
  EXPECT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, nullptr, 1, &n), SUP_EINVAL);
  pos = 5;  // past the end: nothing was written yet
  EXPECT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), SUP_EINVAL);
  EXPECT_EQ(sup_output_total(p.get(), 0), SUP_EINVAL);
  EXPECT_EQ(sup_output_fd(p.get(), 7), SUP_EINVAL);
  EXPECT_EQ(sup_input_write(p.get(), nullptr, 1, &n), SUP_EINVAL);
  EXPECT_EQ(sup_result_omitted_bytes(p.get(), 9), SUP_EINVAL);
  EXPECT_EQ(sup_signal_parse("SIGNOTHING"), SUP_EINVAL);
}

TEST(Errors, ResultAccessorsWhileRunningAreEbusy) {
  SPAWN(p, sh("exec sleep 30"));
  double d = 0;
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_exit_code(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_term_signal(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_forced_kill(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_duration_ms(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_omitted_bytes(p.get(), SUP_STDOUT), SUP_EBUSY);
  EXPECT_EQ(sup_result_status_lost(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_rusage(p.get(), &d, &d, nullptr), SUP_EBUSY);
  EXPECT_EQ(sup_result_signals(p.get(), nullptr, nullptr, 0), SUP_EBUSY);
}

TEST(Errors, AbsentValuesAreEnodata) {
  SPAWN(exited, sh("exit 3"));
  ASSERT_TRUE(exited.wait());
  EXPECT_EQ(sup_result_term_signal(exited.get()), SUP_ENODATA);
  SPAWN(killed, sh("kill -9 $$"));
  ASSERT_TRUE(killed.wait());
  EXPECT_EQ(sup_result_exit_code(killed.get()), SUP_ENODATA);
}

TEST(Errors, StdinCallsOnAChildWithoutAPipe) {
  SPAWN(p, sh("exec sleep 30"));
  size_t n = 0;
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, &n), SUP_EBADF);
  EXPECT_EQ(sup_input_wait(p.get(), 0), SUP_EBADF);
  EXPECT_EQ(sup_input_fd(p.get()), SUP_EBADF);
  EXPECT_EQ(sup_input_close(p.get()), SUP_EBADF);
  SPAWN(closed, sh("exec sleep 30", "\"stdin\": \"pipe\""));
  EXPECT_EQ(sup_input_close(closed.get()), 0);
  EXPECT_EQ(sup_input_write(closed.get(), "x", 1, &n), SUP_EBADF);
  EXPECT_EQ(sup_input_wait(closed.get(), 0), SUP_EBADF);
  EXPECT_EQ(sup_input_fd(closed.get()), SUP_EBADF);
}

TEST(Errors, StdinWriteFullAndGone) {
  SPAWN(p, sh("exec sleep 30", "\"stdin\": \"pipe\""));
  std::string chunk(65536, 'x');
  size_t n = 1;
  int rc = 0;
  while ((rc = sup_input_write(p.get(), chunk.data(), chunk.size(), &n)) == 0) {
  }
  EXPECT_EQ(rc, SUP_EAGAIN);
  SPAWN(gone, sh("exec 0<&-; exec sleep 30", "\"stdin\": \"pipe\""));
  EXPECT_TRUE(suptest::eventually([&] { return sup_input_write(gone.get(), "x", 1, &n) == SUP_EPIPE; }));
  SPAWN(ended, sh("true", "\"stdin\": \"pipe\""));
  ASSERT_TRUE(ended.wait());
  EXPECT_EQ(sup_input_write(ended.get(), "x", 1, &n), SUP_EPIPE);
}

TEST(Errors, DescriptorsThatCannotBeMade) {
  for (int err : {EMFILE, ENFILE, ENOMEM}) {
    const int want = err == ENOMEM ? SUP_ENOMEM : SUP_EMFILE;
    SPAWN(p, sh("exec sleep 30", "\"stdin\": \"pipe\""));
    t_eventfd_errno = err;
    EXPECT_EQ(sup_fd(p.get()), want) << strerror(err);
    EXPECT_EQ(sup_output_fd(p.get(), SUP_STDERR), want) << strerror(err);
    EXPECT_EQ(sup_input_wait(p.get(), 0), want) << strerror(err);
    t_eventfd_errno = 0;
  }
  SPAWN(p, sh("exec sleep 30", "\"stdin\": \"pipe\""));
  ASSERT_GE(sup_fd(p.get()), 0);  // made now: only the wait's poll fails
  t_poll_errno = ENOMEM;
  EXPECT_EQ(sup_input_wait(p.get(), 0), SUP_ENOMEM);
  t_poll_errno = 0;
}

TEST(Errors, MemoryThatCannotBeHad) {
  // sup_output_read after sup_result moved the kept bytes into its text.
  SPAWN(p, sh("head -c 2000000 /dev/zero | tr '\\0' a"));
  ASSERT_TRUE(p.wait());
  ASSERT_NE(sup_result(p.get()), nullptr);
  char buf[16];
  uint64_t pos = 0;
  size_t n = 0;
  t_fail_new_from = 1 << 20;
  EXPECT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), SUP_ENOMEM);
  t_fail_new_from = 0;
  EXPECT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), 0);
  EXPECT_EQ(n, sizeof buf);
  // A name longer than a string keeps inline.
  t_fail_new_from = 1;
  const int parse_rc = sup_signal_parse("SIGTERM-AND-A-LONG-TAIL-THAT-ALLOCATES");
  sup_proc* out = nullptr;
  const int spawn_rc = sup_spawn("{\"argv\": [\"true\"]}", &out);
  t_fail_new_from = 0;
  EXPECT_EQ(parse_rc, SUP_ENOMEM);
  EXPECT_EQ(spawn_rc, SUP_ENOMEM);
  EXPECT_EQ(out, nullptr);
}

TEST(Errors, SpawnFailures) {
  sup_proc* out = nullptr;
  EXPECT_EQ(sup_spawn("{\"argv\": []}", &out), SUP_EINVAL);
  EXPECT_EQ(sup_spawn("{\"argv\": [\"/nonexistent/cmd\"]}", &out), SUP_ENOENT);
  EXPECT_EQ(sup_spawn("{\"argv\": [\"/etc/hostname/x\"]}", &out), SUP_ENOTDIR);
  EXPECT_EQ(sup_spawn("{\"argv\": [\"/tmp\"]}", &out), SUP_EISDIR);
  // Beside this test, not in /tmp, which may be mounted noexec (EACCES).
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0);
  self[len] = '\0';
  std::string path = std::string(self) + "-noexec-XXXXXX";
  int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "\x01\x02\x03\n", 4), 4);
  close(fd);
  chmod(path.c_str(), 0755);
  EXPECT_EQ(sup_spawn(("{\"argv\": [\"" + path + "\"]}").c_str(), &out), SUP_ENOEXEC);
  chmod(path.c_str(), 0644);  // no execute bit: refused even to root
  EXPECT_EQ(sup_spawn(("{\"argv\": [\"" + path + "\"]}").c_str(), &out), SUP_EACCES);
  unlink(path.c_str());
  std::string huge(3 * 1024 * 1024, 'a');
  EXPECT_EQ(sup_spawn(("{\"argv\": [\"true\", \"" + huge + "\"]}").c_str(), &out), SUP_E2BIG);
#if !defined(__SANITIZE_THREAD__)  // threads after fork()
  // Out of descriptors: the spawn's pipes cannot be made.
  EXPECT_EQ(in_forked_child([] {
              sup_proc* p = nullptr;
              // The engine first, so that the spawn's own pipes meet the limit.
              if (sup_spawn("{\"argv\": [\"true\"]}", &p) != 0) return 2;
              sup_poll(p, 10000);
              sup_release(p);
              struct rlimit few = {64, 64};
              if (setrlimit(RLIMIT_NOFILE, &few) != 0) return 3;
              while (dup(0) >= 0) {
              }
              return sup_spawn("{\"argv\": [\"true\"]}", &p) == SUP_EMFILE ? 0 : 4;
            }),
            0);
#endif
}

TEST(Errors, InheritedThroughForkIsEchild) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support threads after fork()";
#endif
  SPAWN(running, sh("exec sleep 30", "\"stdin\": \"pipe\""));
  SPAWN(done, sh("true"));
  ASSERT_TRUE(done.wait());
  sup_proc* r = running.get();
  sup_proc* f = done.get();
  int status = in_forked_child([r, f] {
    uint64_t pos = 0;
    size_t n = 0;
    double d = 0;
    int codes[] = {
        sup_poll(r, 0), sup_interrupt(r), sup_abort(r), sup_fd(r), sup_pid(r),
        sup_output_read(r, SUP_STDOUT, &pos, nullptr, 0, &n), sup_output_wait(r, 0, 0, 0),
        static_cast<int>(sup_output_total(r, SUP_STDOUT)), sup_output_fd(r, SUP_STDOUT),
        sup_input_write(r, "x", 1, &n), sup_input_wait(r, 0), sup_input_fd(r), sup_input_close(r),
        sup_result_outcome(f), sup_result_exit_code(f), sup_result_term_signal(f), sup_result_forced_kill(f),
        static_cast<int>(sup_result_duration_ms(f)), static_cast<int>(sup_result_omitted_bytes(f, SUP_STDOUT)),
        sup_result_status_lost(f), sup_result_rusage(f, &d, &d, nullptr), sup_result_signals(f, nullptr, nullptr, 0),
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i)
      if (codes[i] != SUP_ECHILD) return 10 + static_cast<int>(i);
    return 0;
  });
  // 10 + i: call i of the list did not return SUP_ECHILD.
  EXPECT_EQ(status, 0);
}

}  // namespace
