// Many children at once from many threads, and nothing that grows with use.
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>

#include "helpers.hpp"

namespace {

// The fds open once the engine is up and a first handle has been released:
// its fds close on the loop thread just after release returns, so the count
// is taken once it has settled.
int fds_after_a_warm_up() {
  {
    suptest::Proc warm("{\"argv\": [\"true\"]}");
    EXPECT_EQ(warm.rc(), 0) << warm.error();
    EXPECT_TRUE(warm.wait());
  }
  int fds = suptest::open_fds();
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    int now = suptest::open_fds();
    if (now == fds) break;
    fds = now;
  }
  return fds;
}

TEST(Stress, SixtyFourConcurrentProcessesFromSeveralThreads) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 8;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<suptest::Proc>> procs;
      for (int i = 0; i < kPerThread; ++i)
        procs.push_back(std::make_unique<suptest::Proc>(
            suptest::sh("sleep 0.1; echo " + std::to_string(t * 100 + i), "\"idle_timeout_ms\": 5000")));
      for (int i = 0; i < kPerThread; ++i) {
        auto& p = *procs[i];
        if (p.rc() != 0 || !p.wait()) continue;
        if (p.output(SUP_STDOUT) == std::to_string(t * 100 + i) + "\n" &&
            sup_result_outcome(p.get()) == SUP_OUTCOME_EXITED)
          ++good;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), kThreads * kPerThread);
}

TEST(Stress, NoFdOrThreadGrowthAfterAThousandSpawns) {
  const int fds_before = fds_after_a_warm_up();
  int threads_before = suptest::threads();
  for (int i = 0; i < 1000; ++i) {
    sup_proc* p = nullptr;
    ASSERT_EQ(sup_spawn("{\"argv\": [\"true\"]}", &p), 0);
    if (i % 3 == 0) sup_fd(p);
    ASSERT_EQ(sup_poll(p, 10000), 1);
    sup_release(p);
  }
  // Disposal runs on the loop thread just after release returns.
  EXPECT_TRUE(suptest::eventually([&] { return suptest::open_fds() == fds_before; }))
      << suptest::open_fds() << " fds, was " << fds_before;
  EXPECT_EQ(suptest::threads(), threads_before);
}

TEST(Stress, ReleaseWhileRunningFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> released{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        sup_proc* p = nullptr;
        if (sup_spawn("{\"argv\": [\"sleep\", \"30\"]}", &p) != 0) continue;
        std::thread aborter([p] { sup_interrupt(p); });
        aborter.join();
        sup_release(p);
        ++released;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(released.load(), 40);
}

// Whichever thread sees the exit first ends the process: the loop, or a
// caller in sup_poll (which then reads the pipes' last bytes, publishes and
// leaves the closing to the loop). Every waiter gets the same whole result,
// and nothing (zombie, fd) is left once the handle is released.
TEST(Stress, WaitersThatSeeTheExitFirstLoseNothingAndLeaveNothing) {
  const int fds_before = fds_after_a_warm_up();
  // More than a pipe holds (64 KiB), written just before the exit, by
  // several children at once: the loop is busy with the others when one
  // exits, and the last of its output is often still in the pipe.
  std::string expected_out;
  for (int n = 1; n <= 30000; ++n) expected_out += std::to_string(n) + "\n";
  const std::string spec = suptest::sh("seq 1 30000; echo last words >&2; exit 7");
  constexpr int kAtOnce = 8;
  for (int round = 0; round < 10; ++round) {
    std::vector<sup_proc*> procs(kAtOnce, nullptr);
    for (auto& p : procs) ASSERT_EQ(sup_spawn(spec.c_str(), &p), 0);
    std::atomic<int> finals{0};
    std::vector<std::thread> waiters;
    for (sup_proc* p : procs)
      for (int w = 0; w < 2; ++w)
        waiters.emplace_back([&finals, p] {
          if (sup_poll(p, 10000) == 1) ++finals;
        });
    for (auto& t : waiters) t.join();
    EXPECT_EQ(finals.load(), 2 * kAtOnce);
    for (sup_proc* p : procs) {
      const pid_t pid = sup_pid(p);
      EXPECT_EQ(sup_result_outcome(p), SUP_OUTCOME_EXITED);
      EXPECT_EQ(sup_result_exit_code(p), 7);
      size_t len = 0;
      const char* out = sup_result_output(p, SUP_STDOUT, &len);
      ASSERT_NE(out, nullptr);
      EXPECT_TRUE(std::string(out, len) == expected_out) << "round " << round << ": " << len << " bytes";
      const char* err = sup_result_output(p, SUP_STDERR, &len);
      ASSERT_NE(err, nullptr);
      EXPECT_EQ(std::string(err, len), "last words\n");
      sup_release(p);
      // Reaped by the time release returns: no longer our child.
      siginfo_t info{};
      EXPECT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG), -1);
      EXPECT_EQ(errno, ECHILD);
    }
  }
  EXPECT_TRUE(suptest::eventually([&] { return suptest::open_fds() == fds_before; }))
      << suptest::open_fds() << " fds, was " << fds_before;
}

// An abort from one thread while another waits in sup_poll: the waiter may
// end the process itself, and the outcome is still the abort's.
TEST(Stress, AnAbortWhileAnotherThreadWaitsIsStillAnAbort) {
  for (int round = 0; round < 40; ++round) {
    sup_proc* p = nullptr;
    ASSERT_EQ(sup_spawn(suptest::sh("echo started; exec sleep 30").c_str(), &p), 0);
    ASSERT_EQ(sup_output_wait(p, 0, 0, 10000), 1);  // running, and said so
    std::thread waiter([p] { EXPECT_EQ(sup_poll(p, 10000), 1); });
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 3));
    EXPECT_EQ(sup_abort(p), 0);
    waiter.join();
    ASSERT_EQ(sup_poll(p, 0), 1);
    EXPECT_EQ(sup_result_outcome(p), SUP_OUTCOME_ABORTED) << sup_result(p);
    EXPECT_EQ(sup_result_term_signal(p), SIGKILL);
    size_t len = 0;
    const char* out = sup_result_output(p, SUP_STDOUT, &len);
    EXPECT_EQ(std::string(out ? out : "", len), "started\n");
    sup_release(p);
  }
}

TEST(Stress, ShortWaitsHandTheChildBackAndForthAndLoseNothing) {
  // A caller in sup_poll reads the pipes and the loop stops watching them;
  // when the wait times out the loop watches again. Waits of 0-2 ms while
  // 3.2 MiB arrive in bursts swap them hundreds of times: every byte must
  // land once, in order, and nothing may be left open.
  const int fds_before = fds_after_a_warm_up();
  for (int round = 0; round < 3; ++round) {
    sup_proc* p = nullptr;
    ASSERT_EQ(sup_spawn(suptest::sh("for i in $(seq 50); do head -c 65536 /dev/zero | tr '\\0' \"$(( i % 10 ))\"; "
                                    "sleep 0.005; done")
                            .c_str(),
                        &p),
              0);
    int waits = 0;
    int rc = 0;
    const double start = suptest::now_ms();
    while (suptest::now_ms() - start < 100 && (rc = sup_poll(p, waits++ % 3)) == 0) {
    }
    ASSERT_EQ(rc, 0) << "the child ended before the waits could take turns";
    // Nobody waits now: the loop alone must read the rest.
    EXPECT_TRUE(suptest::eventually([&] { return sup_output_total(p, SUP_STDOUT) == 50 * 65536; }, 10000))
        << "the loop did not watch the pipes again: " << sup_output_total(p, SUP_STDOUT) << " bytes";
    ASSERT_EQ(sup_poll(p, 10000), 1);
    size_t len = 0;
    const char* out = sup_result_output(p, SUP_STDOUT, &len);
    ASSERT_EQ(len, 50u * 65536u);
    for (size_t i = 0; i < len; i += 65536)
      ASSERT_EQ(out[i], static_cast<char>('0' + (i / 65536 + 1) % 10)) << "chunk " << i / 65536;
    EXPECT_EQ(sup_result_outcome(p), SUP_OUTCOME_EXITED);
    sup_release(p);
  }
  int fds = suptest::open_fds();
  for (int i = 0; i < 100 && fds > fds_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    fds = suptest::open_fds();
  }
  EXPECT_EQ(fds, fds_before);
}

TEST(Stress, AChildThatClosesItsOutputAndRunsOnIsWaitedFor) {
  // Both pipes at EOF long before the exit: a waiting caller must go on
  // waiting for the exit, not spin on the EOF or take it for the end.
  suptest::Proc p(suptest::sh("echo out; echo err >&2; exec >&- 2>&-; sleep 0.3; exit 7"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  auto cpu_ms = [] {
    struct rusage u {};
    getrusage(RUSAGE_THREAD, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
  };
  double start = suptest::now_ms(), cpu_start = cpu_ms();
  ASSERT_TRUE(p.wait());
  EXPECT_GE(suptest::now_ms() - start, 250.0);
  EXPECT_LT(cpu_ms() - cpu_start, 100.0) << "the wait spun on the EOF";
  EXPECT_EQ(sup_result_exit_code(p.get()), 7);
  EXPECT_EQ(p.output(SUP_STDOUT), "out\n");
  EXPECT_EQ(p.output(SUP_STDERR), "err\n");
}

}  // namespace
