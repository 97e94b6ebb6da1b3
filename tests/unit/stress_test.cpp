// Many children at once from many threads, and nothing that grows with use.
#include "helpers.hpp"

namespace {

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
  {
    SPAWN(warm, "{\"argv\": [\"true\"]}");
    ASSERT_TRUE(warm.wait());
  }
  // The warm-up handle's fds close on the loop thread just after release
  // returns: count once that has settled.
  int fds_before = suptest::open_fds();
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    int now = suptest::open_fds();
    if (now == fds_before) break;
    fds_before = now;
  }
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

}  // namespace
