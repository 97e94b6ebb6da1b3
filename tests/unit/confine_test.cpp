// Confinement against the running kernel: limits, the sandbox's filesystem
// and network rules, the child's user, and what the result says of them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <linux/landlock.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "helpers.hpp"

using namespace suptest;

namespace {

std::string probe(const std::string& cmd, const std::string& arg, const std::string& extra) {
  return "{\"argv\": [" + q(SUP_CONFINE_PROBE) + ", " + q(cmd) + ", " + q(arg) + "]" + (extra.empty() ? "" : ", " + extra) + "}";
}

// The probe's verdict: "ok" or an errno name.
std::string run_probe(const std::string& cmd, const std::string& arg, const std::string& extra) {
  Proc p(probe(cmd, arg, extra));
  if (p.rc() != 0) return "spawn failed: " + p.error();
  if (!p.wait(20000)) return "did not end";
  std::string out = p.output(SUP_STDOUT);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string sandbox_write(const std::string& dir, const std::string& more = "") {
  return "\"sandbox\": {\"write\": [" + q(dir) + "]" + (more.empty() ? "" : ", " + more) + "}";
}

int landlock_abi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

std::string spawn_error(const std::string& spec) {
  sup_proc* p = nullptr;
  char err[SUP_ERRBUF_SIZE] = "";
  int rc = sup_spawn_ex(spec.c_str(), &p, err, sizeof err);
  if (rc == 0) {
    sup_abort(p);
    sup_release(p);
    return "spawned";
  }
  return std::to_string(rc) + " " + err;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Processes whose real uid is uid, now.
int processes_of(uid_t uid) {
  int n = 0;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::ifstream status(std::string("/proc/") + e->d_name + "/status");
      std::string line;
      while (std::getline(status, line)) {
        if (line.compare(0, 4, "Uid:") != 0) continue;
        if (std::strtoul(line.c_str() + 4, nullptr, 10) == uid) ++n;
        break;
      }
    }
    closedir(d);
  }
  return n;
}

// A TCP listener on 127.0.0.1, on a port the kernel picks.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 16);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace

TEST(ConfineSpec, BadValuesNameTheirKey) {
  struct Case {
    const char* extra;
    const char* key;
  } cases[] = {
      {"\"limits\": 5", "limits:"},
      {"\"limits\": {\"cpu_seconds\": -1}", "limits.cpu_seconds:"},
      {"\"limits\": {\"memory_bytes\": 1.5}", "limits.memory_bytes:"},
      {"\"limits\": {\"core_dump\": 0}", "limits.core_dump:"},
      {"\"limits\": {\"stack\": 1}", "limits.stack:"},
      {"\"sandbox\": []", "sandbox:"},
      {"\"sandbox\": {\"write\": \"/tmp\"}", "sandbox.write:"},
      {"\"sandbox\": {\"write\": [\"tmp\"]}", "sandbox.write[0]:"},
      {"\"sandbox\": {\"read\": [1]}", "sandbox.read[0]:"},
      {"\"sandbox\": {\"network\": \"no\"}", "sandbox.network:"},
      {"\"sandbox\": {\"shell\": true}", "sandbox.shell:"},
      {"\"user\": true", "user:"},
      {"\"user\": -1", "user:"},
      {"\"user\": \"no-such-user-sup-test\"", "user:"},
      {"\"group\": \"no-such-group-sup-test\"", "group:"},
      {"\"groups\": [0, 2.5]", "groups[1]:"},
      {"\"groups\": \"root\"", "groups:"},
  };
  std::string got;
  for (const Case& c : cases) {
    got = spawn_error(sh("true", c.extra));
    EXPECT_EQ(got.compare(0, 4, "-22 "), 0) << c.extra << " -> " << got;
    EXPECT_NE(got.find(std::string("spec: ") + c.key), std::string::npos) << c.extra << " -> " << got;
  }
  // A limit above what the host may set (the kernel's nr_open) fails in
  // the child, named by its key.
  got = spawn_error(sh("true", "\"limits\": {\"open_files\": 1073741824}"));
  EXPECT_NE(got.find("limits.open_files"), std::string::npos) << got;
  // A path that does not exist is named with its key too.
  got = spawn_error(sh("true", "\"sandbox\": {\"write\": [\"/no/such/dir/sup\"]}"));
  EXPECT_NE(got.find("sandbox.write[0]"), std::string::npos) << got;
}

TEST(Confine, WritesOnlyInsideTheWritePaths) {
  if (landlock_abi() == 0) GTEST_SKIP() << "Landlock is not available on this kernel";
  TempDir allowed, other;
  EXPECT_EQ(run_probe("write", allowed.path() + "/f", sandbox_write(allowed.path())), "ok");
  EXPECT_EQ(run_probe("write", other.path() + "/f", sandbox_write(allowed.path())), "EACCES");
  // Without a sandbox the same write works: the refusal above is the sandbox's.
  EXPECT_EQ(run_probe("write", other.path() + "/f", ""), "ok");
  // The null device stays writable.
  EXPECT_EQ(run_probe("write", "/dev/null", sandbox_write(allowed.path())), "ok");
}

TEST(Confine, ReadingOutsideStaysPossibleUnlessReadIsGiven) {
  if (landlock_abi() == 0) GTEST_SKIP() << "Landlock is not available on this kernel";
  TempDir allowed, other;
  std::ofstream(other.path() + "/data") << "secret";
  EXPECT_EQ(run_probe("read", other.path() + "/data", sandbox_write(allowed.path())), "ok");
  // The probe and its libraries stay readable: the directories they are in.
  std::string probe_dir = std::string(SUP_CONFINE_PROBE).substr(0, std::string(SUP_CONFINE_PROBE).rfind('/'));
  std::string read = "\"read\": [" + q(probe_dir) + ", \"/usr\", \"/lib\", \"/lib64\", \"/etc\"]";
  EXPECT_EQ(run_probe("read", other.path() + "/data", sandbox_write(allowed.path(), read)), "EACCES");
  EXPECT_EQ(run_probe("read", "/etc/passwd", sandbox_write(allowed.path(), read)), "ok");
}

TEST(Confine, OverwritingAFileInAWritePathWorks) {
  if (landlock_abi() == 0) GTEST_SKIP() << "Landlock is not available on this kernel";
  TempDir allowed;
  std::string file = allowed.path() + "/existing";
  std::ofstream(file) << "old contents, longer than the new";
  SPAWN(p, sh("echo new > " + file + " && mkdir " + allowed.path() + "/d && mv " + file + " " + allowed.path() +
                  "/d/moved && rm -r " + allowed.path() + "/d",
              sandbox_write(allowed.path())));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0) << p.output(SUP_STDERR);
  struct stat st;
  EXPECT_NE(stat(allowed.path().c_str(), &st), -1);
  EXPECT_EQ(count_dir(allowed.path().c_str()), 0);
}

TEST(Confine, NetworkRefusedButUnixSocketsWork) {
  Listener listener;
  const std::string port = std::to_string(listener.port());
  TempDir dir;
  const std::string no_net = sandbox_write(dir.path(), "\"network\": false");
  EXPECT_EQ(run_probe("tcp4", port, ""), "ok");
  EXPECT_EQ(run_probe("tcp4", port, sandbox_write(dir.path())), "ok");
  EXPECT_EQ(run_probe("tcp4", port, no_net), "EACCES");
  EXPECT_EQ(run_probe("tcp6", port, no_net), "EACCES");
  EXPECT_EQ(run_probe("udp4", port, no_net), "EACCES");
  EXPECT_EQ(run_probe("uring", "", no_net), "EPERM");
#if defined(__x86_64__)
  EXPECT_EQ(run_probe("x32", "", no_net), "EPERM");
#endif
  // A Unix socket the test listens on.
  std::string path = dir.path() + "/sock";
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(s, 4), 0);
  EXPECT_EQ(run_probe("unix", path, no_net), "ok");
  close(s);
}

TEST(Confine, ResultSaysWhatWasEnforced) {
  TempDir dir;
  SPAWN(p, sh("true", sandbox_write(dir.path(), "\"network\": false")));
  ASSERT_TRUE(p.wait());
  Json r = p.result();
  const cJSON* sandbox = cJSON_GetObjectItemCaseSensitive(r.get("confined"), "sandbox");
  ASSERT_TRUE(cJSON_IsObject(sandbox)) << sup_result(p.get());
  EXPECT_EQ(cJSON_GetObjectItemCaseSensitive(sandbox, "landlock_abi")->valuedouble, landlock_abi());
  EXPECT_EQ(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sandbox, "filesystem")), landlock_abi() > 0);
  EXPECT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sandbox, "network")));
  EXPECT_TRUE(cJSON_IsNull(r.get("limit")));
  SPAWN(net, sh("true", sandbox_write(dir.path())));
  ASSERT_TRUE(net.wait());
  Json n = net.result();
  EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(n.get("confined"), "sandbox"), "network")))
      << sup_result(net.get());
  // Nothing asked, nothing said.
  SPAWN(plain, sh("true"));
  ASSERT_TRUE(plain.wait());
  EXPECT_TRUE(cJSON_IsNull(plain.result().get("confined")));
}

TEST(Confine, TheTerminalStaysUsable) {
  if (landlock_abi() == 0) GTEST_SKIP() << "Landlock is not available on this kernel";
  TempDir dir;
  SPAWN(p, sh("echo via-tty > /dev/tty && echo via-stdout", "\"pty\": true, " + sandbox_write(dir.path())));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0);
  std::string out = p.output(SUP_STDOUT);
  EXPECT_NE(out.find("via-tty"), std::string::npos) << out;
  EXPECT_NE(out.find("via-stdout"), std::string::npos) << out;
}

TEST(Confine, PrivateTmpIsWritableAndRemovedAtRelease) {
  if (landlock_abi() == 0) GTEST_SKIP() << "Landlock is not available on this kernel";
  TempDir dir;
  std::string tmp;
  {
    SPAWN(p, sh("echo x > \"$TMPDIR/f\" && mkdir \"$TMPDIR/sub\" && echo y > \"$TMPDIR/sub/g\" && printf %s \"$TMPDIR\"",
                "\"sandbox\": {\"tmp\": true}"));
    ASSERT_TRUE(p.wait());
    EXPECT_EQ(p.result().num("exit_code"), 0) << p.output(SUP_STDERR);
    tmp = p.output(SUP_STDOUT);
    ASSERT_FALSE(tmp.empty());
    // Named sup-tmp- and six characters mkdtemp picked, in the host's TMPDIR.
    const std::string name = tmp.substr(tmp.rfind('/') + 1);
    EXPECT_EQ(name.rfind("sup-tmp-", 0), 0u) << tmp;
    EXPECT_EQ(name.size(), 14u) << tmp;
    EXPECT_EQ(tmp, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p.result().get("confined"), "sandbox"), "tmp")->valuestring);
    struct stat st;
    EXPECT_EQ(stat((tmp + "/sub/g").c_str(), &st), 0) << "kept until release";
  }
  struct stat st;
  EXPECT_NE(stat(tmp.c_str(), &st), 0) << tmp << " is still there after release";
}

// TMPDIR names where the private tmp is made; when it cannot be made
// there, the spawn fails naming the key, the directory and the reason.
TEST(Confine, PrivateTmpThatCannotBeMadeNamesWhere) {
  const char* old = getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", "/nonexistent-sup-tmpdir", 1);
  sup_proc* p = nullptr;
  char why[SUP_ERRBUF_SIZE];
  const int rc = sup_spawn_ex("{\"argv\": [\"true\"], \"sandbox\": {\"tmp\": true}}", &p, why, sizeof why);
  if (old != nullptr) setenv("TMPDIR", saved.c_str(), 1); else unsetenv("TMPDIR");
  if (rc == 0) sup_release(p);
  if (landlock_abi() == 0 && rc == SUP_ENOTSUP) GTEST_SKIP() << "Landlock is not available on this kernel";
  EXPECT_EQ(rc, SUP_ENOENT) << why;
  EXPECT_STREQ(why, "sandbox.tmp: mkdtemp in \"/nonexistent-sup-tmpdir\": No such file or directory");
}

TEST(Confine, RlimitsShowInProcLimits) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"], \"user\": \"nobody\", \"limits\": {\"memory_bytes\": 1073741824, "
           "\"cpu_seconds\": 5, \"processes\": 100, \"file_bytes\": 1000000, \"open_files\": 64, \"core_dump\": false}}");
  const std::string limits = slurp("/proc/" + std::to_string(sup_pid(p.get())) + "/limits");
  sup_abort(p.get());
  ASSERT_TRUE(p.wait());
  auto row = [&](const char* name) {
    size_t at = limits.find(name);
    if (at == std::string::npos) return std::string();
    std::istringstream fields(limits.substr(at + 26, limits.find('\n', at) - at - 26));
    std::string soft, hard;
    fields >> soft >> hard;
    return soft + " " + hard;
  };
  EXPECT_EQ(row("Max cpu time"), "5 6") << limits;
  EXPECT_EQ(row("Max data size"), "1073741824 1073741824") << limits;
  EXPECT_EQ(row("Max processes"), "100 100") << limits;
  EXPECT_EQ(row("Max file size"), "1000000 1000000") << limits;
  EXPECT_EQ(row("Max open files"), "64 64") << limits;
  EXPECT_EQ(row("Max core file size"), "0 0") << limits;
  Json r = p.result();
  const cJSON* confined = r.get("confined");
  for (const char* key : {"memory_bytes", "cpu_seconds", "processes", "file_bytes", "open_files", "core_dump"}) {
    const cJSON* entry = cJSON_GetObjectItemCaseSensitive(confined, key);
    ASSERT_TRUE(cJSON_IsObject(entry)) << key << ": " << sup_result(p.get());
    EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(entry, "mechanism")->valuestring, "rlimit") << key;
  }
  EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(confined, "processes"), "scope")->valuestring, "user");
}

TEST(Confine, ProcessesLimitIsNotAppliedToRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs a root host";
  SPAWN(p, sh("true", "\"limits\": {\"processes\": 10}"));
  ASSERT_TRUE(p.wait());
  Json r = p.result();
  const cJSON* entry = cJSON_GetObjectItemCaseSensitive(r.get("confined"), "processes");
  ASSERT_TRUE(cJSON_IsObject(entry)) << sup_result(p.get());
  EXPECT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(entry, "mechanism")));
  EXPECT_NE(std::string(cJSON_GetObjectItemCaseSensitive(entry, "reason")->valuestring).find("root"), std::string::npos);
}

TEST(Confine, CpuLimitEndsASpinner) {
  SPAWN(p, sh("while :; do :; done", "\"limits\": {\"cpu_seconds\": 1, \"core_dump\": false}, \"max_runtime_ms\": 60000"));
  ASSERT_TRUE(p.wait(60000));
  Json r = p.result();
  EXPECT_EQ(r.str("outcome"), "signaled") << sup_result(p.get());
  EXPECT_EQ(r.str("limit"), "cpu") << sup_result(p.get());
}

TEST(Confine, FileSizeLimitEndsAWriter) {
  TempDir dir;
  SPAWN(p, sh("exec head -c 100000 /dev/zero > " + dir.path() + "/big",
              "\"limits\": {\"file_bytes\": 10000, \"core_dump\": false}"));
  ASSERT_TRUE(p.wait(20000));
  Json r = p.result();
  EXPECT_EQ(r.str("outcome"), "signaled") << sup_result(p.get());
  EXPECT_EQ(r.str("term_signal"), "SIGXFSZ");
  EXPECT_EQ(r.str("limit"), "file_size");
  struct stat st;
  ASSERT_EQ(stat((dir.path() + "/big").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 10000);
}

// The host ignores a signal for the length of a test.
class HostIgnores {
 public:
  explicit HostIgnores(int sig) : sig_(sig) {
    struct sigaction ign{};
    ign.sa_handler = SIG_IGN;
    sigaction(sig_, &ign, &saved_);
  }
  ~HostIgnores() { sigaction(sig_, &saved_, nullptr); }

 private:
  int sig_;
  struct sigaction saved_{};
};

// The child's ignored signals, from its own /proc status (SigIgn).
uint64_t child_sig_ign(const std::string& extra) {
  Proc p(sh("exec grep SigIgn /proc/self/status", extra));
  if (p.rc() != 0 || !p.wait()) return ~uint64_t{0};
  const std::string out = p.output(SUP_STDOUT);
  const size_t colon = out.find(':');
  return colon == std::string::npos ? ~uint64_t{0} : std::strtoull(out.c_str() + colon + 1, nullptr, 16);
}

TEST(Confine, ALimitsSignalIsNotKeptIgnored) {
  HostIgnores hup(SIGHUP), xcpu(SIGXCPU), xfsz(SIGXFSZ);
  const uint64_t hup_bit = uint64_t{1} << (SIGHUP - 1);
  const uint64_t xcpu_bit = uint64_t{1} << (SIGXCPU - 1);
  const uint64_t xfsz_bit = uint64_t{1} << (SIGXFSZ - 1);
  // Without limits, keep_ignored_signals passes all three on.
  uint64_t ign = child_sig_ign("\"keep_ignored_signals\": true");
  EXPECT_EQ(ign & (hup_bit | xcpu_bit | xfsz_bit), hup_bit | xcpu_bit | xfsz_bit) << std::hex << ign;
  // With them, only the limits' own signals are back at their default.
  ign = child_sig_ign("\"keep_ignored_signals\": true, \"limits\": {\"cpu_seconds\": 100, \"file_bytes\": 100000}");
  EXPECT_EQ(ign & (hup_bit | xcpu_bit | xfsz_bit), hup_bit) << std::hex << ign;
  ign = child_sig_ign("\"keep_ignored_signals\": true, \"limits\": {\"file_bytes\": 100000}");
  EXPECT_EQ(ign & (hup_bit | xcpu_bit | xfsz_bit), hup_bit | xcpu_bit) << std::hex << ign;

  // And the limits end the child, saying so.
  TempDir dir;
  SPAWN(writer, sh("exec head -c 100000 /dev/zero > " + dir.path() + "/big",
                   "\"keep_ignored_signals\": true, \"limits\": {\"file_bytes\": 10000, \"core_dump\": false}"));
  ASSERT_TRUE(writer.wait(20000));
  Json w = writer.result();
  EXPECT_EQ(w.str("term_signal"), "SIGXFSZ") << sup_result(writer.get());
  EXPECT_EQ(w.str("limit"), "file_size") << sup_result(writer.get());
  SPAWN(spinner, sh("while :; do :; done", "\"keep_ignored_signals\": true, \"limits\": {\"cpu_seconds\": 1, "
                                           "\"core_dump\": false}, \"max_runtime_ms\": 60000"));
  ASSERT_TRUE(spinner.wait(60000));
  Json c = spinner.result();
  EXPECT_EQ(c.str("term_signal"), "SIGXCPU") << sup_result(spinner.get());
  EXPECT_EQ(c.str("limit"), "cpu") << sup_result(spinner.get());
}

TEST(Confine, CpuLimitOfAProgramIgnoringSigxcpuIsTheHardLimitsKill) {
  // The program ignores SIGXCPU itself (after exec, as sup cannot undo):
  // the kernel's SIGKILL at the hard limit, a second later, still says "cpu".
  SPAWN(p, sh("trap '' XCPU; while :; do :; done",
              "\"limits\": {\"cpu_seconds\": 1, \"core_dump\": false}, \"max_runtime_ms\": 60000"));
  ASSERT_TRUE(p.wait(60000));
  Json r = p.result();
  EXPECT_EQ(r.str("term_signal"), "SIGKILL") << sup_result(p.get());
  EXPECT_EQ(r.str("limit"), "cpu") << sup_result(p.get());
  EXPECT_TRUE(cJSON_IsFalse(r.get("forced_kill"))) << "the kernel's kill, not sup's";
}

TEST(Confine, MemoryLimitFailsAnAllocation) {
  EXPECT_EQ(run_probe("alloc", "512", "\"limits\": {\"memory_bytes\": 67108864}"), "ENOMEM");
  EXPECT_EQ(run_probe("alloc", "128", ""), "ok");
}

TEST(Confine, ForkBombAsAnotherUserIsHeldAndEnds) {
  // A uid of its own (no passwd entry): RLIMIT_NPROC counts every process
  // of the uid, and other tests running beside this one run as nobody.
  const uid_t bomber = 64917;
  const int before = processes_of(bomber);
  constexpr int kLimit = 20;
  // Each process of the bomb forks two more and becomes a sleep: the tree
  // grows until the limit refuses the forks, and holds there until
  // max_runtime. The main process forks once, first, and then needs no
  // fork (dash exits when one fails).
  SPAWN(p, sh("(f() { f & f & exec sleep 30; }; f) & exec sleep 30",
              "\"user\": 64917, \"group\": 64917, \"limits\": {\"processes\": 20}, \"max_runtime_ms\": 2000, \"grace_ms\": 100"));
  // A scan of /proc is not atomic: while the bomb churns at the limit (a
  // shell whose fork is refused exits, and another's fork takes its place),
  // one scan can count both the shell that left and the process that came.
  // The lesser of two scans back to back is far less likely to count one
  // twice; a limit not applied would show in both, the bomb growing past
  // hundreds.
  int most = 0;
  while (sup_poll(p.get(), 20) == 0) {
    const int seen = std::min(processes_of(bomber), processes_of(bomber));
    most = std::max(most, seen - before);
  }
  EXPECT_GT(most, kLimit / 2) << "the bomb never grew";
  EXPECT_LE(most, kLimit);
  EXPECT_EQ(p.result().str("outcome"), "max_runtime") << sup_result(p.get());
  // Every process of the bomb is gone.
  double until = now_ms() + 5000;
  while (processes_of(bomber) > before && now_ms() < until) usleep(20000);
  EXPECT_LE(processes_of(bomber), before);
}

TEST(Confine, HostStaysDumpableAfterAUserSwitch) {
  if (geteuid() != 0) GTEST_SKIP() << "needs a root host";
  const int before = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  ASSERT_EQ(before, 1);
  SPAWN(p, sh("id -u; id -g; id -G", "\"user\": \"nobody\""));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), before);
  EXPECT_EQ(p.output(SUP_STDOUT), "65534\n65534\n65534\n") << p.output(SUP_STDERR);
  // A numeric group and groups.
  SPAWN(q2, sh("id -u; id -g; id -G", "\"user\": 65534, \"group\": 100, \"groups\": [100, \"nogroup\"]"));
  ASSERT_TRUE(q2.wait());
  EXPECT_EQ(q2.output(SUP_STDOUT), "65534\n100\n100 65534\n") << q2.output(SUP_STDERR);
  EXPECT_EQ(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), before);
}

// The host helper hides Landlock from itself (a seccomp filter makes
// landlock_create_ruleset fail with ENOSYS) and prints rc, detail, result.
std::string hidden_landlock_host(const std::string& spec) {
  std::string cmd = std::string(SUP_CONFINE_HOST) + " '" + spec + "'";
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  pclose(f);
  return out;
}

TEST(Confine, StrictSandboxRefusedWhereLandlockIsHidden) {
  std::string out = hidden_landlock_host("{\"argv\": [\"true\"], \"sandbox\": {\"write\": [\"/tmp\"], \"strict\": true}}");
  EXPECT_EQ(out.compare(0, 7, "rc=-95\n"), 0) << out;
  EXPECT_NE(out.find("sandbox.strict"), std::string::npos) << out;
  EXPECT_NE(out.find("Landlock is not available"), std::string::npos) << out;
  out = hidden_landlock_host("{\"argv\": [\"true\"], \"sandbox\": {\"write\": [\"/tmp\"]}}");
  ASSERT_EQ(out.compare(0, 5, "rc=0\n"), 0) << out;
  Json r = parse(out.substr(out.find('{')).c_str());
  const cJSON* sandbox = cJSON_GetObjectItemCaseSensitive(r.get("confined"), "sandbox");
  ASSERT_TRUE(cJSON_IsObject(sandbox)) << out;
  EXPECT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(sandbox, "filesystem"))) << out;
  EXPECT_EQ(cJSON_GetObjectItemCaseSensitive(sandbox, "landlock_abi")->valuedouble, 0);
  EXPECT_NE(out.find("Landlock is not available"), std::string::npos) << out;
  EXPECT_EQ(r.num("exit_code"), 0);
}

TEST(Confine, CgroupLimitsHoldTheTree) {
  std::string why = cgroup_unavailable();
  if (!why.empty()) GTEST_SKIP() << "cgroup mode unavailable: " << why;
  SPAWN(p, probe("alloc", "512", "\"contain\": \"cgroup\", \"limits\": {\"memory_bytes\": 67108864, \"processes\": 50}"));
  ASSERT_TRUE(p.wait(20000));
  Json r = p.result();
  const cJSON* memory = cJSON_GetObjectItemCaseSensitive(r.get("confined"), "memory_bytes");
  ASSERT_TRUE(cJSON_IsObject(memory)) << sup_result(p.get());
  if (std::string(cJSON_GetObjectItemCaseSensitive(memory, "mechanism")->valuestring) != "cgroup")
    GTEST_SKIP() << "no memory controller for sup's cgroups: "
                 << cJSON_GetObjectItemCaseSensitive(memory, "reason")->valuestring;
  EXPECT_STREQ(cJSON_GetObjectItemCaseSensitive(memory, "scope")->valuestring, "tree");
  EXPECT_EQ(r.str("limit"), "memory") << sup_result(p.get());
  SPAWN(bomb, sh("f() { f & f & exec sleep 30; }; f",
                 "\"contain\": \"cgroup\", \"limits\": {\"processes\": 20}, \"max_runtime_ms\": 2000"));
  ASSERT_TRUE(bomb.wait(20000));
  EXPECT_EQ(bomb.result().str("limit"), "processes") << sup_result(bomb.get());
}

// "Max data size" of a running child, soft limit, from /proc/PID/limits.
std::string data_limit_of(pid_t pid) {
  const std::string limits = slurp("/proc/" + std::to_string(pid) + "/limits");
  const size_t at = limits.find("Max data size");
  if (at == std::string::npos) return "<no row>";
  std::istringstream fields(limits.substr(at + 26, limits.find('\n', at) - at - 26));
  std::string soft;
  fields >> soft;
  return soft;
}

// The limit's entry in "confined", as mechanism and reason ("" if none).
std::pair<std::string, std::string> mechanism_of(const Json& r, const char* key) {
  const cJSON* entry = cJSON_GetObjectItemCaseSensitive(r.get("confined"), key);
  const cJSON* m = cJSON_GetObjectItemCaseSensitive(entry, "mechanism");
  const cJSON* why = cJSON_GetObjectItemCaseSensitive(entry, "reason");
  return {cJSON_IsString(m) ? m->valuestring : "<none>", cJSON_IsString(why) ? why->valuestring : ""};
}

TEST(Confine, AutoWithoutACgroupNamesTheRlimitsAndWhy) {
  // "auto" whose cgroup cannot be made (a parent off the cgroup2 hierarchy):
  // group mode, and the limits a cgroup would hold are rlimits, the reason
  // saying why there is no cgroup.
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"], \"contain\": \"auto\", \"cgroup_parent\": \"/tmp\", \"user\": 64917, "
           "\"group\": 64917, \"limits\": {\"memory_bytes\": 1073741824, \"processes\": 100}}");
  const std::string data = data_limit_of(sup_pid(p.get()));
  sup_abort(p.get());
  ASSERT_TRUE(p.wait());
  Json r = p.result();
  EXPECT_EQ(r.str("contained"), "group");
  EXPECT_EQ(data, "1073741824");
  for (const char* key : {"memory_bytes", "processes"}) {
    auto [mechanism, why] = mechanism_of(r, key);
    EXPECT_EQ(mechanism, "rlimit") << key << ": " << sup_result(p.get());
    EXPECT_NE(why.find("\"contain\": \"auto\" ran in group mode: "), std::string::npos) << key << ": " << why;
    EXPECT_NE(why.find("not on a cgroup v2 hierarchy"), std::string::npos) << key << ": " << why;
  }
}

TEST(Confine, AutoNamesTheMechanismTheChildHas) {
  // Wherever "auto" lands (here: a cgroup without the memory and pids
  // controllers, so rlimits), "confined" names what the child really has.
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"], \"contain\": \"auto\", \"user\": 64917, \"group\": 64917, "
           "\"limits\": {\"memory_bytes\": 1073741824, \"processes\": 100}}");
  const std::string data = data_limit_of(sup_pid(p.get()));
  const std::string nproc = slurp("/proc/" + std::to_string(sup_pid(p.get())) + "/limits");
  sup_abort(p.get());
  ASSERT_TRUE(p.wait());
  Json r = p.result();
  auto [memory, memory_why] = mechanism_of(r, "memory_bytes");
  auto [processes, processes_why] = mechanism_of(r, "processes");
  if (memory == "rlimit") {
    EXPECT_EQ(data, "1073741824");
    EXPECT_FALSE(memory_why.empty()) << "an rlimit where a cgroup was asked for says why";
    if (r.str("contained") == "cgroup")
      EXPECT_NE(memory_why.find("memory controller"), std::string::npos) << memory_why;
    else
      EXPECT_NE(memory_why.find("ran in group mode"), std::string::npos) << memory_why;
  } else {
    EXPECT_EQ(memory, "cgroup") << sup_result(p.get());
    EXPECT_EQ(r.str("contained"), "cgroup");
    EXPECT_EQ(data, "unlimited");
  }
  if (processes == "rlimit") {
    EXPECT_NE(nproc.find("Max processes             100"), std::string::npos) << nproc;
    EXPECT_FALSE(processes_why.empty());
  } else {
    EXPECT_EQ(processes, "cgroup") << sup_result(p.get());
  }
  std::printf("here: contained %s, memory_bytes by %s (%s)\n", r.str("contained").c_str(), memory.c_str(),
              memory_why.c_str());
}

TEST(Confine, ExecOnlyFromTheExecPaths) {
  if (landlock_abi() == 0) GTEST_SKIP() << "Landlock is not available on this kernel";
  TempDir dir;
  const std::string exec = sandbox_write(dir.path(), "\"exec\": [\"/usr\", \"/bin\", \"/lib\", \"/lib64\"]");
  SPAWN(p, sh(std::string(SUP_CONFINE_PROBE) + " write /dev/null", exec));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 126) << sup_result(p.get());
  SPAWN(ok, sh("/bin/true", exec));
  ASSERT_TRUE(ok.wait());
  EXPECT_EQ(ok.result().num("exit_code"), 0) << sup_result(ok.get());
}

TEST(Confine, StrictSandboxRunsWhereTheKernelHasEverything) {
  if (landlock_abi() < 5) GTEST_SKIP() << "Landlock ABI " << landlock_abi() << " lacks rights a strict sandbox needs";
  TempDir dir;
  SPAWN(p, sh("true", sandbox_write(dir.path(), "\"strict\": true, \"network\": false")));
  ASSERT_TRUE(p.wait());
  Json r = p.result();
  EXPECT_EQ(r.num("exit_code"), 0);
  const cJSON* sandbox = cJSON_GetObjectItemCaseSensitive(r.get("confined"), "sandbox");
  EXPECT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sandbox, "not_enforced")), 0) << sup_result(p.get());
}
