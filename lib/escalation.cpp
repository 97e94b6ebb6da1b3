// Deadlines and the interrupt-then-kill escalation, as Process acts on them:
// the signals, the callers' latches, the exit. One timer per process
// carries the earliest of its deadlines (idle, max runtime, grace, pipe
// drain); reads only move the idle clock (deadlines.hpp), and the timer
// recomputes when it fires, so there are never two timers racing. The
// state is the parts' (deadlines.hpp, escalation_state.hpp).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "dirents.hpp"
#include "engine.hpp"
#include "process.hpp"

namespace sup {
namespace {

// True if a process other than a zombie is in process group pgid: a scan of
// /proc with raw system calls only (async-signal-safe, no allocation).
bool group_has_living_member(pid_t pgid) noexcept {
  int dir = static_cast<int>(syscall(SYS_open, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) return true;  // cannot tell: the kernel's word stands
  bool found = false;
  for_each_dirent(dir, [&](const char* name, unsigned char) {
    if (name[0] < '1' || name[0] > '9') return true;
    char path[64] = "/proc/";
    size_t len = 6;
    for (const char* c = name; *c != '\0' && len < 40; ++c) path[len++] = *c;
    const char tail[] = "/stat";
    for (char c : tail) path[len++] = c;
    int fd = fd_above_stdio(static_cast<int>(syscall(SYS_openat, dir, path + 6, O_RDONLY | O_CLOEXEC)));
    if (fd < 0) return true;
    char stat[512];
    long got = syscall(SYS_read, fd, stat, sizeof stat - 1);
    syscall(SYS_close, fd);
    if (got <= 0) return true;
    stat[got] = '\0';
    // "pid (comm) S ppid pgrp ...": comm may hold anything but ends at the
    // last ')'.
    const char* close = nullptr;
    for (const char* c = stat; *c != '\0'; ++c)
      if (*c == ')') close = c;
    if (close == nullptr || close[1] != ' ' || close[2] == '\0') return true;
    const char state = close[2];
    // " S ppid pgrp ...": past the state and the parent's pid.
    const char* field = close + 3;
    while (*field == ' ') ++field;
    while (*field != '\0' && *field != ' ') ++field;
    while (*field == ' ') ++field;
    long pgrp = 0;
    while (*field >= '0' && *field <= '9') pgrp = pgrp * 10 + (*field++ - '0');
    found = pgrp == pgid && state != 'Z' && state != 'X';
    return !found;
  });
  syscall(SYS_close, dir);
  return found;
}

}  // namespace

bool Process::leader_exited_now() {
  // WNOWAIT keeps the leader a zombie: its pid, and so the process group id,
  // cannot be reused while we may still signal the group.
  siginfo_t info{};
  struct rusage usage {};
  long rc = syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &info,
                    WEXITED | WNOHANG | WNOWAIT | __WALL, &usage);
  if (rc < 0) {
    if (errno == EINTR) return false;
    // Our children are the host's children: a host that ignores SIGCHLD (the
    // kernel then reaps them) or reaps any child took this one.
    status_lost_ = true;
    info = siginfo_t{};
  } else if (info.si_pid == 0) {
    return false;
  }
  leader_status_ = info;
  leader_usage_ = usage;
  return true;
}

bool Process::exit_shows() const noexcept {
  pollfd exited{pidfd_.get(), POLLIN, 0};
  return poll(&exited, 1, 0) > 0;
}

void Process::await_leader_exit() {
  pollfd exited{pidfd_.get(), POLLIN, 0};
  while (poll(&exited, 1, -1) < 0 && errno == EINTR) {
  }
}

bool Process::enter_caller_window() noexcept {
  unsigned before = caller_kills_.fetch_add(1, std::memory_order_acq_rel);
  // Once the loop has set kReaping it may reap the leader, whose pid, so the
  // group id, may then go to a stranger. Before that, pidfd_ and the group id
  // are still ours.
  if ((before & kReaping) != 0 || caller_kill_at_.load(std::memory_order_acquire) != 0) return false;
  // Only a main process that still runs: one that exited by itself is not
  // ended by us (the exit race, as in handle_requests), and one the host
  // reaped (waitid fails) may have lent its pid to a stranger.
  siginfo_t info{};
  long rc = syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &info, WEXITED | WNOHANG | WNOWAIT | __WALL, nullptr);
  return rc == 0 && info.si_pid == 0;
}

void Process::leave_caller_window() noexcept { caller_kills_.fetch_sub(1, std::memory_order_acq_rel); }

bool Process::kill_from_caller() noexcept {
  int saved_errno = errno;  // a signal handler's caller keeps its errno
  bool on_record = false;
  if (enter_caller_window()) {
    // No interrupt after the kill: a caller still on its way is turned back.
    // Closed before the kill's time is taken, so that an interrupt that got
    // in first also has the earlier time.
    take_interrupt_latch();
    // Stamped before the signal: the loop never sees the death without it.
    // Two callers racing send one kill.
    Nanos none = 0;
    on_record = true;
    if (caller_kill_at_.compare_exchange_strong(none, now_ns(), std::memory_order_acq_rel)) {
      const bool delivered = send_to_child(SIGKILL);
      signal_tree(SIGKILL, 0, true);  // cgroup mode: the rest of the tree
      if (!delivered) {
        // Reached nobody (the main process ended meanwhile): not on record;
        // the loop decides the end as for any exit.
        caller_kill_at_.store(0, std::memory_order_release);
        on_record = false;
      }
    }
  }
  leave_caller_window();
  errno = saved_errno;
  return on_record;
}

Nanos Process::interrupt_from_caller() noexcept {
  // An interrupt signal of SIGKILL is a kill: the loop sends it, so that
  // the group is never killed twice over by two paths.
  const int interrupt_signal = escalation_.interrupt_signal();
  if (interrupt_signal == SIGKILL) return 0;
  if (interrupt_latch_.load(std::memory_order_acquire) != 0) return 0;  // sent already
  int saved_errno = errno;
  Nanos sent_at = 0;
  if (enter_caller_window()) {
    // Whoever takes the latch sends the interrupt: this caller, another, or
    // the loop (a timeout, a leftover group); it is never sent twice.
    Nanos free = 0;
    const Nanos now = now_ns();
    if (interrupt_latch_.compare_exchange_strong(free, now, std::memory_order_acq_rel)) {
      if (send_to_child(interrupt_signal)) {
        // A stopped process cannot act on the signal until it is continued.
        if (interrupt_signal != SIGCONT) send_to_child(SIGCONT, /*answer=*/false);
        // Cgroup mode: the rest of the tree too (contain.cpp).
        signal_tree(interrupt_signal, interrupt_signal != SIGCONT ? SIGCONT : 0, true);
        sent_at = now;
      } else {
        // Reached nobody: not sent, so not on record (the latch stays
        // closed: the main process has ended).
        interrupt_latch_.store(kLatchClosed, std::memory_order_release);
      }
    }
  }
  leave_caller_window();
  errno = saved_errno;
  return sent_at;
}

int Process::request_interrupt(Nanos sent_at) noexcept {
  // Most children end within microseconds of the signal, and the loop
  // adopts the interrupt when it sees that exit. Woken now, it would only
  // arm the grace's kill, on a CPU the dying child needs (interrupt to
  // result at p50: 1.29x -> 1.21x the raw kill + pidfd poll, mean of 6
  // alternating runs); it is woken by the grace's end. Not under
  // backpressure: a held-back child may need its pipe read at once to say
  // its last words.
  const bool can_wait = sent_at != 0 && backpressure_bytes_ == 0;
  return request(kInterrupt, can_wait ? sent_at + escalation_.grace() : 0);
}

bool Process::take_interrupt_latch() noexcept {
  Nanos free = 0;
  return interrupt_latch_.compare_exchange_strong(free, kLatchClosed, std::memory_order_acq_rel);
}

void Process::adopt_caller_signals() {
  if (ended()) return;
  adopt_host_signals();
  Nanos kill_at = caller_kill_at_.load(std::memory_order_acquire);
  if (escalation_.kill_sent()) kill_at = 0;  // the loop's, or adopted already
  // A kill closes the latch (kill_from_caller did so already): a caller's
  // interrupt still in it came before the kill, and is recorded before it.
  if (kill_at != 0) take_interrupt_latch();
  Nanos interrupt_at = interrupt_latch_.load(std::memory_order_acquire);
  if (interrupt_at > 0) adopt_caller_interrupt(interrupt_at);
  if (kill_at != 0) {
    // The caller saw the main process running when it sent the kill
    // (enter_caller_window): its request decides the outcome, even if the
    // loop has seen the exit since. Recorded as sent, it was sent.
    escalation_.raise(Cause::aborted);
    lift_backpressure();
    escalation_.record(SIGKILL, kill_at);
    group_killed(now_ns(), /*delivered=*/true);
  }
}

void Process::adopt_caller_interrupt(Nanos at) {
  // Callers only take a free latch, so the loop may close it: adopted once.
  interrupt_latch_.store(kLatchClosed, std::memory_order_release);
  // The caller saw the main process running when it sent the signal, as in
  // adopt_caller_signals: the outcome is the interrupt's.
  escalation_.raise(Cause::interrupted);
  lift_backpressure();
  escalation_.record(escalation_.interrupt_signal(), at);
  escalation_.interrupt_sent(at);
}

void Process::on_leader_exit() {
  adopt_caller_signals();
  if (lifecycle_ != Lifecycle::running || !leader_exited_now()) return;
  leader_gone();
}

void Process::leader_gone() {
  lifecycle_ = Lifecycle::draining;
  host_terminal_.hand_back(pid_);
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
  bool out_done = !out_.open() || drain_pipe(out_);
  bool err_done = !err_.open() || drain_pipe(err_);
  // Both at EOF, as whenever nothing outlived the main process: the caller
  // waits for the result, and finish() closes the pipes and the exit watch
  // after publishing it.
  if (out_done && err_done) {
    finish_after_copies();
    return;
  }
  // The pidfd stays readable: stop watching it, or the loop would spin.
  exit_watch_.close();
  if (out_done) close_pipe(out_);
  if (err_done) close_pipe(err_);
  Nanos now = now_ns();
  if (escalation_.kill_sent() || status_lost_ || containment_.tree_ended()) {
    // With the leader reaped elsewhere the group can no longer be signaled
    // safely: wait for the pipes as briefly as after a SIGKILL.
    escalation_.give_up_pipes_soon(now);
  } else if (escalation_.stage() == Escalation::none) {
    // A pipe still open after the drain is held by something the main
    // process left behind.
    if (out_.open() || err_.open()) interrupt_group(now);
  }
  arm_deadline();
}

void Process::handle_requests() {
  std::lock_guard<std::mutex> work(work_mu_);
  if (final_on_loop()) {
    requests_.store(0);
    return;
  }
  handle_requests_locked();
}

void Process::handle_requests_locked() {
  if (loop_ == nullptr) return;  // not started yet: start() comes back for them
  unsigned bits = requests_.exchange(0);
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
  if (lifecycle_ == Lifecycle::running && leader_exited_now()) {
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

bool Process::await_deadline(Nanos now, Nanos deadline) const noexcept {
  // libuv's epoll is readable while any fd the loop watches is ready.
  pollfd loop_work{uv_backend_fd(loop_), POLLIN, 0};
  bool busy = false;
  yield_until(now, deadline - now, [&] { return busy = poll(&loop_work, 1, 0) > 0; });
  return busy;
}

bool Process::act_on_deadline() {
  if (final_on_loop()) return true;
  adopt_caller_signals();
  Nanos now = now_ns();
  if (lifecycle_ == Lifecycle::running) {
    if (leader_exited_now()) {
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
    if (escalation_.cause() == Cause::none && now >= deadlines_.silence_deadline(held_back_read())) {
      // Bytes already in a pipe are activity, even if the loop has not read
      // them yet (it may have been busy): read before calling the child idle.
      for (OutputPipe* pipe : {&out_, &err_})
        if (pipe->open() && !read_pipe(*pipe, 1)) {
          close_pipe(*pipe);
        }
      if (ended()) return true;
    }
    TimeoutKind kind;
    if (escalation_.cause() == Cause::none && deadlines_.over(now, held_back_read(), &kind)) timed_out(kind);
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

Nanos Process::next_deadline() const noexcept {
  if (ended()) return kNever;
  Nanos next = kNever;
  if (lifecycle_ == Lifecycle::running && escalation_.cause() == Cause::none) {
    next = std::min(next, deadlines_.next(held_back_read()));
    if (!any_held_back()) next = std::min(next, input_wait_.next_look(deadlines_.last_activity()));
  }
  return std::min(next, escalation_.next(lifecycle_ == Lifecycle::draining));
}

void Process::interrupt_group(Nanos now) {
  // A child blocked writing to a held-back pipe could not act on the signal
  // (last words, clean exit) within the grace.
  lift_backpressure();
  if (!take_interrupt_latch()) {
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
  take_interrupt_latch();
  adopt_caller_signals();
  if (escalation_.kill_sent()) return;  // a caller's kill, adopted
  // Timed after the latch closed: an interrupt adopted above was earlier.
  now = std::max(now, now_ns());
  group_killed(now, signal_group(SIGKILL, now, true));
}

void Process::group_killed(Nanos now, bool delivered) {
  escalation_.killed(now, delivered, lifecycle_ == Lifecycle::draining);
}

bool Process::signal_group(int sig, Nanos now, bool record) {
  // Cgroup mode: the rest of the tree too (contain.cpp).
  signal_tree_on_loop(sig);
  // The leader stays unreaped until finish(), so -pid_ is still our group,
  // unless the host reaped it.
  if (status_lost_) return false;
  const bool delivered = send_to_child(sig, /*answer=*/record);
  if (record && delivered) escalation_.record(sig, now);
  return delivered;
}

bool Process::send_to_child(int sig, bool answer) noexcept {
  // Before the send: a main process that has exited is a zombie, which a
  // group kill "reaches" as well, and which must not count; what else is in
  // the group is looked at before the send too (a SIGKILL leaves no one
  // alive to find), and only when the answer is wanted (a /proc scan).
  const bool main_exited = exit_shows();
  const bool someone_alive = !main_exited || !answer || group_has_living_member(pid_);
  bool delivered = kill(-pid_, sig) == 0 && someone_alive;
  // A main process that left its group (setpgid, a shell doing job
  // control) is reached through its pidfd. Only then: one still in the
  // group has had the signal, and a handler would run twice.
  if (!main_exited && getpgid(pid_) != pid_ &&
      syscall(SYS_pidfd_send_signal, pidfd_.get(), sig, nullptr, 0) == 0)
    delivered = true;
  return delivered;
}

}  // namespace sup
