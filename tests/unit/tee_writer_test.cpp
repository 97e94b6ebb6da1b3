// The "tee" writer thread (lib/tee_writer.cpp), from the inside, where
// ThreadSanitizer can watch it (the test that needs a host unable to reopen
// its terminal runs in a forked child, which TSan cannot follow).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "tee_writer.hpp"

namespace {

bool wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

TEST(TeeWriter, EveryByteInOrderAndProgressTold) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  std::string sent;
  {
    sup::TeeWriter writer{sup::UniqueFd(fds[1])};
    for (int i = 0; i < 2000; ++i) {
      std::string line = std::to_string(i) + "\n";
      ASSERT_TRUE(writer.queue(line.data(), line.size(), 1 << 20));
      sent += line;
    }
    ASSERT_TRUE(wait_readable(writer.progress_fd(), 10000));
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (writer.pending() > 0 && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(writer.pending(), 0u);
    EXPECT_TRUE(writer.take_progress());
    EXPECT_FALSE(writer.take_progress());
    EXPECT_EQ(writer.error(), 0);
  }
  // The writer's thread ends and closes its duplicate: the reader sees EOF.
  reader.join();
  EXPECT_EQ(got, sent);
}

TEST(TeeWriter, AGoneReaderIsEpipeAndTheSignalIsNobodys) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  close(fds[0]);
  sup::TeeWriter writer{sup::UniqueFd(fds[1])};
  ASSERT_TRUE(writer.queue("x", 1, 1 << 20));
  ASSERT_TRUE(wait_readable(writer.progress_fd(), 10000));
  EXPECT_EQ(writer.error(), EPIPE);
  EXPECT_FALSE(writer.queue("y", 1, 1 << 20));
  EXPECT_EQ(writer.pending(), 0u);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(TeeWriter, AWriteThatNeverEndsHoldsUpNothing) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);  // never read: the pipe fills
  {
    sup::TeeWriter writer{sup::UniqueFd(fds[1])};
    std::string block(1 << 16, 'z');
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(writer.queue(block.data(), block.size(), 1 << 20));
    // Past the limit: dropped, not queued.
    ASSERT_TRUE(writer.queue(block.data(), block.size(), 4 * block.size()));
    EXPECT_LE(writer.pending(), 8 * block.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_GT(writer.pending(), 0u);
    writer.drop_queued();
    EXPECT_LE(writer.pending(), block.size());  // at most the write under way
  }
  // The destructor returned with its thread still in write(); reading frees
  // it, and it ends.
  char buf[65536];
  for (int i = 0; i < 4; ++i) (void)!read(fds[0], buf, sizeof buf);
  close(fds[0]);
}

}  // namespace
