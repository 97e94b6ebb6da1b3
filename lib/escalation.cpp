// Deadlines and the interrupt-then-kill escalation, as Process acts on them:
// the signals, the callers' latches, the exit. One timer per process
// carries the earliest of its deadlines (idle, max runtime, grace, pipe
// drain); reads only move the idle clock (deadlines.hpp), and the timer
// recomputes when it fires, so there are never two timers racing. The
// state is the parts' (deadlines.hpp, escalation_state.hpp).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "engine.hpp"
#include "process.hpp"

namespace sup {

namespace {

// Inside the window (`window`), whether a caller may end the group: no
// caller's kill on record, and the main process running.
bool may_end_group(const CallerSignals::Window& window, const CallerSignals& signals,
                   const MainProcess& main) noexcept {
  // Once the loop is reaping the leader its pid, so the group id, may go to
  // a stranger. Before that, the pidfd and the group id are still ours.
  if (!window.open() || signals.kill_at() != 0) return false;
  // Only a main process that still runs: one that exited by itself is not
  // ended by us (the exit race, as in handle_requests), and one the host
  // reaped may have lent its pid to a stranger.
  return main.running();
}

}  // namespace

// sup_abort's first step: SIGKILL to the group from the
// caller's thread while the main process runs, so that its end does not
// wait for the loop thread to wake. Async-signal-safe. Returns true when
// it found the main process running and a caller's kill is now on record
// (this call's, or one racing it): the loop (or a caller finishing the
// process) adopts it whenever it next looks at the process, at the latest
// when it sees the main process exit.
bool Process::kill_from_caller() noexcept {
  int saved_errno = errno;  // a signal handler's caller keeps its errno
  bool on_record = false;
  if (const CallerSignals::Window window(signals_); may_end_group(window, signals_, main_)) {
    // No interrupt after the kill: a caller still on its way is turned back.
    // Closed before the kill's time is taken, so that an interrupt that got
    // in first also has the earlier time.
    signals_.close_free_latch();
    on_record = true;
    if (signals_.stamp_kill(now_ns())) {
      const bool delivered = send_to_child(SIGKILL);
      signal_tree(SIGKILL, 0, true);  // cgroup mode: the rest of the tree
      if (!delivered) {
        // Reached nobody (the main process ended meanwhile): not on record;
        // the loop decides the end as for any exit.
        signals_.unstamp_kill();
        on_record = false;
      }
    }
  }
  errno = saved_errno;
  return on_record;
}

// sup_interrupt's first step: the interrupt signal (and SIGCONT) to the
// group from the caller's thread while the main process runs, unless the
// loop or another caller sent it already. Async-signal-safe. Returns when
// this call sent it, 0 if it did not.
Nanos Process::interrupt_from_caller() noexcept {
  // An interrupt signal of SIGKILL is a kill: the loop sends it, so that
  // the group is never killed twice over by two paths.
  const int interrupt_signal = escalation_.interrupt_signal();
  if (interrupt_signal == SIGKILL) return 0;
  if (signals_.latch() != 0) return 0;  // sent already
  int saved_errno = errno;
  Nanos sent_at = 0;
  if (const CallerSignals::Window window(signals_); may_end_group(window, signals_, main_)) {
    // Whoever takes the latch sends the interrupt: this caller, another, or
    // the loop (a timeout, a leftover group); it is never sent twice.
    const Nanos now = now_ns();
    if (signals_.take_latch(now)) {
      if (send_to_child(interrupt_signal)) {
        // A stopped process cannot act on the signal until it is continued.
        if (interrupt_signal != SIGCONT) send_to_child(SIGCONT, /*answer=*/false);
        // Cgroup mode: the rest of the tree too (contain.cpp).
        signal_tree(interrupt_signal, interrupt_signal != SIGCONT ? SIGCONT : 0, true);
        sent_at = now;
      } else {
        // Reached nobody: not sent, so not on record (the latch stays
        // closed: the main process has ended).
        signals_.close_latch();
      }
    }
  }
  errno = saved_errno;
  return sent_at;
}

// sup_interrupt's second step: the loop is to act on the interrupt (arm
// the grace's kill), by the grace's end at the latest if this caller sent
// it at sent_at (not 0). Async-signal-safe. Returns 1 if already final.
int Process::request_interrupt(Nanos sent_at) noexcept {
  // Most children end within microseconds of the signal, and the loop
  // adopts the interrupt when it sees that exit. Woken now, it would only
  // arm the grace's kill, on a CPU the dying child needs (interrupt to
  // result at p50: 1.29x -> 1.21x the raw kill + pidfd poll, mean of 6
  // alternating runs); it is woken by the grace's end. Not under
  // backpressure: a held-back child may need its pipe read at once to say
  // its last words.
  const bool can_wait = sent_at != 0 && !streams_.backpressure().configured();
  return request(kInterrupt, can_wait ? sent_at + escalation_.grace() : 0);
}

// Takes the signals that callers sent (kill_from_caller,
// interrupt_from_caller) as the loop's own: the outcome they decide while
// the main process ran, the escalation, the signals recorded in order.
// First in every loop-thread entry that decides anything.
void Process::adopt_caller_signals() {
  if (ended()) return;
  adopt_host_signals();
  Nanos kill_at = signals_.kill_at();
  if (escalation_.kill_sent()) kill_at = 0;  // the loop's, or adopted already
  // A kill closes the latch (kill_from_caller did so already): a caller's
  // interrupt still in it came before the kill, and is recorded before it.
  if (kill_at != 0) signals_.close_free_latch();
  Nanos interrupt_at = signals_.latch();
  if (interrupt_at > 0) adopt_caller_interrupt(interrupt_at);
  if (kill_at != 0) {
    // The caller saw the main process running when it sent the kill
    // (may_end_group): its request decides the outcome, even if the
    // loop has seen the exit since. Recorded as sent, it was sent.
    escalation_.raise(Cause::aborted);
    lift_backpressure();
    escalation_.record(SIGKILL, kill_at);
    group_killed(now_ns(), /*delivered=*/true);
  }
}

void Process::adopt_caller_interrupt(Nanos at) {
  // Callers only take a free latch, so the loop may close it: adopted once.
  signals_.close_latch();
  // The caller saw the main process running when it sent the signal, as in
  // adopt_caller_signals: the outcome is the interrupt's.
  escalation_.raise(Cause::interrupted);
  lift_backpressure();
  escalation_.record(escalation_.interrupt_signal(), at);
  escalation_.interrupt_sent(at);
}

void Process::on_leader_exit() {
  adopt_caller_signals();
  if (lifecycle_ != Lifecycle::running || !main_.exited_now()) return;
  leader_gone();
}

// The main process has exited (MainProcess::exited_now said so): drains the
// pipes and, unless something holds them, finishes.
void Process::leader_gone() {
  lifecycle_ = Lifecycle::draining;
  host_terminal_.hand_back(main_.pid());
  after_leader_exit();
}

void Process::after_leader_exit() {
  // Cgroup mode: what the main process left is ended now, so its pipes
  // close and the drain below reaches their end (in an interrupt's grace,
  // once the grace is over).
  tree_after_exit();
  // The main process is gone: nothing is left to hold back, and what it
  // wrote must be counted before the result is final.
  lift_backpressure();
  // What the main process wrote just before exiting may still sit in the pipes.
  OutputStream& out = streams_.out();
  OutputStream& err = streams_.err();
  bool out_done = !out.open() || drain_pipe(out);
  bool err_done = !err.open() || drain_pipe(err);
  // Both at EOF, as whenever nothing outlived the main process: the caller
  // waits for the result, and finish() closes the pipes and the exit watch
  // after publishing it.
  if (out_done && err_done) {
    finish_after_copies();
    return;
  }
  // The pidfd stays readable: stop watching it, or the loop would spin.
  main_.watch().close();
  if (out_done) close_pipe(out);
  if (err_done) close_pipe(err);
  Nanos now = now_ns();
  if (escalation_.kill_sent() || main_.status_lost() || containment_.tree_ended()) {
    // With the leader reaped elsewhere the group can no longer be signaled
    // safely: wait for the pipes as briefly as after a SIGKILL.
    escalation_.give_up_pipes_soon(now);
  } else if (escalation_.stage() == Escalation::none) {
    // A pipe still open after the drain is held by something the main
    // process left behind.
    if (streams_.any_open()) interrupt_group(now);
  }
  arm_deadline();
}

void Process::handle_requests() {
  std::lock_guard<std::mutex> work(work_mu_);
  if (final_on_loop()) {
    requests_.drop();
    return;
  }
  handle_requests_locked();
}

void Process::handle_requests_locked() {
  if (loop_ == nullptr) return;  // not started yet: start() comes back for them
  unsigned bits = requests_.take();
  adopt_caller_signals();
  if (bits & kWatch) sync_watches();
  if (ended()) return;
  if (bits & kReader) sync_reader_watches();
  if (ended()) return;
  if (bits & kResume) resume_held_back();
  if (ended()) return;
  if ((bits & (kAbort | kInterrupt | kExpire)) == 0) {
    if (bits & kRearm) arm_deadline();
    return;
  }
  // The exit race: a main process that already exited is not ended by us.
  if (lifecycle_ == Lifecycle::running && main_.exited_now()) {
    on_leader_exit();
    if (ended()) return;
  }
  Nanos now = now_ns();
  if (bits & kAbort) {
    if (lifecycle_ == Lifecycle::running) escalation_.raise(Cause::aborted);
    if (!escalation_.kill_sent()) kill_group(now);
  }
  // sup_expire: what the max runtime's deadline would do now
  // (act_on_deadline), and, as there, nothing once sup is ending the child
  // for another reason: the first cause stands.
  if ((bits & kExpire) && lifecycle_ == Lifecycle::running && escalation_.cause() == Cause::none)
    timed_out(TimeoutKind::max_runtime);
  if ((bits & kInterrupt) && lifecycle_ == Lifecycle::running) {
    escalation_.raise(Cause::interrupted);
    if (escalation_.stage() == Escalation::none) interrupt_group(now);
  }
  arm_deadline();
}

void Process::on_deadline() {
  std::unique_lock<std::mutex> work(work_mu_);
  for (;;) {
    if (act_on_deadline()) return;
    // The engine's timer woke the loop kTimerLead early: the rest of the
    // way is waited awake, not asleep again, unless the loop has other work
    // (then the timer, armed for the deadline itself, wakes it again). The
    // lock is left meanwhile: a caller in sup_poll reads on.
    const Nanos next = next_deadline();
    const Nanos now = now_ns();
    if (next == kNever || next <= now || next - now > Engine::kTimerLead) {
      arm_deadline();
      return;
    }
    work.unlock();
    const bool interrupted = await_deadline(now, next);
    work.lock();
    if (interrupted) {
      arm_deadline();
      return;
    }
  }
}

// Waits awake, without work_mu_, until deadline; returns true early if
// the loop has other work meanwhile.
bool Process::await_deadline(Nanos now, Nanos deadline) const noexcept {
  // libuv's epoll is readable while any fd the loop watches is ready.
  pollfd loop_work{uv_backend_fd(loop_), POLLIN, 0};
  bool busy = false;
  yield_until(now, deadline - now, [&] { return busy = poll(&loop_work, 1, 0) > 0; });
  return busy;
}

// Acts on every deadline that is due; returns true if nothing is left to
// arm (the process ended, or its exit was handled).
bool Process::act_on_deadline() {
  if (final_on_loop()) return true;
  adopt_caller_signals();
  Nanos now = now_ns();
  if (lifecycle_ == Lifecycle::running) {
    if (main_.exited_now()) {
      on_leader_exit();
      return true;
    }
    // Waiting for input (input_watch.cpp): looked at once output is quiet,
    // when asked; ends the child after input_wait_timeout_ms of it.
    if (escalation_.cause() == Cause::none) {
      look_for_input(now);
      if (ended()) return true;
    }
    // Once sup is ending the child (an interrupt or abort latched), a
    // deadline neither changes the outcome nor cuts the grace short.
    if (escalation_.cause() == Cause::none && now >= deadlines_.silence_deadline(streams_.held_back_read())) {
      // Bytes already in a pipe are activity, even if the loop has not read
      // them yet (it may have been busy): read before calling the child idle.
      for (OutputStream* pipe : streams_.both())
        if (pipe->open() && !read_pipe(*pipe, 1)) {
          close_pipe(*pipe);
        }
      if (ended()) return true;
    }
    TimeoutKind kind;
    if (escalation_.cause() == Cause::none && deadlines_.over(now, streams_.held_back_read(), &kind)) timed_out(kind);
  }
  if (!ended() && escalation_.kill_due(now)) kill_group(now);
  // The pipes after a kill, or the tee copies the host's fd stopped taking
  // (kTeeStall): the rest is dropped.
  if (lifecycle_ == Lifecycle::draining && escalation_.end_waits_over(now)) {
    finish();
    return true;
  }
  return ended();
}

// A limit ran out: the cause, then the interrupt or the kill (on_timeout).
void Process::timed_out(TimeoutKind kind) {
  Nanos now = now_ns();
  escalation_.time_out(kind);
  if (escalation_.on_timeout() == TimeoutAction::kill) {
    if (!escalation_.kill_sent()) kill_group(now);
  } else if (escalation_.stage() == Escalation::none) {
    interrupt_group(now);
  }
}

void Process::arm_deadline() {
  if (ended()) return;
  const Nanos next = next_deadline();
  if (next == kNever)
    engine_.clear_deadline(*this);
  else
    engine_.set_deadline(*this, next);
}

// The earliest deadline still ahead (idle, max runtime, grace, pipe
// drain), or the largest Nanos for none.
Nanos Process::next_deadline() const noexcept {
  if (ended()) return kNever;
  Nanos next = kNever;
  if (lifecycle_ == Lifecycle::running && escalation_.cause() == Cause::none) {
    next = std::min(next, deadlines_.next(streams_.held_back_read()));
    if (!streams_.any_held()) next = std::min(next, input_wait_.next_look(deadlines_.last_activity()));
  }
  return std::min(next, escalation_.next(lifecycle_ == Lifecycle::draining));
}

void Process::interrupt_group(Nanos now) {
  // A child blocked writing to a held-back pipe could not act on the signal
  // (last words, clean exit) within the grace.
  lift_backpressure();
  if (!signals_.close_free_latch()) {
    adopt_caller_signals();  // a caller sent it first
    return;
  }
  const int interrupt_signal = escalation_.interrupt_signal();
  const bool delivered = signal_group(interrupt_signal, now, true);
  if (interrupt_signal == SIGKILL) {
    group_killed(now, delivered);
    return;
  }
  // A stopped process cannot act on the signal until it is continued.
  if (interrupt_signal != SIGCONT) signal_group(SIGCONT, now, false);
  escalation_.interrupt_sent(now);
}

void Process::kill_group(Nanos now) {
  lift_backpressure();
  // No caller interrupt after the kill; one that came first is recorded first.
  signals_.close_free_latch();
  adopt_caller_signals();
  if (escalation_.kill_sent()) return;  // a caller's kill, adopted
  // Timed after the latch closed: an interrupt adopted above was earlier.
  now = std::max(now, now_ns());
  group_killed(now, signal_group(SIGKILL, now, true));
}

// The group has been sent SIGKILL (by whichever thread): escalation done,
// and the pipes waited for only briefly from now on.
// delivered: the SIGKILL reached a process (forced_kill is true only then).
void Process::group_killed(Nanos now, bool delivered) {
  escalation_.killed(now, delivered, lifecycle_ == Lifecycle::draining);
}

// Sends sig (send_to_child); records it if asked and it reached anyone.
// Returns whether it did.
bool Process::signal_group(int sig, Nanos now, bool record) {
  // Cgroup mode: the rest of the tree too (contain.cpp).
  signal_tree_on_loop(sig);
  // The leader stays unreaped until finish(), so its pid is still our group's,
  // unless the host reaped it.
  if (main_.status_lost()) return false;
  const bool delivered = send_to_child(sig, /*answer=*/record);
  if (record && delivered) escalation_.record(sig, now);
  return delivered;
}

}  // namespace sup
