// The C ABI 0.2 additions, as a binding uses them: which part of a spawn
// failed, byte-exact input, the stdin pipe, output readiness fds, status lost,
// typed rusage and signals, and release while other threads wait.
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "helpers.hpp"

namespace {

using suptest::q;
using suptest::sh;

// A JSON string holding raw bytes: only '"', '\\' and control bytes are
// escaped; bytes >= 0x80 go in as they are, as the header documents.
std::string raw_json(const std::string& bytes) {
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string every_byte_but_nul() {
  std::string s;
  for (int c = 1; c < 256; ++c) s += static_cast<char>(c);
  return s;
}

std::string base64(const std::string& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kAlphabet[(v >> k) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

struct Failure {
  int rc;
  int part;
  std::string detail;
};

Failure spawn_failure(const std::string& spec) {
  sup_proc* p = nullptr;
  char buf[SUP_ERRBUF_SIZE];
  int part = -1;
  int rc = sup_spawn_v2(spec.c_str(), &p, buf, sizeof buf, &part);
  if (rc == 0) sup_release(p);
  return {rc, part, buf};
}

TEST(Version, IsZeroFour) {
  EXPECT_EQ(sup_version(), 400);
  EXPECT_EQ(SUP_VERSION_NUMBER, 400);
}

TEST(SpawnPart, TellsProgramFromCwdFromSpec) {
  Failure missing = spawn_failure("{\"argv\": [\"no-such-program-here\"]}");
  EXPECT_EQ(missing.rc, SUP_ENOENT);
  EXPECT_EQ(missing.part, SUP_PART_EXEC);
  EXPECT_EQ(missing.detail.rfind("exec ", 0), 0u) << missing.detail;

  Failure no_cwd = spawn_failure("{\"argv\": [\"true\"], \"cwd\": \"/no/such/dir\"}");
  EXPECT_EQ(no_cwd.rc, SUP_ENOENT);
  EXPECT_EQ(no_cwd.part, SUP_PART_CWD);
  EXPECT_EQ(no_cwd.detail.rfind("cwd ", 0), 0u) << no_cwd.detail;

  Failure not_dir = spawn_failure("{\"argv\": [\"true\"], \"cwd\": \"/etc/passwd\"}");
  EXPECT_EQ(not_dir.rc, SUP_ENOTDIR);
  EXPECT_EQ(not_dir.part, SUP_PART_CWD);

  Failure bad = spawn_failure("{\"argv\": [\"true\"], \"grace_ms\": -1}");
  EXPECT_EQ(bad.rc, SUP_EINVAL);
  EXPECT_EQ(bad.part, SUP_PART_SPEC);
  EXPECT_EQ(bad.detail.rfind("spec: grace_ms: ", 0), 0u) << bad.detail;

  sup_proc* p = nullptr;
  int part = -1;
  ASSERT_EQ(sup_spawn_v2("{\"argv\": [\"true\"]}", &p, nullptr, 0, &part), 0);
  EXPECT_EQ(part, SUP_PART_NONE);
  sup_release(p);
}

TEST(SpawnPart, DetailAlwaysFitsTheDocumentedBuffer) {
  // A long PATH of long entries once made the not-found detail longer than
  // any buffer a caller could guess.
  std::string path;
  for (int i = 0; i < 200; ++i) path += "/nonexistent/" + std::string(100, 'd') + std::to_string(i) + ":";
  path += "/last/entry";
  std::string long_name(3000, 'x');
  Failure f = spawn_failure("{\"argv\": [" + q(long_name) + "], \"env\": {\"PATH\": " + q(path) + "}}");
  EXPECT_EQ(f.rc, SUP_ENOENT);
  EXPECT_LT(f.detail.size(), size_t(SUP_ERRBUF_SIZE) - 1);
  EXPECT_NE(f.detail.find("..."), std::string::npos);
  EXPECT_NE(f.detail.find("/last/entry"), std::string::npos) << "the end of PATH is kept";
}

TEST(Bytes, EveryByteThroughArgvEnvAndStdin) {
  std::string bytes = every_byte_but_nul();
  SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"printf %s \\\"$1\\\"; printf %s \\\"$V\\\"; cat\", \"sh\", " +
               raw_json(bytes) + "], \"env\": {\"V\": " + raw_json(bytes) +
               "}, \"stdin\": {\"base64\": " + q(base64(std::string(1, '\0') + bytes)) + "}}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_result_exit_code(p.get()), 0);
  std::string out = p.output(SUP_STDOUT);
  EXPECT_EQ(out, bytes + bytes + std::string(1, '\0') + bytes);
}

TEST(Bytes, StdinDataKeepsNul) {
  SPAWN(p, "{\"argv\": [\"cat\"], \"stdin\": {\"data\": \"abc\\u0000def\\u00e9\"}}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), std::string("abc\0def\xC3\xA9", 9));
}

TEST(Bytes, NulElsewhereIsAnErrorNamingTheKey) {
  struct Case {
    const char* spec;
    const char* key;
  } cases[] = {
      {"{\"argv\": [\"echo\", \"a\\u0000b\"]}", "spec: argv[1]: "},
      {"{\"argv\": [\"echo\"], \"env\": {\"K\": \"a\\u0000b\"}}", "spec: env.K: "},
      {"{\"argv\": [\"echo\"], \"env\": {\"K\\u0000J\": \"v\"}}", "spec: env: "},
      {"{\"argv\": [\"echo\"], \"cwd\": \"/tmp\\u0000/x\"}", "spec: cwd: "},
      {"{\"argv\": [\"echo\"], \"on_timeout\": \"kill\\u0000\"}", "spec: on_timeout: "},
  };
  for (const Case& c : cases) {
    Failure f = spawn_failure(c.spec);
    EXPECT_EQ(f.rc, SUP_EINVAL) << c.spec;
    EXPECT_EQ(f.part, SUP_PART_SPEC) << c.spec;
    EXPECT_EQ(f.detail.rfind(c.key, 0), 0u) << c.spec << " -> " << f.detail;
  }
  // What the fuzzer found: cJSON also makes a NUL of a \u without four hex
  // digits, skips a byte order mark and takes any byte up to 0x20 as white
  // space; none of these may let a NUL cut a string short.
  struct Case2 {
    std::string spec;
    const char* key;
  } found[] = {
      {"{\"argv\": [\"echo\", \"abc\\uZZZZdef\"]}", "spec: argv[1]: "},
      {"{\"argv\": [\"cat\"], \"stdin\": {\"data\": \"x\\u00zzy\"}}", "spec: stdin.data: "},
      {"\xEF\xBB\xBF{\"argv\": [\"echo\", \"a\\u0000b\"]}", "spec: argv[1]: "},
      {"{\"argv\":[\"echo\"],\"env\":\x11{\"A\":\"\\u0000\"}}", "spec: env.A: "},
  };
  for (const Case2& c : found) {
    Failure f = spawn_failure(c.spec);
    EXPECT_EQ(f.rc, SUP_EINVAL) << c.spec;
    EXPECT_EQ(f.detail.rfind(c.key, 0), 0u) << c.spec << " -> " << f.detail;
  }
  // An escaped backslash before "u0000" is text, not a NUL.
  SPAWN(p, "{\"argv\": [\"printf\", \"%s\", \"a\\\\u0000b\"]}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "a\\u0000b");
}

TEST(Bytes, Base64IsStrict) {
  for (const char* bad : {"\"QUJD=\"", "\"Q\"", "\"QU JD\"", "\"QUJ*\"", "\"QR==\"", "1"}) {
    Failure f = spawn_failure(std::string("{\"argv\": [\"cat\"], \"stdin\": {\"base64\": ") + bad + "}}");
    EXPECT_EQ(f.rc, SUP_EINVAL) << bad;
    EXPECT_EQ(f.detail.rfind("spec: stdin.base64: ", 0), 0u) << bad << " -> " << f.detail;
  }
  Failure both = spawn_failure("{\"argv\": [\"cat\"], \"stdin\": {\"data\": \"a\", \"base64\": \"YQ==\"}}");
  EXPECT_EQ(both.rc, SUP_EINVAL);
  SPAWN(p, "{\"argv\": [\"cat\"], \"stdin\": {\"base64\": \"QUJDRA\"}}");  // unpadded
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "ABCD");
}

TEST(InputPipe, WriteThenCloseIsAConversation) {
  SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"read a; echo got:$a; read b; echo got:$b\"], \"stdin\": \"pipe\"}");
  size_t written = 0;
  ASSERT_EQ(sup_input_write(p.get(), "one\n", 4, &written), 0);
  EXPECT_EQ(written, 4u);
  uint64_t pos = 0;
  std::string seen;
  double end = suptest::now_ms() + 5000;
  while (seen.find("got:one\n") == std::string::npos && suptest::now_ms() < end) {
    sup_output_wait(p.get(), pos, SUP_POS_IGNORE, 100);
    char buf[64];
    size_t n = 0;
    sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n);
    seen.append(buf, n);
  }
  EXPECT_EQ(seen, "got:one\n");
  ASSERT_EQ(sup_input_write(p.get(), "two\n", 4, &written), 0);
  EXPECT_EQ(sup_input_close(p.get()), 0);
  EXPECT_EQ(sup_input_close(p.get()), 0) << "idempotent";
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, &written), SUP_EBADF);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "got:one\ngot:two\n");
}

TEST(InputPipe, FullPipeSaysEagainAndWaitSaysWhenThereIsRoom) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"], \"stdin\": \"pipe\"}");
  std::string chunk(65536, 'x');
  size_t total = 0, written = 0;
  int rc;
  while ((rc = sup_input_write(p.get(), chunk.data(), chunk.size(), &written)) == 0) total += written;
  EXPECT_EQ(rc, SUP_EAGAIN);
  EXPECT_EQ(written, 0u);
  EXPECT_GT(total, 0u);
  EXPECT_EQ(sup_input_wait(p.get(), 100), 0) << "no room while the child does not read";
  int fd = sup_input_fd(p.get());
  ASSERT_GE(fd, 0);
  pollfd out{fd, POLLOUT, 0};
  EXPECT_EQ(poll(&out, 1, 0), 0) << "the fd agrees: no room";
  EXPECT_EQ(sup_abort(p.get()), 0);
  EXPECT_EQ(sup_input_wait(p.get(), 5000), 1) << "final: a write would fail at once";
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, &written), SUP_EPIPE);
  EXPECT_EQ(sup_input_close(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_input_wait(p.get(), 0), SUP_EBADF);
}

TEST(InputPipe, RoomAgainOnceTheChildReads) {
  suptest::SchedulerLag lag;
  SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"sleep 0.3; exec cat >/dev/null\"], \"stdin\": \"pipe\"}");
  std::string chunk(65536, 'x');
  size_t written = 0;
  while (sup_input_write(p.get(), chunk.data(), chunk.size(), &written) == 0) {
  }
  double start = suptest::now_ms();
  EXPECT_EQ(sup_input_wait(p.get(), 5000), 1);
  EXPECT_LT(suptest::now_ms() - start, lag.allowance(4000));
  EXPECT_EQ(sup_input_write(p.get(), chunk.data(), chunk.size(), &written), 0);
  EXPECT_GT(written, 0u);
  sup_input_close(p.get());
  ASSERT_TRUE(p.wait());
}

TEST(InputPipe, ChildThatClosedStdinIsEpipeNeverSigpipe) {
  // The default SIGPIPE disposition would kill this test process.
  ASSERT_EQ(signal(SIGPIPE, SIG_DFL), SIG_DFL);
  SPAWN(p, "{\"argv\": [\"sh\", \"-c\", \"exec 0<&-; echo closed; sleep 5\"], \"stdin\": \"pipe\"}");
  uint64_t pos = 0;
  ASSERT_EQ(sup_output_wait(p.get(), 0, SUP_POS_IGNORE, 5000), 1);
  (void)pos;
  size_t written = 99;
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, &written), SUP_EPIPE);
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(sup_input_wait(p.get(), 1000), 1) << "a write would fail at once";
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  sup_abort(p.get());
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, &written), SUP_EPIPE) << "final";
}

TEST(InputPipe, OnlyForPipeMode) {
  SPAWN(p, "{\"argv\": [\"true\"]}");
  size_t written;
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, &written), SUP_EBADF);
  EXPECT_EQ(sup_input_wait(p.get(), 0), SUP_EBADF);
  EXPECT_EQ(sup_input_fd(p.get()), SUP_EBADF);
  EXPECT_EQ(sup_input_close(p.get()), SUP_EBADF);
  EXPECT_EQ(sup_input_write(nullptr, "x", 1, &written), SUP_EINVAL);
  EXPECT_EQ(sup_input_write(p.get(), nullptr, 1, &written), SUP_EINVAL);
}

TEST(OutputFd, LevelSemanticsPerStream) {
  SPAWN(p, sh("echo out; echo err >&2; read x", "\"stdin\": \"pipe\""));
  int out_fd = sup_output_fd(p.get(), SUP_STDOUT);
  int err_fd = sup_output_fd(p.get(), SUP_STDERR);
  ASSERT_GE(out_fd, 0);
  ASSERT_GE(err_fd, 0);
  EXPECT_NE(out_fd, err_fd);
  EXPECT_EQ(sup_output_fd(p.get(), SUP_STDOUT), out_fd) << "the same fd afterwards";
  EXPECT_EQ(sup_output_fd(p.get(), 3), SUP_EINVAL);
  pollfd out{out_fd, POLLIN, 0};
  ASSERT_EQ(poll(&out, 1, 5000), 1);
  EXPECT_EQ(poll(&out, 1, 0), 1) << "stays readable until read";
  uint64_t pos = 0;
  char buf[64];
  size_t n = 0;
  ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), 0);
  EXPECT_EQ(std::string(buf, n), "out\n");
  EXPECT_EQ(poll(&out, 1, 0), 0) << "read up to the end: not readable";
  // stdout is caught up while stderr has bytes: the stdout fd stays quiet.
  pollfd err{err_fd, POLLIN, 0};
  ASSERT_EQ(poll(&err, 1, 5000), 1);
  EXPECT_EQ(poll(&out, 1, 50), 0);
  sup_input_close(p.get());
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(poll(&out, 1, 0), 1) << "readable for good once final";
  int dup_fd = dup(out_fd);
  pollfd dup_poll{dup_fd, POLLIN, 0};
  EXPECT_EQ(poll(&dup_poll, 1, 0), 1);
  close(dup_fd);
}

TEST(OutputFd, TwoHundredLiveReadersOnOneEpollThread) {
  constexpr int kProcs = 200;
  std::vector<std::unique_ptr<suptest::Proc>> procs;
  int ep = epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(ep, 0);
  for (int i = 0; i < kProcs; ++i) {
    procs.push_back(std::make_unique<suptest::Proc>(
        sh("for i in 1 2 3; do echo line$i-" + std::to_string(i) + "; sleep 0.05; done")));
    ASSERT_EQ(procs.back()->rc(), 0) << procs.back()->error();
    int fd = sup_output_fd(procs.back()->get(), SUP_STDOUT);
    ASSERT_GE(fd, 0);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
  }
  std::vector<std::string> got(kProcs);
  std::vector<uint64_t> pos(kProcs, 0);
  std::vector<bool> ended(kProcs, false);
  int open = kProcs, wakeups = 0;
  double end = suptest::now_ms() + 30000;
  while (open > 0 && suptest::now_ms() < end) {
    epoll_event events[64];
    int n = epoll_wait(ep, events, 64, 1000);
    for (int k = 0; k < n; ++k) {
      ++wakeups;
      int i = static_cast<int>(events[k].data.u32);
      sup_proc* p = procs[i]->get();
      bool final = sup_poll(p, 0) == 1;  // final first, then read: nothing missed
      char buf[256];
      size_t got_n;
      do {
        ASSERT_EQ(sup_output_read(p, SUP_STDOUT, &pos[i], buf, sizeof buf, &got_n), 0);
        got[i].append(buf, got_n);
      } while (got_n > 0);
      if (final && !ended[i]) {
        ended[i] = true;
        --open;
        epoll_ctl(ep, EPOLL_CTL_DEL, sup_output_fd(p, SUP_STDOUT), nullptr);
      }
    }
  }
  close(ep);
  EXPECT_EQ(open, 0);
  for (int i = 0; i < kProcs; ++i) {
    std::string id = std::to_string(i);
    EXPECT_EQ(got[i], "line1-" + id + "\nline2-" + id + "\nline3-" + id + "\n");
  }
  // Level semantics without spinning: a few wake-ups per line, not thousands.
  EXPECT_LT(wakeups, kProcs * 3 * 4);
}

TEST(OutputWait, OneStreamIgnoresTheOther) {
  SPAWN(p, sh("echo err >&2; sleep 0.5; echo out", ""));
  double start = suptest::now_ms();
  // stderr has data at once; waiting on stdout alone must not wake for it.
  ASSERT_EQ(sup_output_wait(p.get(), 0, SUP_POS_IGNORE, 5000), 1);
  EXPECT_GT(suptest::now_ms() - start, 300);
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDOUT), 4);
  ASSERT_TRUE(p.wait());
}

TEST(Result, StatusLostIsItsOwnFact) {
  struct sigaction ignore {}, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGCHLD, &ignore, &old);
  suptest::Proc p(sh("exit 3"));
  bool final = p.rc() == 0 && p.wait();
  sigaction(SIGCHLD, &old, nullptr);
  ASSERT_TRUE(final) << p.error();
  EXPECT_EQ(sup_result_status_lost(p.get()), 1);
  EXPECT_EQ(sup_result_exit_code(p.get()), SUP_ENODATA);
  EXPECT_EQ(sup_result_term_signal(p.get()), SUP_ENODATA);
  auto r = p.result();
  EXPECT_TRUE(cJSON_IsTrue(r.get("status_lost")));
  EXPECT_TRUE(cJSON_IsNull(r.get("exit_code")));
  EXPECT_TRUE(cJSON_IsNull(r.get("term_signal")));

  SPAWN(q2, sh("exit 3"));
  ASSERT_TRUE(q2.wait());
  EXPECT_EQ(sup_result_status_lost(q2.get()), 0);
  EXPECT_TRUE(cJSON_IsFalse(q2.result().get("status_lost")));
  EXPECT_EQ(sup_result_exit_code(q2.get()), 3);
}

TEST(Result, TypedRusageAndSignals) {
  SPAWN(p, sh("trap 'exit 7' TERM; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo ready; "
              "while :; do sleep 0.05; done"));
  EXPECT_EQ(sup_result_rusage(p.get(), nullptr, nullptr, nullptr), SUP_EBUSY);
  EXPECT_EQ(sup_result_signals(p.get(), nullptr, nullptr, 0), SUP_EBUSY);
  ASSERT_EQ(sup_output_wait(p.get(), 0, SUP_POS_IGNORE, 5000), 1);
  sup_interrupt(p.get());
  ASSERT_TRUE(p.wait());
  double user = -1, sys = -1;
  int64_t rss = -1;
  ASSERT_EQ(sup_result_rusage(p.get(), &user, &sys, &rss), 0);
  auto r = p.result();
  EXPECT_DOUBLE_EQ(user, std::round(cJSON_GetObjectItem(r.get("rusage"), "user_ms")->valuedouble * 1000) / 1000);
  EXPECT_GT(user + sys, 0.0);
  EXPECT_GT(rss, 0);
  EXPECT_EQ(sup_result_signals(p.get(), nullptr, nullptr, 0), 1) << "SIGCONT is not listed";
  int sig = 0;
  double at = -1;
  EXPECT_EQ(sup_result_signals(p.get(), &sig, &at, 1), 1);
  EXPECT_EQ(sig, SIGTERM);
  EXPECT_GT(at, 0.0);
  EXPECT_EQ(sup_result_signals(nullptr, &sig, &at, 1), SUP_EINVAL);
  // The text gives the same times, in milliseconds to three decimals.
  EXPECT_DOUBLE_EQ(sys, std::round(cJSON_GetObjectItem(r.get("rusage"), "sys_ms")->valuedouble * 1000) / 1000);
  EXPECT_NEAR(r.num("duration_ms"), sup_result_duration_ms(p.get()), 0.0005 + 1e-9);
  EXPECT_NEAR(cJSON_GetObjectItem(cJSON_GetArrayItem(r.get("signals_sent"), 0), "at_ms")->valuedouble, at,
              0.0005 + 1e-9);
  const std::string text = sup_result(p.get());
  for (const char* key : {"duration_ms", "at_ms", "user_ms", "sys_ms"}) {
    size_t colon = text.find(std::string("\"") + key + "\": ");
    ASSERT_NE(colon, std::string::npos) << key;
    size_t from = text.find(": ", colon) + 2, to = text.find_first_of(",}", from);
    std::string number = text.substr(from, to - from);
    size_t dot = number.find('.');
    EXPECT_TRUE(dot != std::string::npos && dot > 0 && number.size() - dot == 4 &&
                number.find_first_not_of("0123456789.") == std::string::npos)
        << key << ": " << number;
  }
}

TEST(Release, WhileOthersWaitTheyReturnCanceled) {
  suptest::SchedulerLag lag;
  sup_proc* p = nullptr;
  ASSERT_EQ(sup_spawn("{\"argv\": [\"sleep\", \"30\"], \"stdin\": \"pipe\"}", &p), 0);
  std::string chunk(65536, 'x');
  size_t written;
  while (sup_input_write(p, chunk.data(), chunk.size(), &written) == 0) {
  }
  std::atomic<int> poll_rc{99}, wait_rc{99}, input_rc{99};
  std::thread a([&] { poll_rc = sup_poll(p, -1); });
  std::thread b([&] { wait_rc = sup_output_wait(p, 0, 0, -1); });
  std::thread c([&] { input_rc = sup_input_wait(p, -1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  double start = suptest::now_ms();
  sup_release(p);
  double took = suptest::now_ms() - start;
  a.join();
  b.join();
  c.join();
  EXPECT_LT(took, lag.allowance(2000));
  // Woken by the release itself, or by the final result that the release's
  // abort made: either way they left before the memory went.
  for (int rc : {poll_rc.load(), wait_rc.load(), input_rc.load()})
    EXPECT_TRUE(rc == SUP_ECANCELED || rc == 1) << rc;
}

}  // namespace
