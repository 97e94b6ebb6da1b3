// "stdout" / "stderr" routing: pipe, tee, inherit, null, and stderr into
// stdout; the result's "routed"; a tee's host fd that is slow, full or gone.
#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <atomic>

#include "helpers.hpp"

namespace {

using suptest::sh;

// Points the test process's fd `target` at `to` until destroyed: a child
// spawned meanwhile inherits (or tees to) it.
class Redirect {
 public:
  Redirect(int target, int to) : target_(target), saved_(dup(target)) {
    fflush(nullptr);
    dup2(to, target);
  }
  ~Redirect() {
    fflush(nullptr);
    dup2(saved_, target_);
    close(saved_);
  }

 private:
  int target_;
  int saved_;
};

struct HostPipe {
  int r = -1, w = -1;
  HostPipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0) r = fds[0], w = fds[1];
  }
  ~HostPipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
  void close_write() {
    close(w);
    w = -1;
  }
  std::string read_all() {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = read(r, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }
};

std::string routed(const suptest::Json& j, const char* stream) {
  const cJSON* v = j.get(stream, "routed");
  return cJSON_IsString(v) ? v->valuestring : "<none>";
}

TEST(Routing, DefaultIsPipeForBoth) {
  SPAWN(p, sh("echo out; echo err >&2"));
  ASSERT_TRUE(p.wait());
  auto j = p.result();
  EXPECT_EQ(routed(j, "stdout"), "pipe");
  EXPECT_EQ(routed(j, "stderr"), "pipe");
  EXPECT_EQ(p.output(SUP_STDOUT), "out\n");
  EXPECT_EQ(p.output(SUP_STDERR), "err\n");
}

TEST(Routing, StderrIntoStdoutKeepsTheWriteOrder) {
  std::string script = "for i in 1 2 3 4 5 6 7 8 9 10; do echo o$i; echo e$i >&2; done";
  SPAWN(p, sh(script, "\"stderr\": \"stdout\""));
  ASSERT_TRUE(p.wait());
  std::string expected;
  for (int i = 1; i <= 10; ++i) expected += "o" + std::to_string(i) + "\ne" + std::to_string(i) + "\n";
  EXPECT_EQ(p.output(SUP_STDOUT), expected);
  EXPECT_EQ(p.output(SUP_STDERR), "");
  auto j = p.result();
  EXPECT_EQ(routed(j, "stdout"), "pipe");
  EXPECT_EQ(routed(j, "stderr"), "stdout");
  EXPECT_EQ(j.num("exit_code"), 0);
}

TEST(Routing, NullDiscardsAndTheChildWritesWithoutError) {
  SPAWN(p, sh("echo out || exit 3; echo err >&2 || exit 4", "\"stdout\": \"null\", \"stderr\": \"null\""));
  ASSERT_TRUE(p.wait());
  auto j = p.result();
  EXPECT_EQ(j.num("exit_code"), 0);
  EXPECT_EQ(j.get("stdout", "bytes")->valuedouble, 0);
  EXPECT_EQ(routed(j, "stdout"), "null");
  EXPECT_EQ(routed(j, "stderr"), "null");
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDERR), 0);
}

TEST(Routing, StderrIntoNullStdout) {
  SPAWN(p, sh("echo err >&2 || exit 4", "\"stdout\": \"null\", \"stderr\": \"stdout\""));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0);
  EXPECT_EQ(p.output(SUP_STDOUT), "");
}

TEST(Routing, InheritWritesToTheHostsOwnFd) {
  suptest::TempDir dir;
  int file = open(dir.file("out").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(file, 0);
  sup_proc* raw = nullptr;
  {
    Redirect to_file(1, file);
    ASSERT_EQ(sup_spawn(sh("echo to-host; echo err >&2", "\"stdout\": \"inherit\", \"stderr\": \"stdout\"").c_str(), &raw), 0);
  }
  close(file);
  ASSERT_EQ(sup_poll(raw, 10000), 1);
  auto j = suptest::parse(sup_result(raw));
  EXPECT_EQ(routed(j, "stdout"), "inherit");
  EXPECT_EQ(routed(j, "stderr"), "stdout");
  EXPECT_EQ(sup_output_total(raw, SUP_STDOUT), 0);
  sup_release(raw);
  EXPECT_EQ(suptest::read_file(dir.file("out")), "to-host\nerr\n");
}

TEST(Routing, TeeCapturesAndCopiesEveryByteInOrder) {
  HostPipe host;
  sup_proc* raw = nullptr;
  {
    Redirect to_pipe(1, host.w);
    // 1 MiB+: more than the pipe holds, so the copy waits for this reader.
    ASSERT_EQ(sup_spawn(sh("seq 1 200000", "\"stdout\": \"tee\"").c_str(), &raw), 0);
  }
  host.close_write();
  std::string copied;
  std::thread reader([&] { copied = host.read_all(); });
  ASSERT_EQ(sup_poll(raw, 20000), 1);
  size_t len = 0;
  const char* captured = sup_result_output(raw, SUP_STDOUT, &len);
  std::string kept(captured, len);
  auto j = suptest::parse(sup_result(raw));
  sup_release(raw);  // closes sup's copy of the pipe: the reader sees EOF
  reader.join();
  EXPECT_EQ(routed(j, "stdout"), "tee");
  EXPECT_EQ(kept.size(), 1288895u);
  EXPECT_EQ(copied, kept);
}

// A gone reader ends the stream as the host's fd itself would (0.4): seq
// dies of SIGPIPE at its next write, the shell goes on (its stderr is
// another stream), the capture keeps what sup read, and the host is not
// touched.
TEST(Routing, TeeToAGoneReaderEndsTheStreamKeepsTheCaptureAndTheHost) {
  HostPipe host;
  close(host.r);
  host.r = -1;
  sup_proc* raw = nullptr;
  {
    Redirect to_pipe(1, host.w);
    ASSERT_EQ(sup_spawn(sh("seq 1 100000; echo \"seq $?\" >&2", "\"stdout\": \"tee\"").c_str(), &raw), 0);
  }
  ASSERT_EQ(sup_poll(raw, 20000), 1);
  size_t len = 0;
  const char* out = sup_result_output(raw, SUP_STDOUT, &len);
  EXPECT_GT(len, 0u);
  EXPECT_LT(len, 588895u);
  EXPECT_EQ(std::string(out, std::min<size_t>(len, 4)), "1\n2\n");
  size_t err_len = 0;
  const char* err = sup_result_output(raw, SUP_STDERR, &err_len);
  EXPECT_EQ(std::string(err, err_len), "seq " + std::to_string(128 + SIGPIPE) + "\n");
  EXPECT_EQ(sup_result_exit_code(raw), 0);
  auto j = suptest::parse(sup_result(raw));
  EXPECT_EQ(cJSON_GetStringValue(j.get("stdout", "tee_error")), std::string("EPIPE"));
  sup_release(raw);
  // The host was not killed by SIGPIPE, and none is left pending for it.
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(Routing, TeeToAFullFdNeverReadDoesNotHangTheResult) {
  HostPipe host;  // never read
  sup_proc* raw = nullptr;
  {
    Redirect to_pipe(1, host.w);
    ASSERT_EQ(sup_spawn(sh("head -c 4000000 /dev/zero", "\"stdout\": \"tee\", \"max_runtime_ms\": 300").c_str(), &raw), 0);
  }
  // Held back meanwhile (the child blocks as on the full fd), then ended
  // by max_runtime; the copies the fd never takes are given up on.
  ASSERT_EQ(sup_poll(raw, 30000), 1);
  EXPECT_EQ(sup_result_outcome(raw), SUP_OUTCOME_MAX_RUNTIME);
  int64_t total = sup_output_total(raw, SUP_STDOUT);
  size_t len = 0;
  sup_result_output(raw, SUP_STDOUT, &len);
  EXPECT_EQ(static_cast<int64_t>(len), total);  // every byte read is kept
  sup_release(raw);
}

TEST(Routing, TheResultWaitsForASlowHostFdUntilAborted) {
  HostPipe host;
  sup_proc* raw = nullptr;
  {
    Redirect to_pipe(1, host.w);
    // More than the host's pipe holds: the rest waits in sup when the child exits.
    ASSERT_EQ(sup_spawn(sh("head -c 300000 /dev/zero", "\"stdout\": \"tee\"").c_str(), &raw), 0);
  }
  host.close_write();
  std::atomic<bool> stop{false};
  // Takes a page every 300 ms (a pipe is writable again once a page is
  // free): progress, so sup keeps waiting for it.
  std::thread reader([&] {
    char page[4096];
    while (!stop && read(host.r, page, sizeof page) > 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  const pid_t pid = sup_pid(raw);
  ASSERT_TRUE(suptest::eventually([&] { return !suptest::running(pid); }, 10000));
  EXPECT_EQ(sup_poll(raw, 1500), 0);  // the copies are still going out
  EXPECT_EQ(sup_abort(raw), 0);
  EXPECT_EQ(sup_poll(raw, 10000), 1);
  // The child had exited by itself: the abort only dropped the copies.
  EXPECT_EQ(sup_result_outcome(raw), SUP_OUTCOME_EXITED);
  size_t len = 0;
  sup_result_output(raw, SUP_STDOUT, &len);
  EXPECT_EQ(len, 300000u);
  stop = true;
  sup_release(raw);
  reader.join();
}

TEST(Routing, TeeToANonBlockingHostFd) {
  HostPipe host;
  // The host's own description is non-blocking: sup's copies must not see
  // EAGAIN as an error, nor change the host's flag.
  fcntl(host.w, F_SETFL, fcntl(host.w, F_GETFL) | O_NONBLOCK);
  sup_proc* raw = nullptr;
  {
    Redirect to_pipe(1, host.w);
    ASSERT_EQ(sup_spawn(sh("seq 1 100000", "\"stdout\": \"tee\"").c_str(), &raw), 0);
  }
  host.close_write();
  std::string copied;
  std::thread reader([&] {
    fcntl(host.r, F_SETFL, fcntl(host.r, F_GETFL) & ~O_NONBLOCK);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the pipe fill
    copied = host.read_all();
  });
  ASSERT_EQ(sup_poll(raw, 20000), 1);
  sup_release(raw);
  reader.join();
  EXPECT_EQ(copied.size(), 588895u);
}

TEST(Routing, StreamsNotReadDoNotFeedTheIdleClock) {
  // stdout goes to /dev/null every 50 ms; stderr, the one sup reads, is silent.
  SPAWN(p, sh("while :; do echo tick; sleep 0.05; done",
              "\"stdout\": \"null\", \"idle_timeout_ms\": 400, \"grace_ms\": 100"));
  ASSERT_TRUE(p.wait(20000));
  EXPECT_EQ(p.result().str("outcome"), "idle_timeout");
}

TEST(Routing, IdleTimeoutWithNothingReadIsRefused) {
  for (const char* routes : {"\"stdout\": \"null\", \"stderr\": \"inherit\"", "\"stdout\": \"inherit\", \"stderr\": \"stdout\""}) {
    sup_proc* p = nullptr;
    char err[512] = "";
    std::string spec = std::string("{\"argv\": [\"true\"], \"idle_timeout_ms\": 100, ") + routes + "}";
    EXPECT_EQ(sup_spawn_ex(spec.c_str(), &p, err, sizeof err), SUP_EINVAL);
    EXPECT_EQ(std::string(err).rfind("spec: idle_timeout_ms: ", 0), 0u) << err;
  }
  // The same routes without an idle timeout run.
  SPAWN(q, "{\"argv\": [\"true\"], \"stdout\": \"null\", \"stderr\": \"stdout\"}");
  EXPECT_TRUE(q.wait());
}

TEST(Routing, BadRoutesAreRefused) {
  struct Bad {
    const char* routes;
    const char* message;
  };
  for (const Bad& bad : {Bad{"\"stdout\": \"stdout\"", "stdout: must be \"pipe\", \"tee\", \"inherit\", \"null\" or {\"fd\": N}"},
                         Bad{"\"stdout\": \"file\"", "not \"file\""},
                         Bad{"\"stderr\": 2", "stderr: must be"},
                         Bad{"\"stderr\": \"stderr\"", "stderr: must be"}}) {
    sup_proc* p = nullptr;
    char err[512] = "";
    std::string spec = std::string("{\"argv\": [\"true\"], ") + bad.routes + "}";
    EXPECT_EQ(sup_spawn_ex(spec.c_str(), &p, err, sizeof err), SUP_EINVAL);
    EXPECT_NE(std::string(err).find(bad.message), std::string::npos) << err;
  }
}

}  // namespace
