// A Process's life as API threads see it: taking over its cloned child,
// latching requests, waiting, reading live output, and the caller's part of
// its release.
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <new>
#include <thread>

#include "engine.hpp"
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

// How many unread bytes a held-back stream can have: the window, plus one
// read that may land just before the check, plus what a pipe holds when the
// main process has exited and sup drains it regardless (escalation.cpp).
uint64_t unread_limit(uint64_t backpressure_bytes, const Engine& engine) {
  return backpressure_bytes == 0 ? 0 : backpressure_bytes + 4 * engine.read_buffer_size();
}

// A descriptor the handle makes on demand (eventfd) could not be made: the
// host is out of descriptors (its own table or the system's), or of kernel
// memory. Only the codes the header lists for these calls.
int fd_error(int err) noexcept { return err == EMFILE || err == ENFILE ? SUP_EMFILE : SUP_ENOMEM; }

// How long an API thread waits awake for the loop's next step when that
// step is microseconds away (the result after the exit, the reap after the
// result), before it sleeps on the condition variable: a sleep there costs
// a second wake-up in series. Yielding, not busy: on one CPU the loop runs.
constexpr Nanos kAwakeWait = 50'000;

// What is left of timeout_ms (-1: forever) since start, rounded up: a wait
// must not end before the caller's timeout.
int ms_left(int timeout_ms, Nanos start, Nanos now) {
  if (timeout_ms < 0) return -1;
  const Nanos left = static_cast<Nanos>(timeout_ms) * kNanosPerMs - (now - start);
  return left <= 0 ? 0 : static_cast<int>((left + kNanosPerMs - 1) / kNanosPerMs);
}

}  // namespace

// "max_output_bytes": null reaches the captures as their own keep-all limit.
static_assert(kKeepAllOutput == Capture::kKeepAll);

Process::Process(Engine& engine, const Spec& spec, Nanos called_at)
    : engine_(engine),
      fork_generation_(Engine::fork_generation()),
      backpressure_(spec.backpressure_bytes),
      called_at_(called_at),
      out_(SUP_STDOUT, spec.max_output_bytes, unread_limit(spec.backpressure_bytes, engine)),
      err_(SUP_STDERR, spec.max_output_bytes, unread_limit(spec.backpressure_bytes, engine)),
      deadlines_(spec.idle_timeout_ms * kNanosPerMs, spec.first_output_timeout_ms * kNanosPerMs,
                 spec.max_runtime_ms * kNanosPerMs, called_at),
      escalation_(spec.grace_ms * kNanosPerMs, spec.interrupt_signal, spec.on_timeout, called_at),
      input_wait_(spec.input_wait_timeout_ms * kNanosPerMs, spec.tty_stop_timeout_ms * kNanosPerMs, spec.pty),
      input_(spec.stdin_mode == StdinMode::pipe || spec.pty, spec.pty,
             spec.stdin_mode == StdinMode::data ? spec.stdin_data : std::string()) {
  // What the loop thread would otherwise allocate, made here, where running
  // out of memory is an error the caller gets (SUP_ENOMEM): the signals'
  // room is reserved by escalation_.
  // One terminal carries both streams: read as stdout, stderr empty.
  out_.set_route(spec.pty ? "pty" : route_name(spec.stdout_route),
                 spec.stdout_route == Route::tee ? TeeSink::open(1) : nullptr);
  err_.set_route(spec.pty ? "pty" : route_name(spec.stderr_route),
                 spec.stderr_route == Route::tee ? TeeSink::open(2) : nullptr);
  if (spec.pty) out_.set_terminal();
}

Process::~Process() {
  // Only the loop thread frees a process (or the releasing thread once the
  // engine is gone), after it became final: every handle is closed already.
  magic_ = 0;
}

bool Process::forked_away() const noexcept { return fork_generation_ != Engine::fork_generation(); }

// The one step from a clone to the process: the child has exec'd, and
// this takes it over before the caller has the handle (its descriptors;
// the child's ends of the pipes closed here, before any exit is watched,
// or a fast child's EOF would look like a leftover still holding a pipe;
// "auto" falling back to group mode; what the sentinel covers, `covered`).
// Returns when the loop must have started the process (0: now), read
// before the engine queues it: now where the loop has work from the
// start (stdin to feed, a terminal, a tee, backpressure, a request, a
// deadline within kLazyStart and a margin); else up to kLazyStart later,
// for a caller that waits in sup_poll reads, reaps and finishes the child
// itself, and a short child is then done before the loop wakes at all.
Nanos Process::adopt_child(Launched& child, SpawnFds& fds, HostDeath covered) noexcept {
  if (!child.cgroup_refused.empty()) fall_back_to_group(std::move(child.cgroup_refused));
  set_host_death(covered);
  fds.child_out.reset();
  fds.child_err.reset();
  fds.child_stdin.reset();
  if (fds.tty.valid() && !child.took_terminal) {
    fds.tty.reset();
    set_foreground(ForegroundGrant{true, kLeftForeground});
  }
  launched(child.pid, child.started_at, std::move(child.pidfd), std::move(fds.out_read), std::move(fds.err_read),
           std::move(fds.stdin_write), std::move(fds.tty), fds.host_pgrp);
  const Nanos now = now_ns();
  const Nanos by = loop_needed_by(now);
  if (by <= now) {
    requests_.mark_start_asked();
    return 0;
  }
  return by;
}

Nanos Process::loop_needed_by(Nanos now) const noexcept {
  // A deadline this near is the loop's to arm now: started later, it would
  // stamp output it reads late and could find the first-output deadline
  // past. Far off, the loop starts well before it.
  constexpr Nanos kDeadlineMargin = 2'000'000;
  if (input_.feeding() || host_terminal_.lent() || out_.tee() || err_.tee() || backpressure_.configured() ||
      requests_.pending())
    return now;
  const Nanos deadline = next_deadline();
  if (deadline <= now + kLazyStart + kDeadlineMargin) return now;
  return now + kLazyStart;
}

void Process::need_loop() noexcept {
  if (requests_.ask_start()) engine_.wake_loop();
}

bool Process::pin() noexcept {
  pins_.fetch_add(1);
  if (!released_.load()) return true;
  pins_.fetch_sub(1);
  return false;
}

int Process::request(unsigned bits, Nanos wake_by) noexcept {
  if (published_.load(std::memory_order_acquire)) return 1;
  requests_.latch(bits);
  engine_.wake_for(*this, wake_by);
  return 0;
}

int Process::wait_final(int timeout_ms) {
  // Released is asked first everywhere: release's own kill makes the result
  // final while waiters still wait, and a waiter told 1 would read a result
  // whose memory is about to go.
  if (released()) return SUP_ECANCELED;
  if (is_final()) return 1;
  // A caller that only looks leaves the child to the loop.
  if (timeout_ms == 0) need_loop();
  if (timeout_ms != 0) timeout_ms = wait_leader_exit(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  wait_until(changed_, lock, timeout_ms, [this] { return is_final() || released(); });
  if (released()) return SUP_ECANCELED;
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
  // kAwakeWait, the condition variable.
  if (loop_finishes && !is_final() && !released())
    now = yield_until(now, kAwakeWait, [this] { return is_final() || released(); });
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
      watched[1] = {out_.open() ? out_.fd() : -1, POLLIN, 0};
      watched[2] = {err_.open() ? err_.fd() : -1, POLLIN, 0};
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
        OutputStream& pipe = i == 1 ? out_ : err_;
        // At EOF, or closed by the loop (a deadline's check): not polled
        // again; the loop closes it, or finish_from_caller reads the 0.
        if (!pipe.open() || !read_pipe(pipe, buf.get(), engine_.read_buffer_size(), reads, false))
          watched[i].fd = -1;
      }
    }
    if (!running || is_final() || released()) break;
  }
  // Finished before leaving: the loop, woken as this thread leaves, then
  // only closes what is left.
  const bool finished = exited && !is_final() && !released() && finish_from_caller();
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
    if (is_final() || released() || !main_.has_pidfd()) return false;
    fd = fcntl(main_.pidfd(), F_DUPFD_CLOEXEC, 3);
  }
  if (fd < 0) return false;  // out of fds: the condition variable alone
  pollfd exited{fd, POLLIN, 0};
  int rc;
  while ((rc = poll(&exited, 1, timeout_ms)) < 0 && errno == EINTR) {
  }
  close(fd);
  return rc > 0 && !is_final() && !released() && !finish_from_caller();
}

int Process::wait_output(uint64_t out_pos, uint64_t err_pos, int timeout_ms) {
  // The wait is on the capture, which a reader reading its pipe itself
  // fills only as it reads: such a pipe goes back to the loop.
  if (out_pos != SUP_POS_IGNORE && out_.lent()) hand_back_direct(out_);
  if (err_pos != SUP_POS_IGNORE && err_.lent()) hand_back_direct(err_);
  std::unique_lock<std::mutex> lock(mu_);
  ++waiters_;
  bool ready = wait_until(changed_, lock, timeout_ms, [&] {
    return is_final() || released() || out_.capture().total() > out_pos || err_.capture().total() > err_pos;
  });
  --waiters_;
  if (released()) return SUP_ECANCELED;  // even if final: see wait_final
  return ready ? 1 : 0;
}

int64_t Process::read_output(int stream, uint64_t* pos, char* buf, size_t cap) {
  OutputStream& pipe = pipe_for(stream);
  bool resume = false;
  bool caught_up = false;
  size_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A position past the end would make the unread count wrap, and a
    // held-back stream would then never resume.
    Capture& capture = pipe.capture();
    if (*pos > capture.total()) return SUP_EINVAL;
    if (capture.lent() && cap > 0 && *pos < capture.total()) {
      try {
        bring_back_kept(pipe);
      } catch (const std::bad_alloc&) {
        return SUP_ENOMEM;
      }
    }
    n = capture.lent() ? 0 : capture.read_at(pos, buf, cap);
    if (n > 0) pipe.note_read(now_ns());
    caught_up = n == 0 && *pos == capture.total();
    pipe.reader_at(*pos);
    resume = pipe.held() && backpressure_.may_resume(pipe.unread());
    pipe.clear_ready_if_caught_up(is_final());
  }
  if (resume && !is_final()) request(kResume);
  // Everything sup holds is read: the next bytes are in the pipe, for a
  // reader that reads it itself (direct_read.cpp).
  if (caught_up && cap > 0) {
    const PipeHolder holder = pipe.holder();
    if (holder == PipeHolder::reader) return read_direct(pipe, pos, buf, cap);
    // Lent before, and taken back while the reader was away or behind.
    if (holder == PipeHolder::lapsed && retake_lease(pipe)) return read_direct(pipe, pos, buf, cap);
  }
  return static_cast<int64_t>(n);
}

int Process::output_fd(int stream) {
  OutputStream& pipe = pipe_for(stream);
  // work_mu_ first: whether the reader may take the pipe is the loop's state.
  std::lock_guard<std::mutex> work(work_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  if (!pipe.has_ready_fd()) {
    if (int rc = pipe.make_ready_fd(); rc < 0) return fd_error(-rc);
    pipe.signal_ready(is_final());
    offer_direct(pipe);
  }
  return pipe.reader_fd();
}

uint64_t Process::output_total(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return pipe_for(stream).capture().total();
}

int Process::event_fd() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!event_fd_.valid()) {
    int fd = fd_above_stdio(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (fd < 0) return fd_error(errno);
    event_fd_.reset(fd);
    // Readable for good once final: nobody ever reads the counter.
    if (is_final()) set_readable(fd);
  }
  return event_fd_.get();
}

uint64_t Process::omitted_bytes(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return pipe_for(stream).capture().omitted();
}

void Process::flatten_kept() {
  // The loop flattens after publishing, which a caller asking at once can
  // overtake: it would then copy the kept bytes instead (16 MiB, 15 ms at
  // the default limit). Once final nothing is appended, so whichever thread
  // comes first flattens, under mu_.
  if (!is_final()) return;
  out_.capture().flatten();
  err_.capture().flatten();
}

std::string_view Process::kept_output(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  flatten_kept();
  OutputStream& pipe = pipe_for(stream);
  bring_back_kept(pipe);
  Capture& capture = pipe.capture();
  if (auto flat = capture.flat()) {
    capture.hand_out();
    return *flat;
  }
  auto& kept = kept_[stream == SUP_STDOUT ? 0 : 1];
  if (!kept) kept = capture.kept();
  return *kept;
}

const std::string& Process::result_json() {
  std::lock_guard<std::mutex> lock(mu_);
  flatten_kept();
  if (!result_.has_text()) build_result_json();
  return result_.text();
}

// sup_release, the caller's part of the end: aborts if running, waits
// for the reap and for every other call to leave. The engine then frees
// the process (Engine::dispose), as it does every process it spawned.
void Process::release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    released_.store(true);
  }
  changed_.notify_all();
  if (!is_final()) {
    kill_from_caller();
    requests_.latch(kAbort);
    engine_.wake_for(*this);
  }
  {
    // Final, and the main process reaped: no zombie outlives the handle.
    // After a caller's finish (finish_from_caller) the reap is the loop's
    // next step; this thread does it if the loop is not at the process. Else
    // it is microseconds behind the result, and waited for awake first
    // (kAwakeWait).
    if (is_final() && !main_.reaped()) {
      std::unique_lock<std::mutex> work(work_mu_, std::try_to_lock);
      if (work.owns_lock()) reap();
    }
    yield_until(now_ns(), kAwakeWait, [this] { return main_.reaped(); });
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return main_.reaped(); });
  }
  // Calls still inside (woken above, or about to notice released_) leave
  // within microseconds; none can begin any more.
  while (pins_.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  input_.release();
  // The child's private "tmp" goes with its handle, on this thread: the
  // loop, which frees the process, is never held up by a large tree.
  if (confine_) confine_->remove_tmp();
}

void Process::abandon() noexcept {
  // The loop that owns these handles has no thread here; closing them would
  // run libuv on a dead loop.
  exit_watch_.forget();
  input_.feed_watch().forget();
  // The parent's cgroup is the parent's to end and remove.
  containment_.disown();
  for (OutputStream* pipe : {&out_, &err_}) {
    pipe->watch().forget();
    pipe->tee_watch().forget();
  }
}

}  // namespace sup
