// The parts of a child's supervision, tested from the inside without a
// child: containment (lib/containment.hpp) in group mode, the host's
// terminal lent to a child (lib/foreground.hpp), the child's stdin as sup
// holds it (lib/child_input.hpp), the result's decision and text
// (lib/result_builder.hpp), the callers that drive a child while the loop
// stands back (lib/caller_drivers.hpp), what callers ask of the loop
// (lib/loop_requests.hpp), when backpressure holds a stream
// (lib/backpressure.hpp); and when a look for a wait for input may stand
// for the next (lib/input_wait.hpp), with processes of its own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backpressure.hpp"
#include "caller_drivers.hpp"
#include "caller_signals.hpp"
#include "child_input.hpp"
#include "containment.hpp"
#include "foreground.hpp"
#include "handle_pins.hpp"
#include "input_wait.hpp"
#include "proc_tree.hpp"
#include "loop_requests.hpp"
#include "result_builder.hpp"
#include "spec.hpp"
#include "streams.hpp"
#include "terminal.hpp"
#include "unique_fd.hpp"

namespace {

using sup::Containment;
using sup::ContainOutcome;

TEST(Containment, GroupModeReachesNobodyBeyondTheGroup) {
  Containment c;
  c.set(nullptr, "");
  EXPECT_FALSE(c.in_cgroup());
  EXPECT_EQ(c.cgroup_dir(), -1);
  EXPECT_EQ(c.cgroup(), nullptr);
  // Our own pid: were anything sent, this test would have it.
  EXPECT_EQ(c.signal(SIGUSR2, SIGCONT, getpid(), true), 0);
  EXPECT_EQ(c.signal(SIGKILL, 0, getpid(), false), 0);
}

TEST(Containment, GroupModeEndsNoTree) {
  Containment c;
  c.end_tree(getpid());
  EXPECT_FALSE(c.tree_ended());
  ContainOutcome r;
  c.close(getpid(), r);
  EXPECT_EQ(r.contained, SUP_CONTAIN_GROUP);
  EXPECT_FALSE(r.leftovers_ended);
  EXPECT_FALSE(r.tree_cpu);
  EXPECT_FALSE(r.contain_fallback);
  EXPECT_FALSE(r.cgroup_left);
}

TEST(Containment, AutoInGroupModeSaysWhy) {
  Containment c;
  c.set(nullptr, "no cgroup2 mount");
  ContainOutcome r;
  c.close(getpid(), r);
  ASSERT_TRUE(r.contain_fallback);
  EXPECT_EQ(*r.contain_fallback, "no cgroup2 mount");
}

TEST(Containment, AFallBackAfterTheCloneReplacesTheReason) {
  Containment c;
  c.set(nullptr, "");
  c.fall_back_to_group("clone3 refused CLONE_INTO_CGROUP");
  EXPECT_FALSE(c.in_cgroup());
  ContainOutcome r;
  c.close(getpid(), r);
  EXPECT_EQ(r.contained, SUP_CONTAIN_GROUP);
  ASSERT_TRUE(r.contain_fallback);
  EXPECT_EQ(*r.contain_fallback, "clone3 refused CLONE_INTO_CGROUP");
}

TEST(Containment, TheResultKeysAsJson) {
  Containment c;
  ContainOutcome r;
  std::string out;
  c.append_json(out, r);
  EXPECT_EQ(out,
            ", \"contained\": \"group\", \"leftovers_ended\": null, \"tree_cpu\": null, \"contain_fallback\": null, "
            "\"cgroup_left\": null, \"host_death\": \"main_process\"");
  r.contained = SUP_CONTAIN_CGROUP;
  r.leftovers_ended = 2;
  r.tree_cpu = sup::TreeCpu{1500, 250};
  r.contain_fallback = "a \"quoted\" reason";
  r.cgroup_left = "/sys/fs/cgroup/x";
  c.set_host_death(sup::HostDeath::tree);
  EXPECT_EQ(c.host_death(), sup::HostDeath::tree);
  out.clear();
  c.append_json(out, r);
  EXPECT_EQ(out,
            ", \"contained\": \"cgroup\", \"leftovers_ended\": 2, \"tree_cpu\": {\"user_ms\": 1.500, \"sys_ms\": 0.250}, "
            "\"contain_fallback\": \"a \\\"quoted\\\" reason\", \"cgroup_left\": \"/sys/fs/cgroup/x\", "
            "\"host_death\": \"tree\"");
}

TEST(HostTerminal, NothingLentNothingHandedBack) {
  sup::HostTerminal t;
  EXPECT_FALSE(t.grant().asked);
  t.lend(sup::UniqueFd(), 0);
  EXPECT_FALSE(t.lent());
  t.hand_back(getpgrp());
  EXPECT_FALSE(t.lent());
}

TEST(HostTerminal, TheGrantAsItWent) {
  sup::HostTerminal t;
  t.set_grant(sup::ForegroundGrant{true, sup::kLeftForeground});
  EXPECT_TRUE(t.grant().asked);
  EXPECT_STREQ(t.grant().refused, sup::kLeftForeground);
}

TEST(HostTerminal, HandedBackOnceAndClosed) {
  // Not a terminal: nobody's foreground, so nothing is given back, and the
  // descriptor is closed all the same.
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  sup::HostTerminal t;
  t.lend(sup::UniqueFd(fd), getpgrp());
  EXPECT_TRUE(t.lent());
  t.hand_back(getpgrp());
  EXPECT_FALSE(t.lent());
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
}

struct Pipe {
  sup::UniqueFd read_end, write_end;
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
};

std::string read_all(int fd) {
  std::string got;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  return got;
}

TEST(ChildInput, NoHostEndWithoutPipeOrTerminal) {
  sup::ChildInput in(false, false, "");
  size_t written = 7;
  EXPECT_EQ(in.write("x", 1, &written, false), SUP_EBADF);
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(in.fd(), SUP_EBADF);
  bool ended = true;
  EXPECT_EQ(in.close_host_end(false, ended), SUP_EBADF);
  EXPECT_FALSE(ended);
  EXPECT_EQ(in.resize(24, 80, false), SUP_ENOTSUP);
  EXPECT_FALSE(in.feeding());
}

TEST(ChildInput, APipesEndWritesClosesAndEndsOnce) {
  Pipe p;
  const int end = p.write_end.get();
  sup::ChildInput in(true, false, "");
  in.set_host_end(std::move(p.write_end));
  EXPECT_EQ(in.fd(), end);
  size_t written = 0;
  ASSERT_EQ(in.write("hello", 5, &written, false), 0);
  EXPECT_EQ(written, 5u);
  EXPECT_EQ(in.write("late", 4, &written, /*final=*/true), SUP_EPIPE);
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(in.resize(24, 80, false), SUP_ENOTSUP);
  bool ended = false;
  EXPECT_EQ(in.close_host_end(false, ended), 0);
  EXPECT_TRUE(ended);
  EXPECT_EQ(in.close_host_end(false, ended), 0);
  EXPECT_FALSE(ended);
  EXPECT_EQ(in.fd(), SUP_EBADF);
  EXPECT_EQ(in.write("x", 1, &written, false), SUP_EBADF);
  EXPECT_EQ(read_all(p.read_end.get()), "hello");
  EXPECT_EQ(read(p.read_end.get(), &written, 1), 0);  // EOF: the end closed
}

TEST(ChildInput, AGoneReaderIsEpipeWithoutSigpipe) {
  Pipe p;
  p.read_end.reset();
  sup::ChildInput in(true, false, "");
  in.set_host_end(std::move(p.write_end));
  size_t written = 0;
  // SIGPIPE's default action would end this test's process.
  EXPECT_EQ(in.write("x", 1, &written, false), SUP_EPIPE);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(ChildInput, AFullPipeIsEagain) {
  Pipe p;
  sup::ChildInput in(true, false, "");
  in.set_host_end(std::move(p.write_end));
  const std::string chunk(1 << 16, 'x');
  size_t written = 0;
  int rc = 0;
  for (int i = 0; i < 64 && rc == 0; ++i) rc = in.write(chunk.data(), chunk.size(), &written, false);
  EXPECT_EQ(rc, SUP_EAGAIN);
  EXPECT_EQ(written, 0u);
}

TEST(ChildInput, TheFeedWritesWhatThePipeTakesThenIsOver) {
  // More than a pipe holds: the feed stops at EAGAIN and goes on when
  // drained, as the loop's writability watch would call it.
  std::string data(300 * 1024, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  Pipe p;
  sup::ChildInput in(false, false, data);
  in.feed_from(std::move(p.write_end));
  ASSERT_TRUE(in.feeding());
  std::string got;
  int rounds = 0;
  while (!in.feed()) {
    got += read_all(p.read_end.get());
    ASSERT_LT(++rounds, 1000);
  }
  EXPECT_GT(rounds, 0);
  in.end_feed();
  EXPECT_FALSE(in.feeding());
  got += read_all(p.read_end.get());
  EXPECT_EQ(got, data);
}

TEST(ChildInput, TheFeedIsOverWhenTheChildsStdinIsGone) {
  Pipe p;
  p.read_end.reset();
  sup::ChildInput in(false, false, "unwanted");
  in.feed_from(std::move(p.write_end));
  // The loop thread, which feeds, blocks every signal; here SIGPIPE's
  // default action would end the test's process.
  auto previous = signal(SIGPIPE, SIG_IGN);
  EXPECT_TRUE(in.feed());
  signal(SIGPIPE, previous);
  in.end_feed();
  EXPECT_FALSE(in.feeding());
}

TEST(ChildInput, ATerminalsEndOfInputEndsTheLineFirst) {
  sup::Terminal t = sup::open_terminal(24, 80);
  const int slave = t.slave.get();
  sup::ChildInput in(true, true, "");
  in.set_host_end(std::move(t.master));
  ASSERT_EQ(in.resize(40, 100, false), 0);
  winsize size{};
  ASSERT_EQ(ioctl(slave, TIOCGWINSZ, &size), 0);
  EXPECT_EQ(size.ws_row, 40);
  EXPECT_EQ(size.ws_col, 100);
  size_t written = 0;
  ASSERT_EQ(in.write("abc", 3, &written, false), 0);
  EXPECT_EQ(written, 3u);
  bool ended = false;
  ASSERT_EQ(in.close_host_end(false, ended), 0);
  EXPECT_TRUE(ended);
  // The master stays open, but takes no more input.
  EXPECT_EQ(in.fd(), SUP_EBADF);
  EXPECT_EQ(in.write("x", 1, &written, false), SUP_EBADF);
  // Canonical mode: the first VEOF sends the unfinished line, the second
  // is the end of input (a read of 0).
  char buf[16];
  EXPECT_EQ(read(slave, buf, sizeof buf), 3);
  EXPECT_EQ(std::string(buf, 3), "abc");
  EXPECT_EQ(read(slave, buf, sizeof buf), 0);
  in.release();
  EXPECT_EQ(in.resize(24, 80, false), SUP_ESRCH);
}

siginfo_t exited(int code) {
  siginfo_t s{};
  s.si_code = CLD_EXITED;
  s.si_status = code;
  return s;
}

siginfo_t killed_by(int sig) {
  siginfo_t s{};
  s.si_code = CLD_KILLED;
  s.si_status = sig;
  return s;
}

TEST(ResultBuilder, AnEndNobodyCausedIsTheChildsOwn) {
  sup::Result r;
  sup::ResultBuilder::decide(r, sup::Cause::none, sup::TimeoutKind::idle, exited(3), false);
  EXPECT_EQ(r.outcome, SUP_OUTCOME_EXITED);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.term_signal);
  EXPECT_EQ(r.phase, 0);
  sup::Result s;
  sup::ResultBuilder::decide(s, sup::Cause::none, sup::TimeoutKind::idle, killed_by(SIGSEGV), false);
  EXPECT_EQ(s.outcome, SUP_OUTCOME_SIGNALED);
  EXPECT_FALSE(s.exit_code);
  EXPECT_EQ(s.term_signal, SIGSEGV);
}

TEST(ResultBuilder, TheCauseDecidesWhateverTheStatus) {
  const struct {
    sup::Cause cause;
    sup::TimeoutKind kind;
    int outcome;
    int phase;
  } cases[] = {
      {sup::Cause::aborted, sup::TimeoutKind::idle, SUP_OUTCOME_ABORTED, 0},
      {sup::Cause::interrupted, sup::TimeoutKind::idle, SUP_OUTCOME_INTERRUPTED, 0},
      {sup::Cause::timed_out, sup::TimeoutKind::max_runtime, SUP_OUTCOME_MAX_RUNTIME, 0},
      {sup::Cause::timed_out, sup::TimeoutKind::idle, SUP_OUTCOME_IDLE_TIMEOUT, SUP_PHASE_IDLE},
      {sup::Cause::timed_out, sup::TimeoutKind::first_output, SUP_OUTCOME_IDLE_TIMEOUT, SUP_PHASE_FIRST_OUTPUT},
      {sup::Cause::timed_out, sup::TimeoutKind::input, SUP_OUTCOME_IDLE_TIMEOUT, SUP_PHASE_INPUT},
  };
  for (const auto& c : cases) {
    sup::Result r;
    sup::ResultBuilder::decide(r, c.cause, c.kind, exited(0), false);
    EXPECT_EQ(r.outcome, c.outcome) << static_cast<int>(c.cause);
    EXPECT_EQ(r.phase, c.phase) << static_cast<int>(c.kind);
    EXPECT_EQ(r.exit_code, 0);
  }
}

TEST(ResultBuilder, ALostStatusHasNeitherCodeNorSignal) {
  sup::Result r;
  sup::ResultBuilder::decide(r, sup::Cause::none, sup::TimeoutKind::idle, siginfo_t{}, true);
  EXPECT_TRUE(r.status_lost);
  EXPECT_FALSE(r.exit_code);
  EXPECT_FALSE(r.term_signal);
}

TEST(ResultBuilder, TheTextAroundTheStreams) {
  sup::Result r;
  sup::ResultBuilder::decide(r, sup::Cause::timed_out, sup::TimeoutKind::first_output, killed_by(SIGTERM), false);
  r.forced_kill = true;
  r.duration = 1'500'000;
  r.signals_sent = {{SIGTERM, 2'000'000}};
  r.foreground = sup::ForegroundGrant{true, "no"};
  r.limit = "memory";
  sup::ResultBuilder b;
  b.publish(std::move(r));
  EXPECT_EQ(b.head(42),
            "{\"outcome\": \"idle_timeout\", \"phase\": \"first_output\", \"exit_code\": null, "
            "\"term_signal\": \"SIGTERM\", \"status_lost\": false, \"forced_kill\": true, \"pid\": 42, "
            "\"duration_ms\": 1.500, \"stdout\": ");
  sup::Containment c;
  std::string contain;
  c.append_json(contain, b.record());
  EXPECT_EQ(b.rest(c, "null"),
            ", \"signals_sent\": [{\"signal\": \"SIGTERM\", \"at_ms\": 2.000}], \"rusage\": {\"user_ms\": 0.000, "
            "\"sys_ms\": 0.000, \"max_rss_kb\": 0}, \"waiting_for_input\": null, \"tty_foreground\": false, "
            "\"tty_refused\": \"no\"" +
                contain + ", \"confined\": null, \"limit\": \"memory\"}");
  EXPECT_FALSE(b.has_text());
  b.set_text("{}");
  EXPECT_EQ(b.text(), "{}");
}

bool readable_now(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(ResultBuilder, TheEventFdIsReadableFromThePublicationOnWhenEverItWasMade) {
  sup::ResultBuilder early;
  const int fd = early.event_fd();
  ASSERT_GE(fd, 3);  // above stdio
  EXPECT_EQ(early.event_fd(), fd);  // made once
  EXPECT_FALSE(early.published());
  EXPECT_FALSE(readable_now(fd));
  early.publish(sup::Result{});
  EXPECT_TRUE(early.published());
  EXPECT_TRUE(readable_now(fd));
  EXPECT_TRUE(readable_now(fd));  // a level: nobody reads the counter

  sup::ResultBuilder late;
  late.publish(sup::Result{});
  const int late_fd = late.event_fd();
  ASSERT_GE(late_fd, 3);
  EXPECT_TRUE(readable_now(late_fd));
}

using sup::CallerDrivers;

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(CallerDrivers, OnlyTheFirstWakesAWatchingLoopAndOnlyTheLastBringsItBack) {
  CallerDrivers d;
  // Before the loop has the process, nobody wakes it: start() sees a driver.
  EXPECT_FALSE(d.enter(/*loop_started=*/false));
  EXPECT_FALSE(d.leave());  // the loop never stood back
  EXPECT_TRUE(d.enter(true));
  EXPECT_FALSE(d.enter(true));
  EXPECT_EQ(d.sync(), CallerDrivers::Step::back);
  EXPECT_EQ(d.sync(), CallerDrivers::Step::none);
  EXPECT_TRUE(d.stepped_back());
  EXPECT_FALSE(d.leave());
  EXPECT_TRUE(d.any());
  EXPECT_TRUE(d.leave());
  EXPECT_FALSE(d.any());
  EXPECT_EQ(d.sync(), CallerDrivers::Step::in);
  EXPECT_FALSE(d.stepped_back());
  EXPECT_EQ(d.sync(), CallerDrivers::Step::none);
}

TEST(CallerDrivers, ALoopStartedUnderADriverStandsBackAtOnce) {
  CallerDrivers d;
  d.enter(false);
  d.stand_back();
  EXPECT_EQ(d.sync(), CallerDrivers::Step::none);
  EXPECT_TRUE(d.leave());
  EXPECT_EQ(d.sync(), CallerDrivers::Step::in);
}

TEST(CallerDrivers, WhatIsRetiredUnderADriverStaysOpenUntilTheLastLeaves) {
  CallerDrivers d;
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  sup::UniqueFd r(fds[0]), w(fds[1]);
  d.enter(true);
  d.enter(true);
  d.retire(r);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(is_open(fds[0]));  // a driver may poll it: its number is not reused
  d.leave();
  EXPECT_TRUE(is_open(fds[0]));
  d.leave();
  EXPECT_FALSE(is_open(fds[0]));
  // With nobody driving, closed at once.
  d.retire(w);
  EXPECT_FALSE(is_open(fds[1]));
}

TEST(CallerDrivers, ExitWaitersAreCounted) {
  CallerDrivers d;
  EXPECT_FALSE(d.exit_awaited());
  d.exit_waiter_enters();
  d.exit_waiter_enters();
  d.exit_waiter_leaves();
  EXPECT_TRUE(d.exit_awaited());
  d.exit_waiter_leaves();
  EXPECT_FALSE(d.exit_awaited());
}

TEST(CallerSignals, TheReapWaitsForTheCallerInsideTheWindowAndClosesIt) {
  sup::CallerSignals signals;
  std::atomic<bool> reap_closed{false};
  std::thread reaper;
  {
    const sup::CallerSignals::Window window(signals);
    EXPECT_TRUE(window.open());
    reaper = std::thread([&] {
      signals.close_for_reap();
      reap_closed = true;
    });
    // The reap waits while a caller is inside: the group is still ours.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(reap_closed);
  }  // the caller leaves
  reaper.join();
  EXPECT_TRUE(reap_closed);
  // From now on no caller may signal the group; leaving still balances.
  const sup::CallerSignals::Window late(signals);
  EXPECT_FALSE(late.open());
}

TEST(LoopRequests, TheLoopTakesEveryLatchedRequestOnce) {
  sup::LoopRequests r;
  EXPECT_FALSE(r.pending());
  r.latch(sup::kWatch);
  r.latch(sup::kAbort | sup::kWatch);
  EXPECT_TRUE(r.pending());
  EXPECT_EQ(r.take(), static_cast<unsigned>(sup::kWatch | sup::kAbort));
  EXPECT_FALSE(r.pending());
  EXPECT_EQ(r.take(), 0u);
  r.latch(sup::kRearm);
  r.drop();
  EXPECT_FALSE(r.pending());
}

TEST(LoopRequests, OneCallerWakesTheLoopForTheStart) {
  sup::LoopRequests r;
  EXPECT_TRUE(r.ask_start());
  EXPECT_FALSE(r.ask_start());
  sup::LoopRequests started;
  started.mark_start_asked();  // the spawner asked, or the loop started it
  EXPECT_FALSE(started.ask_start());
}

TEST(Backpressure, WithoutAWindowNothingIsHeld) {
  sup::Backpressure b(0);
  EXPECT_FALSE(b.configured());
  EXPECT_FALSE(b.applies());
}

TEST(Backpressure, HeldOverTheWindowResumedAtHalfOfIt) {
  sup::Backpressure b(1000);
  EXPECT_TRUE(b.configured());
  EXPECT_TRUE(b.applies());
  EXPECT_FALSE(b.over(1000));
  EXPECT_TRUE(b.over(1001));
  EXPECT_FALSE(b.may_resume(501));
  EXPECT_TRUE(b.may_resume(500));
}

TEST(Backpressure, LiftedOnceForGood) {
  sup::Backpressure b(1000);
  EXPECT_TRUE(b.lift());
  EXPECT_FALSE(b.lift());
  EXPECT_TRUE(b.lifted());
  EXPECT_FALSE(b.applies());
  EXPECT_TRUE(b.configured());  // the spec said so; the reader's pace no longer matters
}

TEST(HandlePins, NoPinOnceReleasedAndTheReleaseWaitsForThoseHeld) {
  sup::HandlePins h(7);
  EXPECT_TRUE(h.valid());
  EXPECT_FALSE(h.forked_away(7));
  EXPECT_TRUE(h.forked_away(8));  // another fork generation: inherited
  ASSERT_TRUE(h.pin());
  h.release();
  EXPECT_TRUE(h.released());
  EXPECT_FALSE(h.pin());  // turned away, and holds nothing
  std::atomic<bool> waited{false};
  std::thread releaser([&] {
    h.wait_unpinned();
    waited = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(waited);  // the call inside still holds its pin
  h.unpin();
  releaser.join();
  EXPECT_TRUE(waited);
}

// Streams without a loop: nothing is watched, so holding back only marks.
struct TwoStreams {
  explicit TwoStreams(uint64_t window) {
    spec.backpressure_bytes = window;
    streams.emplace(spec, 64 * 1024, mu, changed);
  }
  sup::Spec spec;
  std::mutex mu;
  std::condition_variable changed;
  std::optional<sup::Streams> streams;
};

TEST(Streams, WhatIsReadIsKeptAndWakesAThreadWaitingForIt) {
  TwoStreams t(0);
  sup::Streams& s = *t.streams;
  bool waiting = false;
  bool woken = false;
  std::thread waiter([&] {
    std::unique_lock<std::mutex> lock(t.mu);
    s.add_waiter();
    waiting = true;
    woken = t.changed.wait_for(lock, std::chrono::seconds(10), [&] { return s.err().capture().total() > 0; });
    s.remove_waiter();
  });
  // Kept once the waiter waits (it set `waiting` under the lock it waits on).
  while (true) {
    std::lock_guard<std::mutex> lock(t.mu);
    if (waiting) break;
  }
  s.keep(s.err(), "late", 4);
  waiter.join();
  EXPECT_TRUE(woken);
  s.keep(s.out(), "abc", 3);
  EXPECT_EQ(s.out().capture().total(), 3u);
  EXPECT_EQ(s.total_read(), 7u);
  EXPECT_EQ(&s.of(SUP_STDOUT), &s.out());
  EXPECT_EQ(&s.of(SUP_STDERR), &s.err());
  EXPECT_EQ(&s.other(s.out()), &s.err());
}

TEST(Streams, HeldOverTheWindowAndFreedWhenItsReaderReadsHalfOfIt) {
  TwoStreams t(100);
  sup::Streams& s = *t.streams;
  const std::string bytes(101, 'x');
  s.keep(s.out(), bytes.data(), 100);
  s.hold_back_if_needed(s.out());
  EXPECT_FALSE(s.any_held());  // the window itself is not over it
  s.keep(s.out(), bytes.data(), 1);
  s.hold_back_if_needed(s.out());
  EXPECT_TRUE(s.out().held());
  EXPECT_FALSE(s.err().held());
  // The reader's reads while held count as activity for the idle clock.
  EXPECT_EQ(s.held_back_read(), 0);
  s.out().note_read(42);
  EXPECT_EQ(s.held_back_read(), 42);
  s.out().reader_at(50);  // 51 unread: more than half the window
  EXPECT_FALSE(s.resume(s.out()));
  s.out().reader_at(51);
  EXPECT_TRUE(s.resume(s.out()));
  EXPECT_FALSE(s.any_held());
  EXPECT_EQ(s.held_back_read(), 0);
  EXPECT_FALSE(s.resume(s.err()));  // never held
}

TEST(Streams, ALiftFreesEveryStreamForGoodAndSaysWhichToWatchAgain) {
  TwoStreams t(10);
  sup::Streams& s = *t.streams;
  s.keep(s.err(), "0123456789ab", 12);
  s.hold_back_if_needed(s.err());
  ASSERT_TRUE(s.err().held());
  const std::array<bool, 2> rewatch = s.lift();
  EXPECT_FALSE(rewatch[0]);
  EXPECT_TRUE(rewatch[1]);
  EXPECT_FALSE(s.any_held());
  EXPECT_TRUE(s.backpressure().lifted());
  // Lifted: nothing is held any more, and a second lift has nothing to do.
  s.keep(s.err(), "0123456789ab", 12);
  s.hold_back_if_needed(s.err());
  EXPECT_FALSE(s.err().held());
  EXPECT_EQ(s.lift(), (std::array<bool, 2>{false, false}));
}

TEST(Streams, ClosingAPipeHandsOverItsDescriptorAndFreesIt) {
  TwoStreams t(1);
  sup::Streams& s = *t.streams;
  Pipe p;
  s.out().attach(std::move(p.read_end));
  ASSERT_TRUE(s.any_open());
  s.keep(s.out(), "ab", 2);
  s.hold_back_if_needed(s.out());
  ASSERT_TRUE(s.out().held());
  sup::UniqueFd fd = s.close(s.out());
  EXPECT_TRUE(fd.valid());
  EXPECT_FALSE(s.any_open());
  EXPECT_FALSE(s.out().held());
}

TEST(Streams, TheKeptBytesAreHandedOutAsRead) {
  TwoStreams t(0);
  sup::Streams& s = *t.streams;
  s.keep(s.out(), "hello ", 6);
  s.keep(s.out(), "world", 5);
  std::lock_guard<std::mutex> lock(t.mu);
  s.flatten(/*final=*/false);  // not final: more may come, nothing moves
  EXPECT_EQ(s.kept(SUP_STDOUT, nullptr), "hello world");
  EXPECT_EQ(s.kept(SUP_STDERR, nullptr), "");
  s.flatten(/*final=*/true);
  EXPECT_EQ(s.kept(SUP_STDOUT, nullptr), "hello world");
}

// A child for the look below, asleep in pause() or in a read of fd;
// killed and reaped however the test ends.
struct Sleeper {
  explicit Sleeper(int read_fd) : pid(fork()) {
    if (pid != 0) return;
    if (read_fd < 0)
      for (;;) pause();
    char c;
    while (read(read_fd, &c, 1) != 0) {
    }
    _exit(0);
  }
  ~Sleeper() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;
  const pid_t pid;
};

// A process its parent started between a look's listing of the tree and
// its read of the parent's run is not in that look, and the parent's run
// shows nothing since: such a look must not stand for the next while
// nothing it saw runs. (A cgroup's directory is read for its cgroup.procs
// alone, so a directory of this test's stands for one, listing what a
// look would have listed.)
TEST(InputWait, ALookThatMissedAProcessDoesNotStandForTheNext) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  sup::UniqueFd rd(fds[0]), wr(fds[1]);
  const Sleeper parent_process(-1), reader_process(rd.get());
  const pid_t parent = parent_process.pid, reader = reader_process.pid;
  ASSERT_GT(parent, 0);
  ASSERT_GT(reader, 0);
  std::string dir_name = "/tmp/sup-parts-" + std::string(6, 'X');  // mkdtemp's six
  ASSERT_NE(mkdtemp(dir_name.data()), nullptr);
  const std::string procs = dir_name + "/cgroup.procs";
  std::ofstream(procs) << parent << "\n";
  sup::UniqueFd dir(open(dir_name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir.valid());

  sup::InputWait wait(0, 0, false);
  wait.set_stdin(sup::StdinFile::of_fd(rd.get()));
  wait.ask();
  sup::GroupIndex groups;
  EXPECT_EQ(wait.look(groups, parent, dir.get(), 0, true), 0);
  // The next listing has the reader, as any listing after the start would.
  std::ofstream(procs) << parent << "\n" << reader << "\n";
  int verdict = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (verdict == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    verdict = wait.look(groups, parent, dir.get(), 0, true);
  }
  EXPECT_EQ(verdict, 1) << "the reader the first looks missed is never seen";

  unlink(procs.c_str());
  rmdir(dir_name.c_str());
}

}  // namespace
