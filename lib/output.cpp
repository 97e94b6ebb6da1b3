// Reading the child's pipes (on the loop thread, or on a caller's waiting in
// sup_poll): capture, activity tracking for the idle timeout, backpressure for
// live readers, the loop's watches, and feeding stdin data.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "engine.hpp"
#include "poll_watch.hpp"
#include "process.hpp"
#include "sup.h"

namespace sup {
namespace {

// How long the loop waits awake, once both pipes are at EOF, for the main
// process's exit to show on its pidfd.
constexpr Nanos kExitAfterEofWait = 30'000;

// What a refused watch's message calls the stream.
const char* stream_name(const OutputStream& pipe) noexcept {
  return pipe.stream() == SUP_STDOUT ? "stdout" : "stderr";
}

}  // namespace

// The pidfd's and stdin's watches: handler under work_mu_, unless final.
template <void (Process::*handler)()>
void Process::on_watch(uv_poll_t* handle, int, int) {
  auto* self = static_cast<Process*>(handle->data);
  std::lock_guard<std::mutex> work(self->work_mu_);
  if (!self->final_on_loop()) (self->*handler)();
}

void Process::on_pipe_readable(uv_poll_t* handle, int, int) {
  auto* self = static_cast<Process*>(handle->data);
  std::lock_guard<std::mutex> work(self->work_mu_);
  if (self->final_on_loop()) return;
  Streams& streams = self->streams_;
  self->on_output_ready(handle == streams.out().watch().get() ? streams.out() : streams.err());
}

// The start (Lifetimes::start_queued): watches the pidfd and pipes,
// feeds stdin, arms the deadline, then handles what callers asked for
// meanwhile. If a watch cannot be made (out of memory, epoll's watch
// limit), or the engine could not track the process (tracked false), the
// child is killed at once and that is its result: the caller already
// holds the handle.
void Process::start(uv_loop_t* loop, bool tracked) noexcept {
  std::lock_guard<std::mutex> work(work_mu_);
  loop_ = loop;
  requests_.mark_start_asked();
  // Finished by its caller before the loop woke (loop_needed_by): what is
  // left is to reap it and close what it held.
  if (final_on_loop()) return;
  if (!tracked) {
    end_unwatched(/*drain=*/false);
    return;
  }
  try {
    // Made now, so that a watch that cannot be made ends the child now. A
    // caller already in sup_poll watches the exit and the pipes itself: the
    // loop starts its watches once none does (sync_watches).
    make_poll(loop_, main_.watch(), main_.pidfd(), this, "pidfd");
    // A stream routed elsewhere ("inherit", "null", "stdout") has no pipe;
    // with "pty" the terminal carries both, read as stdout.
    for (OutputStream* pipe : streams_.both())
      if (pipe->open()) make_poll(loop_, pipe->watch(), pipe->fd(), this, stream_name(*pipe));
    if (drivers_.any())
      drivers_.stand_back();
    else
      watch_exit_and_pipes(/*probe=*/false);
    if (input_.feeding()) feed_stdin();
    arm_deadline();
  } catch (...) {
    end_unwatched(/*drain=*/false);
    return;
  }
  // What callers asked for before the loop had the process.
  if (requests_.pending()) handle_requests_locked();
}

// A child the loop cannot watch (a watch that cannot be made or started
// again) is ended now, and that is its result. drain: its pipes are
// non-blocking (from the spawn), and what is in them is read.
void Process::end_unwatched(bool drain) noexcept {
  // The child runs, the caller holds its handle, and sup cannot watch it:
  // it must not outlive this, and its end is the result (aborted, by
  // SIGKILL). A main process already gone keeps its outcome; what it left
  // holding the pipes gets the same SIGKILL when the result is published.
  if (lifecycle_ == Lifecycle::running) {
    try {
      adopt_caller_signals();
      escalation_.raise(Cause::aborted);
      if (!escalation_.kill_sent()) kill_group(now_ns());
    } catch (const std::bad_alloc&) {
      // Not recorded, but sent.
      const bool delivered = !main_.status_lost() && send_to_child(SIGKILL);
      signal_tree(SIGKILL, 0, true);
      escalation_.killed(now_ns(), delivered, /*draining=*/false);
    }
    main_.await_exit();
    main_.exited_now();
    lifecycle_ = Lifecycle::draining;
  }
  // drain: what is in the pipes is kept, as at any end (a child start()
  // could not watch is ended without reading them). Lifted as at any end:
  // nothing is held, and a pipe lent to its reader is the loop's again.
  if (drain) {
    streams_.lift();
    try {
      for (OutputStream* pipe : streams_.both()) {
        if (pipe->open()) drain_pipe(*pipe);
      }
    } catch (const std::bad_alloc&) {
      // What was read before is kept.
    }
  }
  finish();
}

// restart_poll for a pipe's watch.
void Process::watch_pipe(OutputStream& pipe, bool probe) {
  if (pipe.lent()) return;  // its reader reads it (direct_read.cpp)
  restart_poll(loop_, pipe.watch(), on_pipe_readable, probe, stream_name(pipe));
}

// Starts the pidfd's and the pipes' watches (made by start()); any that is
// closed (EOF, the exit handled) stays so.
void Process::watch_exit_and_pipes(bool probe) {
  // Closed when the exit was handled, or at EOF: those stay closed.
  if (main_.watch() && lifecycle_ == Lifecycle::running)
    restart_poll(loop_, main_.watch(), on_watch<&Process::on_leader_exit>, probe, "pidfd");
  for (OutputStream* pipe : streams_.both())
    if (pipe->watch() && pipe->open() && !pipe->held())
      watch_pipe(*pipe, probe);
}

// The loop's watches follow the drivers: stopped while a caller drives,
// restarted once none does; an ended process is torn down instead.
void Process::sync_watches() {
  const CallerDrivers::Step step = drivers_.sync();
  if (step == CallerDrivers::Step::back) {
    for (UvHandle<uv_poll_t>* handle : {&main_.watch(), &streams_.out().watch(), &streams_.err().watch()})
      if (*handle) uv_poll_stop(handle->get());
  } else if (step == CallerDrivers::Step::in) {
    // A caller that saw the exit but found the loop busy with the process
    // leaves it to the loop: handled now, instead of watching for it again.
    if (lifecycle_ == Lifecycle::running && main_.exit_shows() && main_.exited_now()) {
      leader_gone();
      if (ended()) return;
    }
    try {
      watch_exit_and_pipes(/*probe=*/true);
    } catch (...) {
      // As when start() cannot watch the child: it is ended now.
      end_unwatched(/*drain=*/true);
    }
  }
}

// Under work_mu_: a caller may watch and read the process itself. Not
// with a terminal to hand back or backpressure (both need the loop's
// watches), nor before adopt_child or once the main process has exited.
bool Process::can_drive() const noexcept {
  // Nor while a reader reads a pipe itself (direct_read.cpp).
  // Nor with a tee: its copies are written on the loop thread, where every
  // signal is blocked (SIGPIPE) and no host thread waits on the host's fd.
  return lifecycle_ == Lifecycle::running && main_.pid() != 0 && main_.has_pidfd() && !host_terminal_.lent() &&
         !streams_.backpressure().configured() && !streams_.any_tee() && !streams_.any_lent() && !handle_.released();
}

void Process::on_output_ready(OutputStream& pipe) {
  // A few reads per wakeup: enough to drain a full pipe, not so many that a
  // firehose on one child starves the others on the loop.
  constexpr int kReadsPerWakeup = 4;
  if (read_pipe(pipe, kReadsPerWakeup)) return;
  pipe_ended(pipe);
}

// A pipe at its end (EOF, or its tee's reader gone): closed, and the
// process finished if that was the last thing it waited for.
void Process::pipe_ended(OutputStream& pipe) {
  // The last pipe to close after the main process: publish first, and let
  // finish() close it (the caller is waiting for the result).
  if (lifecycle_ == Lifecycle::draining && !streams_.other(pipe).open()) {
    finish_after_copies();
    return;
  }
  close_pipe(pipe);
  if (lifecycle_ == Lifecycle::running && !streams_.any_open() && !drivers_.exit_awaited()) {
    // Both pipes at EOF: almost always the main process exiting, which the
    // kernel shows on the pidfd a few microseconds after it closes the
    // files. With nobody in sup_poll for it (a caller waiting on sup_fd, or
    // none), the exit is waited for awake here and handled in this wake-up
    // instead of the next (sup_abort to result: 1.30x -> 1.17x the raw kill
    // + pidfd poll at p50, mean of 8 alternating runs). A caller in sup_poll
    // finishes the process itself (finish_from_caller), which this wait
    // would only hold up. A child that closed its output and runs on costs
    // the loop this once.
    adopt_caller_signals();
    bool shown = false;
    yield_until(now_ns(), kExitAfterEofWait, [&] { return shown = main_.exit_shows(); });
    if (shown && main_.exited_now()) {
      leader_gone();
      return;
    }
  }
  maybe_finish();
}

// A byte was read (by the loop or a reader, under work_mu_): the idle
// clock restarts, and the first one turns the first-output limit into
// the idle limit.
void Process::note_output() noexcept {
  // The first byte: the idle limit now applies, and may end sooner than the
  // first-output deadline the loop armed; the loop arms the new one.
  if (deadlines_.note_output(now_ns())) request(kRearm);
}

// Reads at most max_reads times; returns false on EOF. A short read ends
// the loop unless until_empty, which goes on to EAGAIN (proof that a
// writer is still there) or EOF.
bool Process::read_pipe(OutputStream& pipe, int max_reads, bool until_empty) {
  return read_pipe(pipe, engine_.read_buffer(), engine_.read_buffer_size(), max_reads, until_empty);
}

// The same into buf: the engine's read buffer is the loop thread's.
bool Process::read_pipe(OutputStream& pipe, char* buf, size_t cap, int max_reads, bool until_empty) {
  for (int i = 0; i < max_reads; ++i) {
    if (pipe.held()) return true;
    ssize_t n = pipe.read_some(buf, cap);
    if (n > 0) {
      note_output();
      streams_.keep(pipe, buf, static_cast<size_t>(n));
      if (pipe.tee()) {
        tee_copy(pipe, buf, static_cast<size_t>(n));
        // The tee's reader has gone: read as the end of the stream, which
        // the caller closes.
        if (pipe.tee_ended()) return false;
      }
      streams_.hold_back_if_needed(pipe);
      if (static_cast<size_t>(n) < cap && !until_empty) return true;
      continue;
    }
    if (n == 0) return false;
    // Any other error leaves nothing more to read: a terminal's master says
    // EIO once every descriptor of the child's side is closed, after the
    // last byte written there has been read.
    return errno == EAGAIN;
  }
  return true;
}

// What is in the pipe once its writer is gone or ending, to EAGAIN or EOF
// (at most 16 reads of the read buffer); returns true at EOF.
bool Process::drain_pipe(OutputStream& pipe) {
  return !read_pipe(pipe, pipe.drain_reads(), /*until_empty=*/true);
}

void Process::close_pipe(OutputStream& pipe) {
  UniqueFd fd = streams_.close(pipe);
  drivers_.retire(fd);
}

// Once the main process has exited or sup is ending it, every pipe is
// drained at full speed, read or not.
void Process::lift_backpressure() {
  const std::array<bool, 2> rewatch = streams_.lift();
  for (int i = 0; i < 2; ++i) {
    OutputStream& pipe = i == 0 ? streams_.out() : streams_.err();
    // No watch was made for a pipe its reader took before the loop started
    // the child, if start() failed to make one: that child is ended
    // unwatched (end_unwatched).
    if (!rewatch[i] || !pipe.open() || !pipe.watch()) continue;
    try {
      watch_pipe(pipe, /*probe=*/true);
    } catch (...) {
      // Called from inside the escalation and the exit's handling: the
      // child is ended (as one that cannot be watched is) from the loop's
      // next turn. Meanwhile this pipe is read only by the drain at the
      // main process's exit.
      requests_.latch(kAbort);
      engine_.wake_for(*this);
    }
  }
}

void Process::resume_held_back() {
  bool resumed = false;
  for (OutputStream* pipe : streams_.both()) {
    if (!streams_.resume(*pipe)) continue;
    try {
      watch_pipe(*pipe, /*probe=*/true);
    } catch (...) {
      end_unwatched(/*drain=*/true);
      return;
    }
    resumed = true;
  }
  if (!resumed) return;
  // The child was blocked by our reader, not silent: its idle clock restarts.
  deadlines_.note_activity(now_ns());
  if (lifecycle_ == Lifecycle::draining)
    after_leader_exit();
  else
    arm_deadline();
}

// "stdin": "data": the feed (ChildInput) and its watch.
void Process::feed_stdin() {
  on_stdin_writable();
  if (!input_.feeding()) return;
  start_poll(loop_, input_.feed_watch(), input_.feed_fd(), UV_WRITABLE, on_watch<&Process::on_stdin_writable>, this,
             "stdin");
}

void Process::on_stdin_writable() {
  if (input_.feed()) close_stdin();
}

}  // namespace sup
