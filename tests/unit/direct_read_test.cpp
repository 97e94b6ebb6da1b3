// A live reader that reads the child's pipe itself (waiting on
// sup_output_fd): every byte in order, the idle clock and the first-output
// limit kept by its reads, the pipe's end handed back to the loop,
// sup_output_wait served, and the end of the child as without it; without
// backpressure_bytes the pipe only lent, taken back from a reader that
// leaves bytes unread or falls behind, and given again once it catches up.
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <fstream>
#include <thread>

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

// The two ways a reader holds the pipe: held back (the child waits for the
// reader) and lent (the loop takes the pipe back from a reader that lags).
const char* const kHolds[] = {"\"backpressure_bytes\": 65536", "\"env\": {}"};

TEST(DirectRead, TheReaderIsGivenAPlainPipe) {
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    // An epoll set of the pipe and the stream's eventfd.
    SPAWN(direct, sh("sleep 5", hold));
    EXPECT_EQ(epoll_targets(sup_output_fd(direct.get(), SUP_STDOUT)), 2);
    EXPECT_EQ(sup_output_fd(direct.get(), SUP_STDOUT), sup_output_fd(direct.get(), SUP_STDOUT)) << "the same fd";
    // A tee's copies are the loop's to write.
    SPAWN(tee, sh("sleep 5", std::string(hold) + ", \"stdout\": \"tee\""));
    EXPECT_EQ(epoll_targets(sup_output_fd(tee.get(), SUP_STDOUT)), -1);
    // Once final there is no pipe to give.
    SPAWN(done, sh("true", hold));
    ASSERT_TRUE(done.wait());
    EXPECT_EQ(epoll_targets(sup_output_fd(done.get(), SUP_STDOUT)), -1);
    pollfd pfd{sup_output_fd(done.get(), SUP_STDOUT), POLLIN, 0};
    EXPECT_EQ(poll(&pfd, 1, 0), 1) << "readable for good once final";
  }
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
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    // A line every 100 ms for 1.5 s, then silence, under a 1 s idle limit: the
    // reader's own reads are the child's activity, so the limit ends it only
    // after the silence, with every line read.
    SPAWN(p, sh("i=0; while [ $i -lt 15 ]; do echo line $i; sleep 0.1; i=$((i+1)); done; exec sleep 30",
                std::string(hold) + ", \"idle_timeout_ms\": 1000"));
    const double start = suptest::now_ms();
    Streams s = read_live(p.get());
    EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT) << sup_result(p.get());
    EXPECT_NE(s.out.find("line 14\n"), std::string::npos) << s.out;
    EXPECT_GE(suptest::now_ms() - start, 2400) << "ended before 1 s of silence after 1.5 s of output";
  }
}

TEST(DirectRead, TheFirstByteReadTurnsTheFirstOutputLimitIntoTheIdleLimit) {
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    SPAWN(p, sh("echo ready; exec sleep 30",
                std::string(hold) + ", \"first_output_timeout_ms\": 20000, \"idle_timeout_ms\": 300"));
    const double start = suptest::now_ms();
    Streams s = read_live(p.get());
    EXPECT_EQ(s.out, "ready\n");
    EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT) << sup_result(p.get());
    EXPECT_EQ(sup_result_phase(p.get()), SUP_PHASE_IDLE) << sup_result(p.get());
    EXPECT_LT(suptest::now_ms() - start, 15000) << "the first-output limit applied after the first byte";
  }
}

TEST(DirectRead, ThePipesEndGoesBackToTheLoopAndWakesNobody) {
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    // stdout closes 2 s before the child exits: once the reader has seen the
    // end, its fd is quiet (no busy loop) until the result is final.
    SPAWN(p, sh("echo data; exec >&-; sleep 2; exit 3", hold));
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
}

TEST(DirectRead, AWaitInSupOutputWaitIsServedByTheLoop) {
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    // The fd taken, then the blocking idiom instead: sup_output_wait wakes for
    // the bytes all the same (the loop reads the pipe again).
    SPAWN(p, sh("seq 1 200000", hold));
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
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    // The reader took the fd, read the first line and stopped; the child
    // goes on writing a line every 100 ms for 1.2 s, then is silent. Its lines
    // sit in the pipe: sup reads them at the idle deadline and counts them,
    // so the 500 ms limit does not end the child while it writes.
    SPAWN(p, sh("i=0; while [ $i -lt 12 ]; do echo $i; sleep 0.1; i=$((i+1)); done; exec sleep 30",
                std::string(hold) + ", \"idle_timeout_ms\": 500"));
    const int fd = sup_output_fd(p.get(), SUP_STDOUT);
    pollfd pfd{fd, POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 5000), 1);
    const double start = suptest::now_ms();
    ASSERT_TRUE(p.wait(20000));
    EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_IDLE_TIMEOUT);
    EXPECT_GE(suptest::now_ms() - start, 1100) << "ended while the child was writing";
    EXPECT_EQ(p.output(SUP_STDOUT), seq(0, 11));
  }
}

TEST(DirectRead, EveryByteInOrderWithASlowReaderOnALentPipe) {
  // The same without backpressure: the loop takes the pipe back whenever the
  // reader stops, and the reader gets the rest from what sup kept (all of
  // it, within the default limit), then the pipe again.
  SPAWN(p, sh("seq 1 500000 & seq 1 100000 >&2; wait", "\"idle_timeout_ms\": 5000"));
  Streams s = read_live(p.get(), /*pause_every=*/20, /*pause_ms=*/30);
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED) << sup_result(p.get());
  EXPECT_TRUE(s.out == seq(1, 500000)) << "stdout: " << s.out.size() << " bytes";
  EXPECT_TRUE(s.err == seq(1, 100000)) << "stderr: " << s.err.size() << " bytes";
  EXPECT_EQ(p.output(SUP_STDOUT), s.out);
}

TEST(DirectRead, ALentPipeIsTakenBackFromAReaderThatStopsReading) {
  // No backpressure: the reader reads the first line and stops; the child
  // writes 1.2 MB more (far more than the pipe holds) and exits. The loop
  // takes the pipe back and keeps it all: the child does not wait for a
  // reader that has gone.
  SPAWN(p, sh("echo first; sleep 0.2; seq 1 200000"));
  const int fd = sup_output_fd(p.get(), SUP_STDOUT);
  ASSERT_EQ(epoll_targets(fd), 2) << "the pipe is lent";
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 5000), 1);
  char buf[64];
  uint64_t pos = 0;
  size_t n = 0;
  ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf, sizeof buf, &n), 0);
  EXPECT_EQ(std::string(buf, n), "first\n");
  ASSERT_TRUE(p.wait(10000)) << "the child waited for the reader";
  EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED) << sup_result(p.get());
  EXPECT_TRUE(p.output(SUP_STDOUT) == "first\n" + seq(1, 200000)) << p.output(SUP_STDOUT).size() << " bytes";
}

TEST(DirectRead, ALentPipeDoesNotSlowAChildDownToItsReader) {
  // 8 MB as fast as the child writes, a reader taking 4 KiB every 5 ms (at
  // most 800 KB/s: 10 s for all of it): the loop takes the pipe back from
  // the reader that falls behind, and the child is done long before it.
  SPAWN(p, sh("head -c 8000000 /dev/zero"));
  const int fd = sup_output_fd(p.get(), SUP_STDOUT);
  pollfd pfd{fd, POLLIN, 0};
  std::vector<char> buf(4096);
  uint64_t pos = 0;
  const double start = suptest::now_ms();
  while (sup_poll(p.get(), 0) == 0 && suptest::now_ms() - start < 20000) {
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n), 0);
    if (n == 0) poll(&pfd, 1, 100);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(sup_poll(p.get(), 0), 1) << "the child ran at its reader's pace";
  EXPECT_LT(pos, 8000000u) << "the reader kept up after all: nothing was tested";
  EXPECT_LT(suptest::now_ms() - start, 8000);
  // The rest from what sup kept, every byte.
  for (;;) {
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n), 0);
    if (n == 0) break;
  }
  EXPECT_EQ(pos, 8000000u);
  EXPECT_EQ(sup_result_omitted_bytes(p.get(), SUP_STDOUT), 0);
}

TEST(DirectRead, AReaderThatCatchesUpIsLentThePipeAgain) {
  // The reader leaves 110 KB unread for a second: the loop takes the pipe
  // back (the set holds the eventfd alone) and keeps the bytes; once the
  // reader has read them all it reads the pipe itself again.
  SPAWN(p, sh("echo a; sleep 0.3; seq 1 20000; exec sleep 30"));
  const int fd = sup_output_fd(p.get(), SUP_STDOUT);
  ASSERT_EQ(epoll_targets(fd), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(epoll_targets(fd), 1) << "still lent to a reader that left 110 KB unread";
  std::string got;
  std::vector<char> buf(4096);
  uint64_t pos = 0;
  for (;;) {
    size_t n = 0;
    ASSERT_EQ(sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n), 0);
    if (n == 0) break;
    got.append(buf.data(), n);
  }
  EXPECT_TRUE(got == "a\n" + seq(1, 20000)) << got.size() << " bytes";
  EXPECT_EQ(epoll_targets(fd), 2) << "not lent again once caught up";
  EXPECT_EQ(sup_abort(p.get()), 0);
  ASSERT_TRUE(p.wait(5000));
}

TEST(DirectRead, AReaderAndAWaiterInSupPollTogether) {
  // A thread reads both streams live while this one waits in sup_poll (which
  // may come first and watch the pipes itself): every byte, in order.
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    SPAWN(p, sh("seq 1 300000; seq 1 1000 >&2", hold));
    Streams s;
    std::thread reader([&] { s = read_live(p.get()); });
    EXPECT_EQ(sup_poll(p.get(), 20000), 1);
    reader.join();
    EXPECT_EQ(sup_result_outcome(p.get()), SUP_OUTCOME_EXITED) << sup_result(p.get());
    EXPECT_TRUE(s.out == seq(1, 300000)) << s.out.size() << " bytes";
    EXPECT_TRUE(s.err == seq(1, 1000)) << s.err.size() << " bytes";
  }
}

}  // namespace

// An edge-triggered waiter (tokio's AsyncFd, Go's netpoller) is woken once
// per arrival and never again for bytes already waiting: the read after
// each wake-up must give what came, whatever the read before it found.
TEST(DirectRead, AnEdgeTriggeredWaiterGetsTheBytesOfEveryWakeUp) {
  for (const char* hold : kHolds) {
    SCOPED_TRACE(hold);
    SPAWN(p, sh("printf a; sleep 1; printf b; sleep 5", hold));
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
}
