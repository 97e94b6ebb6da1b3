// A live reader that reads the child's pipe itself (backpressure_bytes set,
// waiting on sup_output_fd): every byte in order, the idle clock and the
// first-output limit kept by its reads, the pipe's end handed back to the
// loop, sup_output_wait served, and the end of the child as without it.
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <fstream>

#include "helpers.hpp"

namespace {

using suptest::sh;

struct Streams {
  std::string out, err;
  int reads = 0;
};

// Reads both streams through their sup_output_fd until the result is final
// and each read gives nothing; sleeps pause_ms after every pause_every-th
// read (0: never), as a reader busy elsewhere.
Streams read_live(sup_proc* p, int pause_every = 0, int pause_ms = 0) {
  Streams s;
  const int fds[2] = {sup_output_fd(p, SUP_STDOUT), sup_output_fd(p, SUP_STDERR)};
  EXPECT_GE(fds[0], 0);
  EXPECT_GE(fds[1], 0);
  uint64_t pos[2] = {0, 0};
  std::vector<char> buf(100000);
  for (;;) {
    // Final first, then read: output that lands between the two is not lost.
    const bool final = sup_poll(p, 0) == 1;
    bool got_any = false;
    for (int i = 0; i < 2; ++i) {
      for (;;) {
        size_t n = 0;
        uint64_t before = pos[i];
        EXPECT_EQ(sup_output_read(p, i == 0 ? SUP_STDOUT : SUP_STDERR, &pos[i], buf.data(), buf.size(), &n), 0);
        EXPECT_EQ(pos[i], before + n) << "a gap: bytes were dropped";
        if (n == 0) break;
        got_any = true;
        (i == 0 ? s.out : s.err).append(buf.data(), n);
        if (pause_every > 0 && ++s.reads % pause_every == 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      }
    }
    if (final && !got_any) return s;
    pollfd pfd[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    poll(pfd, 2, 1000);
  }
}

std::string seq(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += std::to_string(i) + "\n";
  return s;
}

// How many descriptors the epoll set fd watches (fdinfo's "tfd:" lines), or
// -1 if it watches none (an eventfd, say).
int epoll_targets(int fd) {
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
  std::string line;
  int targets = 0;
  while (std::getline(info, line))
    if (line.rfind("tfd:", 0) == 0) ++targets;
  return targets > 0 ? targets : -1;
}

TEST(DirectRead, TheReaderIsGivenThePipeOnlyWithBackpressure) {
  // Backpressure: an epoll set of the pipe and the stream's eventfd.
  SPAWN(direct, sh("sleep 5", "\"backpressure_bytes\": 65536"));
  EXPECT_EQ(epoll_targets(sup_output_fd(direct.get(), SUP_STDOUT)), 2);
  EXPECT_EQ(sup_output_fd(direct.get(), SUP_STDOUT), sup_output_fd(direct.get(), SUP_STDOUT)) << "the same fd";
  // Without it sup drains the pipe at all times: the eventfd alone.
  SPAWN(drained, sh("sleep 5"));
  EXPECT_EQ(epoll_targets(sup_output_fd(drained.get(), SUP_STDOUT)), -1);
  // A tee's copies are the loop's to write.
  SPAWN(tee, sh("sleep 5", "\"backpressure_bytes\": 65536, \"stdout\": \"tee\""));
  EXPECT_EQ(epoll_targets(sup_output_fd(tee.get(), SUP_STDOUT)), -1);
  // Once final there is no pipe to give.
  SPAWN(done, sh("true", "\"backpressure_bytes\": 65536"));
  ASSERT_TRUE(done.wait());
  EXPECT_EQ(epoll_targets(sup_output_fd(done.get(), SUP_STDOUT)), -1);
  pollfd pfd{sup_output_fd(done.get(), SUP_STDOUT), POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 1) << "readable for good once final";
}

TEST(DirectRead, EveryByteInOrderOnBothStreamsWithASlowReader) {
  // 3.4 MB and 0.6 MB through a 64 KiB window, keeping 1 KiB: the reader gets
  // every byte though it stops for a while now and then (the child blocks
  // on the full pipe meanwhile, and is not counted silent).
  SPAWN(p, sh("seq 1 500000 & seq 1 100000 >&2; wait",
              "\"backpressure_bytes\": 65536, \"max_output_bytes\": 1024, \"idle_timeout_ms\": 5000"));
  Streams s = read_live(p.get(), /*pause_every=*/20, /*pause_ms=*/30);
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED) << sup_result(p.get());
  EXPECT_TRUE(s.out == seq(1, 500000)) << "stdout: " << s.out.size() << " bytes";
  EXPECT_TRUE(s.err == seq(1, 100000)) << "stderr: " << s.err.size() << " bytes";
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDOUT), static_cast<int64_t>(s.out.size()));
  EXPECT_EQ(sup_result_omitted_bytes(p.get(), SUP_STDOUT), static_cast<int64_t>(s.out.size() - 1024));
}

TEST(DirectRead, ReadsKeepTheIdleClockRunningForAChattyChild) {
  // A line every 100 ms for 1.5 s, then silence, under a 1 s idle limit: the
  // reader's own reads are the child's activity, so the limit ends it only
  // after the silence, with every line read.
  SPAWN(p, sh("i=0; while [ $i -lt 15 ]; do echo line $i; sleep 0.1; i=$((i+1)); done; exec sleep 30",
              "\"backpressure_bytes\": 65536, \"idle_timeout_ms\": 1000"));
  const double start = suptest::now_ms();
  Streams s = read_live(p.get());
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT) << sup_result(p.get());
  EXPECT_NE(s.out.find("line 14\n"), std::string::npos) << s.out;
  EXPECT_GE(suptest::now_ms() - start, 2400) << "ended before 1 s of silence after 1.5 s of output";
}

TEST(DirectRead, TheFirstByteReadTurnsTheFirstOutputLimitIntoTheIdleLimit) {
  SPAWN(p, sh("echo ready; exec sleep 30",
              "\"backpressure_bytes\": 65536, \"first_output_timeout_ms\": 20000, \"idle_timeout_ms\": 300"));
  const double start = suptest::now_ms();
  Streams s = read_live(p.get());
  EXPECT_EQ(s.out, "ready\n");
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT) << sup_result(p.get());
  EXPECT_EQ(sup_result_phase(p.get()), SUP_PHASE_IDLE) << sup_result(p.get());
  EXPECT_LT(suptest::now_ms() - start, 15000) << "the first-output limit applied after the first byte";
}

TEST(DirectRead, ThePipesEndGoesBackToTheLoopAndWakesNobody) {
  // stdout closes 2 s before the child exits: once the reader has seen the
  // end, its fd is quiet (no busy loop) until the result is final.
  SPAWN(p, sh("echo data; exec >&-; sleep 2; exit 3", "\"backpressure_bytes\": 65536"));
  const int fd = sup_output_fd(p.get(), SUP_STDOUT);
  std::string got;
  uint64_t pos = 0;
  char buf[256];
  pollfd pfd{fd, POLLIN, 0};
  // Read until the fd stays quiet for 300 ms, as it must once the reader has
  // met the end of file (a read of 0 bytes before that only means "not yet").
  bool quiet = false;
  for (int i = 0; i < 100 && !quiet; ++i) {
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), 0);
    got.append(buf, n);
    if (n == 0) quiet = poll(&pfd, 1, 300) == 0;
  }
  EXPECT_TRUE(quiet) << "readable while the child runs, with nothing to read";
  EXPECT_EQ(got, "data\n");
  ASSERT_EQ(sup_poll(p.get(), 0), 0) << sup_result(p.get());
  EXPECT_EQ(poll(&pfd, 1, 10000), 1) << "readable once final";
  EXPECT_EQ(sup_poll(p.get(), 0), 1);
  EXPECT_EQ(sup_result_exit_code(p.get()), 3);
}

TEST(DirectRead, AWaitInSupOutputWaitIsServedByTheLoop) {
  // The fd taken, then the blocking idiom instead: sup_output_wait wakes for
  // the bytes all the same (the loop reads the pipe again).
  SPAWN(p, sh("seq 1 200000", "\"backpressure_bytes\": 65536"));
  ASSERT_GE(sup_output_fd(p.get(), SUP_STDOUT), 0);
  std::string got;
  uint64_t pos = 0;
  std::vector<char> buf(65536);
  for (int rounds = 0; rounds < 100000; ++rounds) {
    const bool final = sup_poll(p.get(), 0) == 1;
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n), 0);
    got.append(buf.data(), n);
    if (n > 0) continue;
    if (final) break;
    ASSERT_GE(sup_output_wait(p.get(), pos, SUP_POS_IGNORE, 10000), 0);
  }
  EXPECT_TRUE(got == seq(1, 200000)) << got.size() << " bytes";
}

TEST(DirectRead, AbortEndsAChildBlockedOnAReaderThatStoppedReading) {
  // The reader took the fd and read nothing: the child blocks on the full
  // pipe. sup_abort ends it at once, and what the pipe held is kept.
  SPAWN(p, sh("seq 1 1000000", "\"backpressure_bytes\": 65536"));
  ASSERT_GE(sup_output_fd(p.get(), SUP_STDOUT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(sup_poll(p.get(), 0), 0);
  const double start = suptest::now_ms();
  ASSERT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait(10000));
  EXPECT_LT(suptest::now_ms() - start, 5000);
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_ABORTED);
  EXPECT_GE(sup_output_total(p.get(), SUP_STDOUT), 4096) << "the pipe's bytes are drained into the capture";
  std::string kept = p.output(SUP_STDOUT);
  EXPECT_EQ(kept.rfind("1\n2\n3\n", 0), 0u) << kept.substr(0, 20);
}

TEST(DirectRead, AnIdleLimitCountsBytesLeftInThePipe) {
  // The reader took the fd, read the first line and stopped; the child
  // goes on writing a line every 100 ms for 1.2 s, then is silent. Its lines
  // sit in the pipe: sup reads them at the idle deadline and counts them,
  // so the 500 ms limit does not end the child while it writes.
  SPAWN(p, sh("i=0; while [ $i -lt 12 ]; do echo $i; sleep 0.1; i=$((i+1)); done; exec sleep 30",
              "\"backpressure_bytes\": 65536, \"idle_timeout_ms\": 500"));
  const int fd = sup_output_fd(p.get(), SUP_STDOUT);
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 5000), 1);
  const double start = suptest::now_ms();
  ASSERT_TRUE(p.wait(20000));
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT);
  EXPECT_GE(suptest::now_ms() - start, 1100) << "ended while the child was writing";
  EXPECT_EQ(p.output(SUP_STDOUT), seq(0, 11));
}

}  // namespace

// An edge-triggered waiter (tokio's AsyncFd, Go's netpoller) is woken once
// per arrival and never again for bytes already waiting: the read after
// each wake-up must give what came, whatever the read before it found.
TEST(DirectRead, AnEdgeTriggeredWaiterGetsTheBytesOfEveryWakeUp) {
  SPAWN(p, sh("printf a; sleep 1; printf b; sleep 5", "\"backpressure_bytes\": 65536"));
  int fd = sup_output_fd(p.get(), SUP_STDOUT);
  ASSERT_GE(fd, 0);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(ep, 0);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
  char buf[4096];
  uint64_t pos = 0;
  size_t n = 0;
  epoll_event out{};
  ASSERT_EQ(epoll_wait(ep, &out, 1, 5000), 1) << "no wake-up for the first bytes";
  ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), 0);
  std::string got(buf, n);
  // One read per wake-up, taking a short read for the end of the bytes.
  if (got == "a") {
    ASSERT_EQ(epoll_wait(ep, &out, 1, 5000), 1) << "no wake-up for the next bytes";
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), 0);
    EXPECT_EQ(std::string(buf, n), "b") << "woken, and the read did not give what came";
    got.append(buf, n);
  }
  EXPECT_EQ(got, "ab");
  EXPECT_EQ(pos, 2u);
  close(ep);
  EXPECT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait(5000));
}
