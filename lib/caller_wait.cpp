// A caller waiting in sup_poll or sup_output_wait: for the end, asleep on
// the main process's exit, watching and reading the child itself while the
// loop stands back (caller_drivers.hpp), and finishing the process when it
// sees the exit first; or for output, on the capture.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <new>

#include "engine.hpp"
#include "process.hpp"
#include "sup.h"

namespace sup {
namespace {

template <class Pred>
bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int timeout_ms, Pred pred) {
  if (timeout_ms < 0) {
    cv.wait(lock, pred);
    return true;
  }
  // A zero timeout is a check, not a wait: a timed wait whose time has
  // already passed still sleeps in futex for the thread's timer slack
  // (50 us by default), which made every sup_poll(p, 0) take 50 us.
  if (timeout_ms == 0) return pred();
  return cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), pred);
}

// What is left of timeout_ms (-1: forever) since start, rounded up: a wait
// must not end before the caller's timeout.
int ms_left(int timeout_ms, Nanos start, Nanos now) {
  if (timeout_ms < 0) return -1;
  const Nanos left = static_cast<Nanos>(timeout_ms) * kNanosPerMs - (now - start);
  return left <= 0 ? 0 : static_cast<int>((left + kNanosPerMs - 1) / kNanosPerMs);
}

}  // namespace

int Process::wait_final(int timeout_ms) {
  // Released is asked first everywhere: release's own kill makes the result
  // final while waiters still wait, and a waiter told 1 would read a result
  // whose memory is about to go.
  if (handle_.released()) return SUP_ECANCELED;
  if (is_final()) return 1;
  // A caller that only looks leaves the child to the loop.
  if (timeout_ms == 0) need_loop();
  if (timeout_ms != 0) timeout_ms = wait_leader_exit(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  wait_until(changed_, lock, timeout_ms, [this] { return is_final() || handle_.released(); });
  if (handle_.released()) return SUP_ECANCELED;
  return is_final() ? 1 : 0;
}

// wait_final's first step: sleeps on the main process's exit, finishes
// the process if it can (finish_from_caller), else spins briefly for the
// loop's result. Returns what is left of timeout_ms.
int Process::wait_leader_exit(int timeout_ms) {
  // The caller sleeps on the main process's exit itself, so that it wakes
  // with the loop thread instead of after it. Woken by the loop instead, it
  // would pay a second wake-up in series (measured: 29 us at p50 on a 2-CPU
  // VM; the whole abort-to-result path went from 1.26x to 1.10x the raw
  // kill + pidfd poll). Awake, it finishes the process itself unless the
  // loop is at it: the loop was often still waking on another CPU, or
  // runnable behind this thread on its own (sup_abort and sup_interrupt to
  // result: 0.89-0.92x the previous library, both load orders, 1,000 each).
  // A release meanwhile ends the main process, which wakes this too.
  const Nanos start = now_ns();
  drivers_.exit_waiter_enters();
  const bool loop_finishes = drive_to_exit(timeout_ms, start);
  // The loop's to finish, or to watch again after this caller's time ran
  // out: it may not have started the process yet.
  if (loop_finishes || !is_final()) need_loop();
  Nanos now = now_ns();
  // Exited, and the loop is at it: the result is microseconds away, unless
  // something the main process left holds the pipes; then, after
  // CallerDrivers::kAwakeWait, the condition variable.
  if (loop_finishes && !is_final() && !handle_.released())
    now = yield_until(now, CallerDrivers::kAwakeWait, [this] { return is_final() || handle_.released(); });
  drivers_.exit_waiter_leaves();
  return ms_left(timeout_ms, start, now);
}

// wait_leader_exit's sleep, where the caller can watch the process itself
// (can_drive): on the pidfd and both pipes, reading what the child
// writes, while the loop stops watching them (sync_watches), so that the
// child's exit wakes this thread only. Elsewhere wait_on_pidfd. Both
// return true when the main process exited and the result is the loop's
// to publish (finish_from_caller could not).
bool Process::drive_to_exit(int timeout_ms, Nanos start) {
  // Even asleep, the loop costs a child's end: the exit wakes every thread
  // sleeping on its pipes or pidfd, and waking one on another CPU is an
  // interprocessor interrupt the dying child pays before its exit shows to
  // anyone. A raw spawn and pidfd wait of /bin/true took 1.06x as long with
  // a second thread in epoll_wait on the pipes, 1.03x with one on the pidfd
  // (3,000 alternating spawns, a 2-CPU VM). So while a caller waits here,
  // it watches the pipes and the exit itself and the loop does not. On a
  // host pinned to one CPU too: the loop's wake-ups and the hand-offs to it
  // cost more than taking the watches over (two libraries in one process
  // under `taskset -c 0`, both orders: 0.75x the host CPU per spawn, 1.03x
  // and 1.11x the MB/s of a 1 GiB capture).
  // The loop's read size: a smaller buffer would take more reads for the
  // same bytes.
  std::unique_ptr<char[]> buf(new (std::nothrow) char[engine_.read_buffer_size()]);
  if (!buf) return wait_on_pidfd(timeout_ms);
  pollfd watched[3];
  bool driving;
  bool wake_loop = false;
  {
    std::lock_guard<std::mutex> work(work_mu_);
    driving = can_drive();
    if (driving) {
      // Before start(), the loop sees a driver and starts no watch; after,
      // it stops them when woken for it.
      wake_loop = drivers_.enter(loop_ != nullptr);
      watched[0] = {main_.pidfd(), POLLIN, 0};
      const OutputStream& out = streams_.out();
      const OutputStream& err = streams_.err();
      watched[1] = {out.open() ? out.fd() : -1, POLLIN, 0};
      watched[2] = {err.open() ? err.fd() : -1, POLLIN, 0};
    }
  }
  if (!driving) return wait_on_pidfd(timeout_ms);
  if (wake_loop) {
    requests_.latch(kWatch);
    engine_.wake_for(*this);
  }
  constexpr int kReadsPerWakeup = 4;
  bool exited = false;
  for (;;) {
    int rc = poll(watched, 3, ms_left(timeout_ms, start, now_ns()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) break;  // the caller's time is up
    if (watched[0].revents != 0) {
      exited = true;  // finish_from_caller reads what is left
      break;
    }
    bool running;
    {
      std::lock_guard<std::mutex> work(work_mu_);
      running = lifecycle_ == Lifecycle::running;
      // The pipes are non-blocking from the spawn (api.cpp): another caller
      // woken by the same byte may have read it, and this read then finds
      // EAGAIN instead of blocking while holding work_mu_.
      const int reads = kReadsPerWakeup;
      for (int i = 1; running && i < 3; ++i) {
        if (watched[i].revents == 0) continue;
        OutputStream& pipe = i == 1 ? streams_.out() : streams_.err();
        // At EOF, or closed by the loop (a deadline's check): not polled
        // again; the loop closes it, or finish_from_caller reads the 0.
        if (!pipe.open() || !read_pipe(pipe, buf.get(), engine_.read_buffer_size(), reads, false))
          watched[i].fd = -1;
      }
    }
    if (!running || is_final() || handle_.released()) break;
  }
  // Finished before leaving: the loop, woken as this thread leaves, then
  // only closes what is left.
  const bool finished = exited && !is_final() && !handle_.released() && finish_from_caller();
  {
    std::lock_guard<std::mutex> work(work_mu_);
    // The last driver out: the loop watches again (or, if a result is
    // published, closes what is left), and what it closed meanwhile is.
    const bool last = drivers_.leave();
    wake_loop = last && lifecycle_ != Lifecycle::closed;
  }
  if (wake_loop && Engine::alive()) {
    requests_.latch(kWatch);
    // Finished here, the loop only closes what is left and reaps (unless
    // sup_release reaps first): nobody waits for that.
    engine_.wake_for(*this, finished ? now_ns() + Engine::kLazyWithin : 0);
  }
  return exited && !finished;
}

bool Process::wait_on_pidfd(int timeout_ms) {
  // The loop reads the pipes meanwhile, and finishes the process.
  need_loop();
  int fd;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Not final, so finish() has not closed the pidfd (it does so under
    // mu_): the duplicate is of our main process's.
    if (is_final() || handle_.released() || !main_.has_pidfd()) return false;
    fd = fcntl(main_.pidfd(), F_DUPFD_CLOEXEC, 3);
  }
  if (fd < 0) return false;  // out of fds: the condition variable alone
  pollfd exited{fd, POLLIN, 0};
  int rc;
  while ((rc = poll(&exited, 1, timeout_ms)) < 0 && errno == EINTR) {
  }
  close(fd);
  return rc > 0 && !is_final() && !handle_.released() && !finish_from_caller();
}

int Process::wait_output(uint64_t out_pos, uint64_t err_pos, int timeout_ms) {
  // The wait is on the capture, which a reader reading its pipe itself
  // fills only as it reads: such a pipe goes back to the loop.
  OutputStream& out = streams_.out();
  OutputStream& err = streams_.err();
  if (out_pos != SUP_POS_IGNORE && out.lent()) hand_back_direct(out);
  if (err_pos != SUP_POS_IGNORE && err.lent()) hand_back_direct(err);
  std::unique_lock<std::mutex> lock(mu_);
  streams_.add_waiter();
  bool ready = wait_until(changed_, lock, timeout_ms, [&] {
    return is_final() || handle_.released() || out.capture().total() > out_pos || err.capture().total() > err_pos;
  });
  streams_.remove_waiter();
  if (handle_.released()) return SUP_ECANCELED;  // even if final: see wait_final
  return ready ? 1 : 0;
}

// The main process has exited and this caller woke first: unless the loop
// is at the process (work_mu_ taken), drains the pipes, decides and
// publishes the result on this thread; the loop reaps and closes what is
// left when it next looks (tear_down), unless sup_release reaps first.
// Only where nothing needs the loop: no terminal to hand back, nothing
// held back, and both pipes at EOF (what the main process left may hold
// them). Returns true if final.
bool Process::finish_from_caller() {
  std::unique_lock<std::mutex> work(work_mu_, std::try_to_lock);
  // The loop is at the process: its result is microseconds away.
  if (!work.owns_lock()) return false;
  // The loop may not have started the process yet (Engine::spawn): all
  // this needs is the pidfd and the pipes, which are the caller's to read.
  if (lifecycle_ != Lifecycle::running) return ended();
  // A terminal to hand back (tcsetpgrp from a thread that may not block
  // SIGTTOU), a stream held back (its watch is the loop's to restart), or
  // the main process still running: the loop's.
  // A tee (the loop's to write), too.
  // So does a pipe its reader reads itself (the loop watches it again).
  if (host_terminal_.lent() || streams_.any_held() || streams_.any_lent() || streams_.any_tee()) return false;
  adopt_caller_signals();
  if (!main_.exited_now()) return false;
  // Cgroup mode: what the main process left is ended before the pipes are
  // read to their end.
  tree_after_exit();
  // Nothing is held back, so this touches no watch: it only marks the
  // backpressure lifted, as the loop does once the main process is gone.
  lift_backpressure();
  // What the main process wrote last, to EOF. A pipe that something the
  // main process left still holds, or a writer too fast to catch up with
  // here, is left to the loop: the bytes read so far are in the capture,
  // in order, as the loop would have put them there.
  constexpr size_t kChunk = 16 * 1024;
  constexpr int kMaxReads = 64;
  char buf[kChunk];
  for (OutputStream* pipe : streams_.both())
    if (pipe->open() && read_pipe(*pipe, buf, sizeof buf, kMaxReads, /*until_empty=*/true)) return false;
  lifecycle_ = Lifecycle::draining;
  publish_final();
  return true;
}

}  // namespace sup
