// A Process's life as API threads see it: taking over its cloned child,
// latching requests, reading live output, and the caller's part of its
// release. (Waiting: caller_wait.cpp.)
#include "process.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <new>
#include <thread>

#include "engine.hpp"
#include "sup.h"

namespace sup {
namespace {

// A descriptor the handle makes on demand (eventfd) could not be made: the
// host is out of descriptors (its own table or the system's), or of kernel
// memory. Only the codes the header lists for these calls.
int fd_error(int err) noexcept { return err == EMFILE || err == ENFILE ? SUP_EMFILE : SUP_ENOMEM; }

}  // namespace

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

int64_t Process::read_output(int stream, uint64_t* pos, char* buf, size_t cap) {
  OutputStream& pipe = streams_.of(stream);
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
        streams_.bring_back(pipe, result_.text());
      } catch (const std::bad_alloc&) {
        return SUP_ENOMEM;
      }
    }
    n = capture.lent() ? 0 : capture.read_at(pos, buf, cap);
    if (n > 0) pipe.note_read(now_ns());
    caught_up = n == 0 && *pos == capture.total();
    pipe.reader_at(*pos);
    resume = pipe.held() && streams_.backpressure().may_resume(pipe.unread());
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
  OutputStream& pipe = streams_.of(stream);
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

int Process::event_fd() {
  std::lock_guard<std::mutex> lock(mu_);
  const int fd = result_.event_fd();
  return fd < 0 ? fd_error(-fd) : fd;
}

std::string_view Process::kept_output(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.flatten(is_final());
  return streams_.kept(stream, result_.text());
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
