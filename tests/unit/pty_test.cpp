// "pty": the child on a pseudo-terminal of its own. What a program sees
// (a terminal on 0, 1 and 2, its size, a controlling terminal), what the
// host types reaching it (lines, Ctrl-C, end of input), the output read to
// its last byte, and no terminal descriptor where it does not belong.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <set>

#include "helpers.hpp"

namespace {

using suptest::q;
using suptest::sh;

std::string pty_sh(const std::string& script, const std::string& extra = "") {
  return sh(script, "\"pty\": true" + (extra.empty() ? "" : ", " + extra));
}

// Writes all of text, waiting for room as a host would.
void type(sup_proc* p, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    size_t n = 0;
    int rc = sup_input_write(p, text.data() + off, text.size() - off, &n);
    if (rc == SUP_EAGAIN) {
      ASSERT_GE(sup_input_wait(p, 5000), 0);
      continue;
    }
    ASSERT_EQ(rc, 0) << sup_strerror(rc);
    off += n;
  }
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(Pty, TtyNamesATerminalOfDevPts) {
  SPAWN(p, "{\"argv\": [\"tty\"], \"pty\": true}");
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_EQ(r.num("exit_code"), 0);
  std::string out = p.output(SUP_STDOUT);
  // The kernel's default output modes turn "\n" into "\r\n".
  EXPECT_EQ(out.rfind("/dev/pts/", 0), 0u) << out;
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out.substr(out.size() - 2), "\r\n") << out;
  EXPECT_EQ(p.output(SUP_STDERR), "");
  EXPECT_EQ(cJSON_GetNumberValue(r.get("stderr", "bytes")), 0);
  // Both streams say where they went: the terminal.
  EXPECT_STREQ(cJSON_GetStringValue(r.get("stdout", "routed")), "pty");
  EXPECT_STREQ(cJSON_GetStringValue(r.get("stderr", "routed")), "pty");
}

TEST(Pty, StdinStdoutAndStderrAreTheTerminal) {
  SPAWN(p, pty_sh("test -t 0 -a -t 1 -a -t 2 && echo all-terminals; echo to-stderr >&2"));
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "all-terminals\r\nto-stderr\r\n");
  EXPECT_EQ(p.output(SUP_STDERR), "");
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDERR), 0);
}

TEST(Pty, TheChildLeadsASessionAndAGroupOfItsOwn) {
  // Fields 5, 6 and 7 of /proc/PID/stat: process group, session, tty.
  SPAWN(p, pty_sh("cut -d' ' -f5,6,7 /proc/$$/stat"));
  ASSERT_TRUE(p.wait());
  std::string out = p.output(SUP_STDOUT);
  int pgrp = 0, session = 0, tty = 0;
  ASSERT_EQ(sscanf(out.c_str(), "%d %d %d", &pgrp, &session, &tty), 3) << out;
  EXPECT_EQ(pgrp, sup_pid(p.get()));
  EXPECT_EQ(session, sup_pid(p.get()));
  EXPECT_NE(tty, 0) << "no controlling terminal";
}

TEST(Pty, SizeIsTheDefaultOrTheAskedOne) {
  SPAWN(dflt, "{\"argv\": [\"stty\", \"size\"], \"pty\": true}");
  SPAWN(asked, "{\"argv\": [\"stty\", \"size\"], \"pty\": {\"rows\": 50, \"cols\": 132}}");
  SPAWN(cols_only, "{\"argv\": [\"stty\", \"size\"], \"pty\": {\"cols\": 100}}");
  ASSERT_TRUE(dflt.wait());
  ASSERT_TRUE(asked.wait());
  ASSERT_TRUE(cols_only.wait());
  EXPECT_EQ(dflt.output(SUP_STDOUT), "24 80\r\n");
  EXPECT_EQ(asked.output(SUP_STDOUT), "50 132\r\n");
  EXPECT_EQ(cols_only.output(SUP_STDOUT), "24 100\r\n");
}

TEST(Pty, ResizeChangesTheSizeAndSendsSigwinch) {
  // The trap runs once the current short sleep ends; it proves SIGWINCH.
  SPAWN(p, pty_sh("trap 'stty size; exit 7' WINCH; stty size; echo ready; while :; do sleep 0.05; done",
                  "\"max_runtime_ms\": 20000"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "ready"));
  ASSERT_EQ(sup_pty_resize(p.get(), 40, 100), 0);
  ASSERT_TRUE(p.wait(20000));
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_EQ(r.num("exit_code"), 7);
  EXPECT_EQ(p.output(SUP_STDOUT), "24 80\r\nready\r\n40 100\r\n");
  // The child is gone: nothing to resize.
  EXPECT_EQ(sup_pty_resize(p.get(), 30, 90), SUP_ESRCH);
}

TEST(Pty, ResizeIsRefusedWithoutATerminalOrWithABadSize) {
  SPAWN(p, pty_sh("read x"));
  EXPECT_EQ(sup_pty_resize(nullptr, 24, 80), SUP_EINVAL);
  EXPECT_EQ(sup_pty_resize(p.get(), 0, 80), SUP_EINVAL);
  EXPECT_EQ(sup_pty_resize(p.get(), 24, 0), SUP_EINVAL);
  EXPECT_EQ(sup_pty_resize(p.get(), 65536, 80), SUP_EINVAL);
  EXPECT_EQ(sup_pty_resize(p.get(), 24, -1), SUP_EINVAL);
  EXPECT_EQ(sup_pty_resize(p.get(), 65535, 65535), 0);
  SPAWN(plain, sh("read x", "\"stdin\": \"pipe\""));
  EXPECT_EQ(sup_pty_resize(plain.get(), 24, 80), SUP_ENOTSUP);
  sup_abort(p.get());
  sup_abort(plain.get());
}

TEST(Pty, AChildReadsTheLineTheHostTypes) {
  SPAWN(p, pty_sh("read line; echo \"got:$line\""));
  type(p.get(), "hello world\n");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0);
  // The echo of the typed line comes first, then the child's own output.
  EXPECT_EQ(p.output(SUP_STDOUT), "hello world\r\ngot:hello world\r\n");
  EXPECT_GE(sup_input_fd(p.get()), 3);
}

TEST(Pty, CtrlCEndsTheChildWithSigint) {
  SPAWN(p, "{\"argv\": [\"sleep\", \"30\"], \"pty\": true}");
  type(p.get(), "\x03");
  ASSERT_TRUE(p.wait(10000));
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "signaled");
  EXPECT_EQ(r.str("term_signal"), "SIGINT");
  EXPECT_EQ(sup_result_term_signal(p.get()), SIGINT);
  EXPECT_LT(r.num("duration_ms"), 20000);
  // Nothing sup sent: the terminal did.
  EXPECT_EQ(sup_result_signals(p.get(), nullptr, nullptr, 0), 0);
  EXPECT_EQ(p.output(SUP_STDOUT), "^C");
}

TEST(Pty, InputCloseGivesTheChildEndOfFile) {
  SPAWN(p, pty_sh("cat; echo after-eof"));
  type(p.get(), "one\n");
  ASSERT_EQ(sup_input_close(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0);
  // "one" echoed, then cat's copy of it, then the shell goes on.
  EXPECT_EQ(p.output(SUP_STDOUT), "one\r\none\r\nafter-eof\r\n");
  // Closed: nothing more can be written, a second close changes nothing.
  size_t n = 9;
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, &n), SUP_EBADF);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(sup_input_close(p.get()), 0);
  EXPECT_EQ(sup_input_fd(p.get()), SUP_EBADF);
  EXPECT_EQ(sup_input_wait(p.get(), 0), SUP_EBADF);
}

TEST(Pty, InputCloseAfterAnUnfinishedLineStillEndsInput) {
  // The first VEOF sends "partial" to cat without a newline, the second one
  // ends its input.
  SPAWN(p, pty_sh("cat; echo; echo after-eof"));
  type(p.get(), "partial");
  ASSERT_EQ(sup_input_close(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0);
  EXPECT_EQ(p.output(SUP_STDOUT), "partialpartial\r\nafter-eof\r\n");
}

TEST(Pty, InputCloseWithNothingTypedEndsInput) {
  SPAWN(p, pty_sh("cat; echo after-eof"));
  ASSERT_EQ(sup_input_close(p.get()), 0);
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDOUT), "after-eof\r\n");
}

TEST(Pty, WritesAfterTheChildEndedFail) {
  SPAWN(p, "{\"argv\": [\"true\"], \"pty\": true}");
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(sup_input_write(p.get(), "x", 1, nullptr), SUP_EPIPE);
  EXPECT_EQ(sup_input_wait(p.get(), 0), 1);
  EXPECT_EQ(sup_input_close(p.get()), 0);
}

// The last bytes a child writes before it exits reach the result: the
// master is read to its end (EIO) first, whoever finishes the process.
void expect_whole_output(bool caller_waits) {
  constexpr size_t kBytes = 8u << 20;
  SPAWN(p, pty_sh("head -c " + std::to_string(kBytes) + " /dev/zero | tr '\\0' x; printf END"));
  if (caller_waits) {
    // sup_poll: the caller reads the master itself while it waits.
    ASSERT_EQ(sup_poll(p.get(), 60000), 1);
  } else {
    // On sup_fd: the loop reads and finishes.
    pollfd final_fd{sup_fd(p.get()), POLLIN, 0};
    ASSERT_GE(final_fd.fd, 0);
    ASSERT_EQ(poll(&final_fd, 1, 60000), 1);
    ASSERT_EQ(sup_poll(p.get(), 0), 1);
  }
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_EQ(r.num("exit_code"), 0);
  EXPECT_EQ(r.get("signals_sent") ? cJSON_GetArraySize(r.get("signals_sent")) : -1, 0);
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDOUT), static_cast<int64_t>(kBytes + 3));
  std::string out = p.output(SUP_STDOUT);
  ASSERT_EQ(out.size(), kBytes + 3);
  EXPECT_EQ(out.substr(kBytes), "END");
  EXPECT_EQ(out.find_first_not_of('x'), kBytes);
}

TEST(Pty, EightMebibytesThenExitArriveWholeToAWaitingCaller) { expect_whole_output(true); }
TEST(Pty, EightMebibytesThenExitArriveWholeToTheLoop) { expect_whole_output(false); }

TEST(Pty, ManySmallChildrenLoseNoLastBytes) {
  // Exits right after writing: the race between the last write and the
  // child's end, many times over, both ways of waiting.
  for (int i = 0; i < 40; ++i) {
    SPAWN(p, pty_sh("printf 'line %s\\n' " + std::to_string(i)));
    if (i % 2 == 0) {
      ASSERT_EQ(sup_poll(p.get(), 10000), 1);
    } else {
      ASSERT_TRUE(suptest::eventually([&] { return sup_poll(p.get(), 0) == 1; }, 10000));
    }
    EXPECT_EQ(p.output(SUP_STDOUT), "line " + std::to_string(i) + "\r\n");
  }
}

TEST(Pty, TwoHundredTerminalsAtOnce) {
  constexpr int kChildren = 200;
  std::vector<std::unique_ptr<suptest::Proc>> procs;
  for (int i = 0; i < kChildren; ++i) {
    procs.push_back(std::make_unique<suptest::Proc>(pty_sh("tty; read x; echo bye")));
    ASSERT_EQ(procs.back()->rc(), 0) << procs.back()->error();
  }
  // All of them hold their terminal now: each has a name of its own.
  for (auto& p : procs) ASSERT_TRUE(suptest::wait_for_output(p->get(), "\r\n", 20000));
  for (auto& p : procs) type(p->get(), "\n");
  std::set<std::string> names;
  for (auto& p : procs) {
    ASSERT_TRUE(p->wait(30000));
    EXPECT_EQ(p->result().num("exit_code"), 0);
    std::string out = p->output(SUP_STDOUT);
    EXPECT_EQ(out.rfind("/dev/pts/", 0), 0u) << out;
    names.insert(out.substr(0, out.find('\r')));
    EXPECT_TRUE(contains(out, "\r\nbye\r\n")) << out;
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kChildren));
}

// What a shell's descriptors point at, one per line.
std::string fd_targets_script() { return "for f in /proc/$$/fd/*; do echo \"${f##*/} $(readlink $f)\"; done"; }

TEST(Pty, NoTerminalDescriptorLeaksIntoOtherChildren) {
  SPAWN(holder, pty_sh("read x"));
  // Another child of sup's, without a terminal: no ptmx, no pts.
  SPAWN(plain, sh(fd_targets_script()));
  ASSERT_TRUE(plain.wait());
  std::string fds = plain.output(SUP_STDOUT);
  EXPECT_FALSE(contains(fds, "ptmx")) << fds;
  EXPECT_FALSE(contains(fds, "/dev/pts/")) << fds;
  // Another child with a terminal: its own slave on 0, 1 and 2, nothing else.
  SPAWN(second, pty_sh(fd_targets_script()));
  ASSERT_TRUE(second.wait());
  std::string own = second.output(SUP_STDOUT);
  EXPECT_FALSE(contains(own, "ptmx")) << own;
  size_t pts = 0;
  for (size_t at = 0; (at = own.find("/dev/pts/", at)) != std::string::npos; ++at) ++pts;
  EXPECT_EQ(pts, 3u) << own;
  // A child the host starts itself (system(3)) gets none of sup's either.
  suptest::TempDir dir;
  std::string listing = dir.file("fds");
  ASSERT_EQ(std::system(("sh -c '" + fd_targets_script() + "' >" + listing).c_str()), 0);
  std::string host_child = suptest::read_file(listing);
  EXPECT_FALSE(contains(host_child, "ptmx")) << host_child;
  sup_abort(holder.get());
}

TEST(Pty, OutputFeedsTheIdleClockAndIsLiveReadable) {
  SPAWN(p, pty_sh("echo start; exec sleep 30", "\"idle_timeout_ms\": 300"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "start\r\n"));
  ASSERT_TRUE(p.wait(20000));
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "idle_timeout");
  EXPECT_EQ(r.str("term_signal"), "SIGTERM");
  EXPECT_EQ(p.output(SUP_STDOUT), "start\r\n");
}

TEST(Pty, BackpressureHoldsTheChildAndLosesNothing) {
  constexpr size_t kBytes = 1u << 20;
  SPAWN(p, pty_sh("head -c " + std::to_string(kBytes) + " /dev/zero | tr '\\0' y",
                  "\"backpressure_bytes\": 65536, \"max_output_bytes\": 131072"));
  std::string seen;
  uint64_t pos = 0;
  char buf[8192];
  const double end = suptest::now_ms() + 60000;
  for (;;) {
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), 0);
    ASSERT_EQ(pos, seen.size() + n) << "bytes were dropped before they were read";
    seen.append(buf, n);
    if (n == 0) {
      if (sup_poll(p.get(), 0) == 1) break;
      ASSERT_LT(suptest::now_ms(), end);
      sup_output_wait(p.get(), pos, SUP_POS_IGNORE, 200);
    }
  }
  EXPECT_EQ(seen.size(), kBytes);
  EXPECT_EQ(seen.find_first_not_of('y'), std::string::npos);
}

TEST(Pty, BadSpecsAreRefused) {
  struct Case {
    const char* extra;
    const char* detail;
  } cases[] = {
      {"\"pty\": \"yes\"", "spec: pty: must be true, false or"},
      {"\"pty\": 1", "spec: pty: must be true, false or"},
      {"\"pty\": null", "spec: pty: must be true, false or"},
      {"\"pty\": {\"rows\": 0}", "spec: pty.rows: must be an integer from 1 to 65535"},
      {"\"pty\": {\"rows\": 65536}", "spec: pty.rows: must be an integer from 1 to 65535"},
      {"\"pty\": {\"rows\": 2.5}", "spec: pty.rows: must be an integer from 1 to 65535"},
      {"\"pty\": {\"cols\": \"80\"}", "spec: pty.cols: must be an integer from 1 to 65535"},
      {"\"pty\": {\"cols\": -3}", "spec: pty.cols: must be an integer from 1 to 65535"},
      {"\"pty\": {\"depth\": 8}", "spec: pty.depth: unknown key"},
      {"\"pty\": {\"rows\": 10, \"rows\": 11}", "spec: pty.rows: appears twice"},
      {"\"pty\": true, \"stdin\": \"pipe\"", "spec: stdin: not allowed with \"pty\""},
      {"\"stdin\": \"null\", \"pty\": true", "spec: stdin: not allowed with \"pty\""},
      {"\"pty\": {}, \"stdin\": {\"data\": \"x\"}", "spec: stdin: not allowed with \"pty\""},
      {"\"pty\": true, \"tty_foreground\": false", "spec: tty_foreground: not allowed with \"pty\""},
      {"\"pty\": true, \"stdout\": \"pipe\"", "spec: stdout: not allowed with \"pty\""},
      {"\"stderr\": \"stdout\", \"pty\": true", "spec: stderr: not allowed with \"pty\""},
      {"\"pty\": {\"rows\": 5}, \"stderr\": \"null\"", "spec: stderr: not allowed with \"pty\""},
  };
  for (const Case& c : cases) {
    suptest::Proc p(sh("true", c.extra));
    EXPECT_EQ(p.rc(), SUP_EINVAL) << c.extra;
    EXPECT_EQ(p.get(), nullptr);
    EXPECT_EQ(p.error().rfind(c.detail, 0), 0u) << c.extra << " -> " << p.error();
  }
  // Off is no terminal, and then the other keys are as ever.
  SPAWN(off, sh("test -t 0 || echo no-terminal", "\"pty\": false, \"stdin\": \"null\""));
  ASSERT_TRUE(off.wait());
  EXPECT_EQ(off.output(SUP_STDOUT), "no-terminal\n");
}

TEST(Pty, AFailedStartLeavesNoTerminalBehind) {
  // Failing before the clone (no such program) and after it (the cwd, in
  // the child): the terminal's descriptors go with the failed spawn.
  // The engine's own fds first; and the loop closes what earlier tests'
  // children held a moment after their release: the count settles first.
  suptest::Proc warm("{\"argv\": [\"true\"], \"pty\": true, \"cwd\": \"/nonexistent-dir\"}");
  ASSERT_EQ(warm.rc(), SUP_ENOENT);
  int before = suptest::open_fds();
  for (int settled = 0; settled < 5;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int now = suptest::open_fds();
    settled = now == before ? settled + 1 : 0;
    before = now;
  }
  for (int i = 0; i < 20; ++i) {
    suptest::Proc missing("{\"argv\": [\"/nonexistent/tool\"], \"pty\": true}");
    EXPECT_EQ(missing.rc(), SUP_ENOENT);
    suptest::Proc bad_cwd("{\"argv\": [\"true\"], \"pty\": true, \"cwd\": \"/nonexistent-dir\"}");
    EXPECT_EQ(bad_cwd.rc(), SUP_ENOENT);
    EXPECT_EQ(bad_cwd.error().rfind("cwd \"/nonexistent-dir\"", 0), 0u) << bad_cwd.error();
  }
  // 40 failed spawns: a terminal fd left by each could not hide.
  EXPECT_TRUE(suptest::eventually([&] { return suptest::open_fds() <= before; })) << suptest::open_fds() << " fds, "
                                                                                  << before << " before";
}

TEST(Pty, NoTerminalLeftIsENOSPCWithADetail) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support threads after fork()";
#endif
  // A devpts instance of one terminal, in a mount namespace of a forked
  // child's own: the machine's terminals are not used up. Needs the right
  // to mount (root, or a user namespace that grants it).
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("devpts", "/dev/pts", "devpts", 0, "newinstance,ptmxmode=0666,max=1") != 0 ||
        mount("/dev/pts/ptmx", "/dev/ptmx", nullptr, MS_BIND, nullptr) != 0)
      _exit(77);
    sup_proc* first = nullptr;
    if (sup_spawn("{\"argv\": [\"sleep\", \"30\"], \"pty\": true}", &first) != 0) _exit(10);
    sup_proc* second = nullptr;
    char detail[SUP_ERRBUF_SIZE];
    int part = -1;
    int rc = sup_spawn_v2("{\"argv\": [\"true\"], \"pty\": true}", &second, detail, sizeof detail, &part);
    int status = 0;
    if (rc != SUP_ENOSPC) status = 11;
    else if (second != nullptr) status = 12;
    else if (part != SUP_PART_SYSTEM) status = 13;
    else if (std::string(detail).rfind("pty: open /dev/ptmx: ", 0) != 0) status = 14;
    else if (!contains(detail, "/proc/sys/kernel/pty/max")) status = 15;
    sup_release(first);
    // A terminal released is a terminal free again, once the loop has
    // closed its side too (just after the release).
    sup_proc* third = nullptr;
    for (int tries = 0; status == 0 && third == nullptr; ++tries) {
      rc = sup_spawn("{\"argv\": [\"true\"], \"pty\": true}", &third);
      if (rc != 0 && (rc != SUP_ENOSPC || tries == 200)) status = 16;
      if (rc != 0) usleep(10000);
    }
    sup_release(third);
    _exit(status);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot mount a devpts instance here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the status codes in the test";
}

}  // namespace
