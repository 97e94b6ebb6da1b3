// A Process's life as API threads see it: taking over its cloned child,
// latching requests, the result's text and kept bytes, and the caller's
// part of its release. (Waiting: caller_wait.cpp; live output:
// direct_read.cpp.)
#include "process.hpp"

#include "engine.hpp"
#include "event_fd.hpp"
#include "sup.h"

namespace sup {

// called_at: when sup_spawn was called, the instant max_runtime, at_ms and
// duration_ms count from, so that none is late by what comes before the
// clone (the hand-off to the spawner, a wait behind another child's slow
// chdir). The first idle period starts at the exec instead (adopt_child): a
// child is not silent before it exists.
Process::Process(Engine& engine, const Spec& spec, Nanos called_at, ChildSetup setup)
    : handle_(Engine::fork_generation()),
      engine_(engine),
      called_at_(called_at),
      streams_(spec, engine.read_buffer_size(), mu_, changed_),
      deadlines_(spec.idle_timeout_ms * kNanosPerMs, spec.first_output_timeout_ms * kNanosPerMs,
                 spec.max_runtime_ms * kNanosPerMs, called_at),
      escalation_(spec.grace_ms * kNanosPerMs, spec.interrupt_signal, spec.on_timeout, called_at),
      input_wait_(spec.input_wait_timeout_ms * kNanosPerMs, spec.tty_stop_timeout_ms * kNanosPerMs, spec.pty),
      input_(spec.stdin_mode == StdinMode::pipe || spec.pty, spec.pty,
             spec.stdin_mode == StdinMode::data ? spec.stdin_data : std::string()) {
  // What the loop thread would otherwise allocate, made here, where running
  // out of memory is an error the caller gets (SUP_ENOMEM): the signals'
  // room is reserved by escalation_, the tee's by streams_.
  input_wait_.set_stdin(setup.stdin_file);
  input_.set_host_end(std::move(setup.input));
  containment_.set(std::move(setup.cgroup), std::move(setup.contain_fallback));
  confine_ = std::move(setup.confinement);
  host_terminal_.set_grant(setup.foreground);
}

// Only the loop thread frees a process (or the releasing thread once the
// engine is gone), after it became final: every handle is closed already.
Process::~Process() = default;

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
  containment_.set_host_death(covered);
  fds.child_out.reset();
  fds.child_err.reset();
  fds.child_stdin.reset();
  if (fds.tty.valid() && !child.took_terminal) {
    fds.tty.reset();
    // The child's last-moment refusal: "tty_foreground" as it went.
    host_terminal_.set_grant(ForegroundGrant{true, kLeftForeground});
  }
  // What is known of the child: the loop takes the descriptors over in
  // start().
  deadlines_.launched(child.started_at);
  streams_.out().attach(std::move(fds.out_read));
  streams_.err().attach(std::move(fds.err_read));
  input_.feed_from(std::move(fds.stdin_write));
  host_terminal_.lend(std::move(fds.tty), fds.host_pgrp);
  {
    std::lock_guard<std::mutex> lock(mu_);
    main_.launched(child.pid, std::move(child.pidfd));
  }
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
  if (input_.feeding() || host_terminal_.lent() || streams_.any_tee() || streams_.backpressure().configured() ||
      requests_.pending())
    return now;
  const Nanos deadline = next_deadline();
  if (deadline <= now + kLazyStart + kDeadlineMargin) return now;
  return now + kLazyStart;
}

// For a caller that waits on the process some other way than sup_poll's
// (sup_fd, the output calls, a timed-out or non-blocking sup_poll). At
// most one wake-up per process.
void Process::need_loop() noexcept {
  if (requests_.ask_start()) engine_.wake_loop();
}

int Process::request(unsigned bits, Nanos wake_by) noexcept {
  if (is_final()) return 1;
  requests_.latch(bits);
  engine_.wake_for(*this, wake_by);
  return 0;
}

int Process::event_fd() {
  std::lock_guard<std::mutex> lock(mu_);
  const int fd = result_.event_fd();
  return fd < 0 ? made_fd_error(-fd) : fd;
}

std::string_view Process::kept_output(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.flatten(is_final());
  return streams_.kept(stream, result_.text_if_made());
}

const std::string& Process::result_json() {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.flatten(is_final());
  if (!result_.has_text()) build_result_json();
  return result_.text();
}

// sup_release, the caller's part of the end: aborts if running, waits
// for the reap and for every other call to leave. The engine then frees
// the process (Engine::dispose), as it does every process it spawned.
void Process::release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    handle_.release();
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
    yield_until(now_ns(), CallerDrivers::kAwakeWait, [this] { return main_.reaped(); });
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return main_.reaped(); });
  }
  // Calls still inside (woken above, or about to notice it) leave within
  // microseconds; none can begin any more.
  handle_.wait_unpinned();
  input_.release();
  // The child's private "tmp" goes with its handle, on this thread: the
  // loop, which frees the process, is never held up by a large tree.
  if (confine_) confine_->remove_tmp();
}

// sup_release in a forked child, before the engine frees the memory:
// forgets what belongs to the parent's loop, closing nothing of libuv's.
void Process::abandon() noexcept {
  // The loop that owns these handles has no thread here; closing them would
  // run libuv on a dead loop.
  main_.watch().forget();
  input_.feed_watch().forget();
  // The parent's cgroup is the parent's to end and remove.
  containment_.disown();
  for (OutputStream* pipe : streams_.both()) {
    pipe->watch().forget();
    pipe->tee_watch().forget();
  }
}

}  // namespace sup
