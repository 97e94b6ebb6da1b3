// What users and a review broke in 0.3, each pinned by the behaviour a host
// relies on: a tee never blocks sup and ends with its reader, a held-back
// stream nobody reads is silence, fork() during a cgroup spawn, an "auto"
// containment the kernel refuses, a host's closed stdio, a directory on
// PATH, and a terminal taken from the background.
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <fstream>

#include "helpers.hpp"

// A forked child abandons the parent's engine on purpose: LeakSanitizer, run
// at exit() in that child, would call that memory leaked.
#if defined(__SANITIZE_ADDRESS__)
static const pid_t g_test_pid = getpid();
extern "C" int __lsan_is_turned_off() { return getpid() != g_test_pid; }
#endif

// mkdir, interposed for libsup: while g_slow_host_dir_ms is set, making a
// host directory ("sup-<pid>-<start>") takes that long. libsup makes it
// holding the lock of its host directories: a fork meanwhile inherits the
// lock held.
static std::atomic<int> g_slow_host_dir_ms{0};
extern "C" int mkdir(const char* path, mode_t mode) {
  using Mkdir = int (*)(const char*, mode_t);
  static Mkdir real = reinterpret_cast<Mkdir>(dlsym(RTLD_NEXT, "mkdir"));
  const char* base = std::strrchr(path, '/');
  const int ms = g_slow_host_dir_ms.load();
  if (ms > 0 && base != nullptr && std::strncmp(base, "/sup-", 5) == 0) usleep(static_cast<useconds_t>(ms) * 1000);
  return real(path, mode);
}

namespace {

using suptest::sh;

#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() GTEST_SKIP() << "ThreadSanitizer does not support threads after fork()"
#else
#define SKIP_UNDER_TSAN() (void)0
#endif

// Runs body in a forked child and returns its exit status; a child that
// hangs is killed after timeout_ms and reported as -1.
int in_forked_child(const std::function<int()>& body, int timeout_ms = 20000) {
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

struct Pty {
  int master = -1;
  std::string slave;
  Pty() {
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0) slave = ptsname(master);
  }
  ~Pty() {
    if (master >= 0) close(master);
  }
};

std::string cgroup_reason() {
  std::string why = suptest::cgroup_unavailable();
  if (!why.empty()) std::printf("cgroup mode unavailable here: %s\n", why.c_str());
  return why;
}

// ---- 1. A tee never blocks the loop ----------------------------------------

// The host runs on a terminal it cannot reopen through /proc/self/fd (it
// dropped root; the terminal stays root's, mode 0620), so the tee writes the
// host's own blocking description; nobody reads the terminal. Another
// child's deadline still fires, and sup_poll on the tee'd child returns.
TEST(Tee, ATerminalNobodyReadsBlocksNoOtherChild) {
  SKIP_UNDER_TSAN();
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to drop it";
  Pty pty;
  ASSERT_FALSE(pty.slave.empty()) << strerror(errno);
  int rc = in_forked_child([&] {
    int tty = open(pty.slave.c_str(), O_RDWR | O_NOCTTY);
    if (tty < 0 || dup2(tty, 1) != 1) return 2;
    close(tty);
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) return 3;
    // The fallback is forced for real: sup's reopen is refused.
    int probe = open("/proc/self/fd/1", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (probe >= 0) return 4;
    sup_proc* tee = nullptr;
    if (sup_spawn("{\"argv\": [\"head\", \"-c\", \"8000000\", \"/dev/zero\"], \"stdout\": \"tee\"}", &tee) != 0) return 5;
    // The terminal fills (a pty holds some KiB).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sup_proc* other = nullptr;
    if (sup_spawn("{\"argv\": [\"sleep\", \"30\"], \"max_runtime_ms\": 200}", &other) != 0) return 6;
    if (sup_poll(other, 10000) != 1) return 7;
    if (sup_result_outcome(other) != SUP_OUTCOME_MAX_RUNTIME) return 8;
    const double before = suptest::now_ms();
    if (sup_poll(tee, 100) < 0 || suptest::now_ms() - before > 5000) return 9;
    if (sup_abort(tee) < 0 || sup_poll(tee, 10000) != 1) return 10;
    sup_release(tee);
    sup_release(other);
    return 0;
  }, 60000);
  // 7: the other child's deadline never fired (the loop thread sat in write).
  EXPECT_EQ(rc, 0);
}

// ---- 2. A tee whose reader has gone ------------------------------------------

// As `yes | head -c 5000`: the child's next write fails (here SIGPIPE) once
// the tee's reader is gone, the capture keeps what it read, and the stream
// says why.
TEST(Tee, AReaderThatLeavesEndsTheStreamAsItsOwnPipeWould) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  int saved = dup(1);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(dup2(fds[1], 1), 1);
  suptest::Proc p("{\"argv\": [\"yes\"], \"stdout\": \"tee\"}");
  dup2(saved, 1);
  close(saved);
  close(fds[1]);
  ASSERT_EQ(p.rc(), 0) << p.error();
  std::string got;
  char buf[1000];
  while (got.size() < 5000) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    ASSERT_GT(n, 0);
    got.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  ASSERT_TRUE(p.wait(10000)) << "the child goes on writing to a tee nobody reads";
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_SIGNALED);
  EXPECT_EQ(sup_result_term_signal(p.get()), SIGPIPE);
  auto r = p.result();
  EXPECT_EQ(cJSON_GetStringValue(r.get("stdout", "tee_error")), std::string("EPIPE"));
  EXPECT_TRUE(cJSON_IsNull(r.get("stderr", "tee_error")));
  EXPECT_GE(sup_output_total(p.get(), SUP_STDOUT), static_cast<int64_t>(got.size()));
  EXPECT_EQ(p.output(SUP_STDOUT).substr(0, 4), "y\ny\n");
}

// ---- 3. Backpressure and the idle clock ------------------------------------

TEST(Backpressure, NobodyReadingIsSilenceForTheIdleTimeout) {
  SPAWN(p, "{\"argv\": [\"head\", \"-c\", \"1000000\", \"/dev/zero\"], \"backpressure_bytes\": 65536,"
           " \"idle_timeout_ms\": 300}");
  ASSERT_TRUE(p.wait(20000)) << "a held-back stream nobody reads waits forever";
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT);
  EXPECT_EQ(p.result().str("phase"), "idle");
}

TEST(Backpressure, ASlowReaderIsActivity) {
  SPAWN(p, "{\"argv\": [\"head\", \"-c\", \"100000000\", \"/dev/zero\"], \"backpressure_bytes\": 65536,"
           " \"idle_timeout_ms\": 300}");
  uint64_t pos = 0;
  std::vector<char> buf(4096);
  double last = suptest::now_ms();
  double worst_gap = 0;
  const double end = last + 1500;
  while (suptest::now_ms() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n), 0);
    const double now = suptest::now_ms();
    worst_gap = std::max(worst_gap, now - last);
    last = now;
  }
  const bool final = sup_poll(p.get(), 0) == 1;
  if (final && worst_gap >= 250) GTEST_SKIP() << "this thread was kept from reading for " << worst_gap << " ms";
  EXPECT_FALSE(final) << "outcome " << sup_result_outcome(p.get()) << ", worst gap " << worst_gap << " ms";
  EXPECT_GT(pos, 0u);
  ASSERT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait());
}

// ---- 4. fork() during a cgroup spawn ----------------------------------------

// Forced: the host directory is slow to make (mkdir interposed), and the
// fork comes while another thread makes it, holding the lock of the host's
// cgroup directories. The forked child's own cgroup spawn must not wait for
// a lock nobody in it will release.
TEST(Fork, DuringACgroupSpawnTheChildSpawnsInACgroupToo) {
  SKIP_UNDER_TSAN();
  if (!cgroup_reason().empty()) GTEST_SKIP() << "cgroup mode unavailable here";
  int rc = in_forked_child([] {
    g_slow_host_dir_ms = 600;
    std::thread spawner([] {
      sup_proc* p = nullptr;
      if (sup_spawn("{\"argv\": [\"true\"], \"contain\": \"cgroup\"}", &p) == 0) {
        sup_poll(p, 10000);
        sup_release(p);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int child = in_forked_child([] {
      g_slow_host_dir_ms = 0;
      sup_proc* q = nullptr;
      if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"exit 3\"], \"contain\": \"cgroup\"}", &q) != 0) return 2;
      if (sup_poll(q, 10000) != 1) return 3;
      int code = sup_result_exit_code(q);
      sup_release(q);
      return code == 3 ? 0 : 4;
    }, 8000);
    spawner.join();
    return child;
  }, 30000);
  // -1 here: the forked child hung in its spawn.
  EXPECT_EQ(rc, 0);
}

// ---- 5. "auto" falls back when clone3 into the cgroup is refused -----------

// The kernel's refusal is forced with a seccomp filter: clone3 made from
// libsup's own code (sup's CLONE_INTO_CGROUP) fails with EACCES, as for an
// unprivileged host with a delegated cgroup_parent outside its own cgroup;
// glibc's clone3 (threads) is left alone.
bool refuse_libsup_clone3() {
  struct Range {
    uintptr_t start = 0, end = 0;
  } text;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libsup.so") == nullptr) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          auto* r = static_cast<Range*>(data);
          r->start = info->dlpi_addr + ph.p_vaddr;
          r->end = r->start + ph.p_memsz;
        }
        return 1;
      },
      &text);
  if (text.start == 0 || (text.start >> 32) != ((text.end - 1) >> 32)) return false;
  const auto hi = static_cast<uint32_t>(text.start >> 32);
  const auto lo_start = static_cast<uint32_t>(text.start);
  const auto lo_end = static_cast<uint32_t>(text.end);
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 8),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 6),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, instruction_pointer) + 4),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hi, 0, 4),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, instruction_pointer)),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lo_start, 0, 2),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lo_end, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

TEST(Contain, AutoFallsBackWhenCloneIntoTheCgroupIsRefused) {
  SKIP_UNDER_TSAN();
#if !defined(__x86_64__)
  GTEST_SKIP() << "sup's clone3 stub is x86-64 only";
#endif
  if (!cgroup_reason().empty()) GTEST_SKIP() << "cgroup mode unavailable here";
  int rc = in_forked_child([] {
    if (!refuse_libsup_clone3()) return 2;
    char why[SUP_ERRBUF_SIZE] = "";
    sup_proc* p = nullptr;
    // "cgroup" still fails, naming the step.
    int strict = sup_spawn_ex("{\"argv\": [\"true\"], \"contain\": \"cgroup\"}", &p, why, sizeof why);
    if (strict != SUP_EACCES || std::strstr(why, "contain") == nullptr) return 3;
    if (sup_spawn_ex("{\"argv\": [\"sh\", \"-c\", \"echo ran\"], \"contain\": \"auto\"}", &p, why, sizeof why) != 0)
      return 4;
    if (sup_poll(p, 10000) != 1) return 5;
    auto r = suptest::parse(sup_result(p));
    size_t len = 0;
    const char* out = sup_result_output(p, SUP_STDOUT, &len);
    const bool ran = std::string(out, len) == "ran\n";
    const bool group = r.str("contained") == "group";
    const std::string fallback = r.str("contain_fallback");
    sup_release(p);
    if (!ran) return 6;
    if (!group) return 7;
    return fallback.find("clone") != std::string::npos && fallback.find("denied") != std::string::npos ? 0 : 8;
  });
  // 4: "auto" failed instead of falling back.
  EXPECT_EQ(rc, 0);
}

// The limits a cgroup was to hold are rlimits in the child that "auto"
// starts outside it, and "confined" says so, with the kernel's refusal.
TEST(Contain, AutoFallbackAfterARefusedCloneKeepsTheLimits) {
  SKIP_UNDER_TSAN();
#if !defined(__x86_64__)
  GTEST_SKIP() << "sup's clone3 stub is x86-64 only";
#endif
  if (!cgroup_reason().empty()) GTEST_SKIP() << "cgroup mode unavailable here";
  int rc = in_forked_child([] {
    if (!refuse_libsup_clone3()) return 2;
    sup_proc* p = nullptr;
    if (sup_spawn("{\"argv\": [\"sleep\", \"30\"], \"contain\": \"auto\", \"user\": 64917, \"group\": 64917, "
                  "\"limits\": {\"memory_bytes\": 1073741824, \"processes\": 100}}",
                  &p) != 0)
      return 3;
    std::ifstream in("/proc/" + std::to_string(sup_pid(p)) + "/limits");
    std::stringstream limits;
    limits << in.rdbuf();
    sup_abort(p);
    if (sup_poll(p, 10000) != 1) return 4;
    auto r = suptest::parse(sup_result(p));
    sup_release(p);
    if (r.str("contained") != "group") return 5;
    if (limits.str().find("Max data size             1073741824") == std::string::npos) return 6;
    if (limits.str().find("Max processes             100") == std::string::npos) return 7;
    for (const char* key : {"memory_bytes", "processes"}) {
      const cJSON* entry = cJSON_GetObjectItemCaseSensitive(r.get("confined"), key);
      const cJSON* mechanism = cJSON_GetObjectItemCaseSensitive(entry, "mechanism");
      const cJSON* why = cJSON_GetObjectItemCaseSensitive(entry, "reason");
      if (!cJSON_IsString(mechanism) || std::strcmp(mechanism->valuestring, "rlimit") != 0) return 8;
      if (!cJSON_IsString(why) || std::strstr(why->valuestring, "\"auto\" ran in group mode: clone3") == nullptr) return 9;
    }
    return 0;
  });
  // 6, 7: the child lacks a limit; 8, 9: "confined" does not say rlimit
  // with the refusal as the reason.
  EXPECT_EQ(rc, 0);
}

// ---- 8. sup's descriptors are never 0, 1 or 2 ------------------------------

// A host with an engine running closes its stdin and stdout, spawns, then
// restores its stdout with dup2: sup had nothing of its own there to lose,
// and closes nothing of the host's.
TEST(Stdio, AHostsRestoredStdoutIsNeverSupsToClose) {
  SKIP_UNDER_TSAN();
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  int rc = in_forked_child([&] {
    close(out[0]);
    sup_proc* warm = nullptr;
    if (sup_spawn("{\"argv\": [\"true\"]}", &warm) != 0) return 2;
    sup_poll(warm, 10000);
    sup_release(warm);
    const int saved = fcntl(out[1], F_DUPFD_CLOEXEC, 10);
    close(out[1]);
    close(0);
    close(1);
    // Every kind of descriptor sup makes for a child: pipes, the pidfd, a
    // terminal, eventfds (sup_fd, sup_output_fd) and a reader's epoll set.
    sup_proc* p = nullptr;
    if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"sleep 0.3; echo child\"], \"stdin\": \"pipe\","
                  " \"backpressure_bytes\": 4096}",
                  &p) != 0)
      return 3;
    sup_proc* t = nullptr;
    if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"sleep 0.3; echo tty\"], \"pty\": true}", &t) != 0) return 4;
    if (sup_fd(p) < 3 || sup_output_fd(p, SUP_STDOUT) < 3 || sup_fd(t) < 3) return 5;
    if (fcntl(0, F_GETFD) != -1 || fcntl(1, F_GETFD) != -1) return 6;  // still the host's closed ones
    if (dup2(saved, 1) != 1) return 7;
    if (sup_poll(p, 10000) != 1 || sup_poll(t, 10000) != 1) return 8;
    size_t len = 0;
    const char* text = sup_result_output(p, SUP_STDOUT, &len);
    const bool child_ok = std::string(text, len) == "child\n";
    sup_release(p);
    sup_release(t);
    if (write(1, "intact\n", 7) != 7) return 9;
    return child_ok ? 0 : 10;
  });
  close(out[1]);
  std::string got;
  char buf[64];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(out[0]);
  // 9: sup closed the host's restored stdout as its own.
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(got, "intact\n");
}

// A fresh engine in a host with 0 and 1 closed: its own descriptors (libuv's
// epoll and signal pipes included) are all above 2, and the host's closed
// ones stay closed.
TEST(Stdio, AFreshEngineLeavesTheHostsClosedStdioClosed) {
  SKIP_UNDER_TSAN();
  int rc = in_forked_child([] {
    close(0);
    close(1);
    sup_proc* p = nullptr;
    if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"echo hi\"]}", &p) != 0) return 2;
    if (sup_poll(p, 10000) != 1) return 3;
    sup_release(p);
    if (fcntl(0, F_GETFD) != -1 || errno != EBADF) return 4;
    if (fcntl(1, F_GETFD) != -1 || errno != EBADF) return 5;
    // A fork of this host, with 0 and 1 still closed, spawns too.
    int status = in_forked_child([] {
      sup_proc* q = nullptr;
      if (sup_spawn("{\"argv\": [\"true\"]}", &q) != 0) return 2;
      if (sup_poll(q, 10000) != 1) return 3;
      sup_release(q);
      return fcntl(0, F_GETFD) == -1 && fcntl(1, F_GETFD) == -1 ? 0 : 4;
    });
    return status == 0 ? 0 : 10 + status;
  });
  EXPECT_EQ(rc, 0);
}

// ---- 9. A directory on PATH ---------------------------------------------------

TEST(Path, ADirectoryOnPathIsEaccesAndTheSearchGoesOn) {
  suptest::TempDir first, second;
  ASSERT_EQ(mkdir(first.file("tool").c_str(), 0755), 0);
  {
    std::ofstream script(second.file("tool"));
    script << "#!/bin/sh\necho found\n";
  }
  ASSERT_EQ(chmod(second.file("tool").c_str(), 0755), 0);
  auto spawn_rc = [](const std::string& spec, std::string* why = nullptr) {
    sup_proc* p = nullptr;
    char err[SUP_ERRBUF_SIZE] = "";
    int part = -1;
    int rc = sup_spawn_v2(spec.c_str(), &p, err, sizeof err, &part);
    if (why != nullptr) *why = err;
    if (rc == 0) {
      sup_poll(p, 10000);
      sup_release(p);
    }
    return rc;
  };
  std::string why;
  // "." is a directory in every PATH entry.
  EXPECT_EQ(spawn_rc("{\"argv\": [\".\"]}", &why), SUP_EACCES) << why;
  EXPECT_EQ(spawn_rc("{\"argv\": [\"tool\"], \"env\": {\"PATH\": " + suptest::q(first.path()) + "}}", &why),
            SUP_EACCES)
      << why;
  EXPECT_NE(why.find("directory"), std::string::npos) << why;
  // Past the directory, the program later on PATH runs, as with execvp.
  SPAWN(p, "{\"argv\": [\"tool\"], \"env\": {\"PATH\": " + suptest::q(first.path() + ":" + second.path()) + "}}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "found\n");
  // A path to a directory stays EISDIR.
  EXPECT_EQ(spawn_rc("{\"argv\": [" + suptest::q(first.file("tool")) + "]}"), SUP_EISDIR);
  EXPECT_EQ(spawn_rc("{\"argv\": [\"./\"]}"), SUP_EISDIR);
}

// ---- 11. tty_foreground from the background ---------------------------------

// The host leads a session on a terminal made for the test, and another of
// its groups has the foreground, as a shell's job would: the library leaves
// the terminal where it is and says so in the result.
TEST(Terminal, ABackgroundHostDoesNotTakeTheTerminal) {
  SKIP_UNDER_TSAN();
  Pty pty;
  ASSERT_FALSE(pty.slave.empty()) << strerror(errno);
  int rc = in_forked_child([&] {
    if (setsid() < 0) return 2;
    int tty = open(pty.slave.c_str(), O_RDWR);
    if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) != 0 || dup2(tty, 0) != 0) return 3;
    pid_t job = fork();
    if (job == 0) {
      setpgid(0, 0);
      pause();
      _exit(0);
    }
    setpgid(job, job);
    signal(SIGTTOU, SIG_IGN);
    if (tcsetpgrp(0, job) != 0) return 4;
    signal(SIGTTOU, SIG_DFL);
    auto finish = [&](int code) {
      kill(job, SIGKILL);
      waitpid(job, nullptr, 0);
      return code;
    };
    sup_proc* p = nullptr;
    if (sup_spawn("{\"argv\": [\"sleep\", \"0.2\"], \"stdin\": \"inherit\", \"tty_foreground\": true}", &p) != 0)
      return finish(5);
    if (tcgetpgrp(0) != job) return finish(6);
    if (sup_poll(p, 10000) != 1) return finish(7);
    auto r = suptest::parse(sup_result(p));
    const bool refused = cJSON_IsFalse(r.get("tty_foreground"));
    const std::string why = r.str("tty_refused");
    sup_release(p);
    if (tcgetpgrp(0) != job) return finish(8);
    if (!refused) return finish(9);
    if (why.find("foreground") == std::string::npos) return finish(10);
    // In the foreground it is given, and the result says so.
    signal(SIGTTOU, SIG_IGN);
    if (tcsetpgrp(0, getpgrp()) != 0) return finish(11);
    signal(SIGTTOU, SIG_DFL);
    if (sup_spawn("{\"argv\": [\"sleep\", \"0.2\"], \"stdin\": \"inherit\", \"tty_foreground\": true}", &p) != 0)
      return finish(12);
    if (sup_poll(p, 10000) != 1) return finish(13);
    r = suptest::parse(sup_result(p));
    const bool given = cJSON_IsTrue(r.get("tty_foreground")) && cJSON_IsNull(r.get("tty_refused"));
    sup_release(p);
    return finish(given ? 0 : 14);
  });
  EXPECT_EQ(rc, 0);
}

TEST(Terminal, TtyForegroundIsNullWhenNotAsked) {
  SPAWN(p, "{\"argv\": [\"true\"]}");
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_TRUE(cJSON_IsNull(r.get("tty_foreground")));
  EXPECT_TRUE(cJSON_IsNull(r.get("tty_refused")));
}

}  // namespace
