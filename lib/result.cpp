// Ending a process's supervision: reaping, deciding the outcome once, and the
// result as JSON.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cinttypes>
#include <cstring>

#include "engine.hpp"
#include "json_text.hpp"
#include "process.hpp"
#include "sup.h"

namespace sup {

void Process::maybe_finish() {
  if (lifecycle_ == Lifecycle::draining && !streams_.any_open()) finish_after_copies();
}

// publish_final, then tear_down.
void Process::finish() {
  if (ended()) return;
  publish_final();
  // A caller woken by the same exit is often runnable on this CPU, behind
  // this thread: the result is its at once, the reap and the closing after.
  if (drivers_.exit_awaited()) sched_yield();
  tear_down();
}

// The result decided and published, the main process not yet reaped. On
// the loop thread, or a caller's (finish_from_caller), under work_mu_.
void Process::publish_final() {
  // From here the leader may be reaped and its pid reused: no caller may
  // signal the group any more, and one inside kill_from_caller's window
  // leaves it within a system call.
  signals_.close_for_reap();
  adopt_caller_signals();
  // What is left in the group without holding our pipes cannot be seen
  // without scanning /proc, and keeping the leader for a grace period after
  // every run would cost a pid and an fd per finished child: it gets SIGKILL
  // now, while the unreaped leader still pins the group id.
  if (!main_.status_lost() && !escalation_.kill_sent()) send_to_child(SIGKILL, /*answer=*/false);
  Nanos now = now_ns();
  host_terminal_.hand_back(main_.pid());
  lifecycle_ = Lifecycle::final;

  Result r;
  ResultBuilder::decide(r, escalation_.cause(), escalation_.timeout_kind(), main_.status(), main_.status_lost());
  r.forced_kill = escalation_.forced_kill();
  order_signals_sent();
  // Whether it was waiting for input when it ended: when the first signal
  // went to it (sup's, or a caller's), else at its exit, as seen now.
  const std::vector<SignalSent>& sent = escalation_.signals();
  const Nanos ended_at = sent.empty() ? now : called_at_ + sent.front().at;
  r.waiting_for_input =
      input_wait_.at_end(ended_at, deadlines_.last_activity(), escalation_.cause() == Cause::none && sent.empty());
  r.duration = now - called_at_;
  r.signals_sent = escalation_.take_signals();
  r.usage = main_.usage();
  // Before the close removes the cgroup, whose event counts say it.
  if (confine_ && !main_.status_lost()) r.limit = confine_->limit_hit(main_.status(), main_.usage(), containment_.cgroup());
  r.foreground = host_terminal_.grant();
  containment_.close(main_.pid(), r);
  // The caller is waiting for this: publish first, tear down after. The
  // status and rusage came from waitid(WNOWAIT); reaping the zombie took
  // 8-9 us of the time from exit to result. sup_release waits for it.
  publish(std::move(r));
}

// The main process's zombie, once final: by tear_down, or by sup_release
// on the caller's thread when the loop has not come to it yet.
void Process::reap() noexcept {
  if (main_.reaped()) return;
  // Group mode: the sentinel forgets the group while the zombie still
  // holds its id.
  if (!containment_.in_cgroup()) engine_.sentinel().forget_group(main_.pid());
  main_.reap();
  {
    std::lock_guard<std::mutex> lock(mu_);
    main_.mark_reaped();
  }
  changed_.notify_all();  // a releasing thread; no system call without one
}

// Reaps, closes the watches, pipes and pidfd, and drops the deadline: the
// loop thread's part of the end, once. After publish_final.
void Process::tear_down() noexcept {
  if (lifecycle_ == Lifecycle::closed) return;
  lifecycle_ = Lifecycle::closed;
  // After a caller's finish the zombie keeps the pidfd readable: the loop
  // is woken for this within Engine::kLazyWithin, unless sup_release
  // reaped it first.
  reap();
  main_.watch().close();
  engine_.clear_deadline(*this);
  engine_.drop_lease(*this);
  close_pipe(streams_.out());
  close_pipe(streams_.err());
  close_stdin();
  streams_.close_tees();
  std::lock_guard<std::mutex> lock(mu_);
  drivers_.retire(main_.pidfd_slot());
  streams_.flatten(is_final());
}

// Every loop-thread entry (the engine's calls above, the watches'
// callbacks) holds work_mu_ and first calls this: a process a caller
// finished meanwhile is only torn down. Returns true if final.
bool Process::final_on_loop() noexcept {
  if (!ended()) return false;
  tear_down();
  return true;
}

// Lifetimes::free_released: what a caller's finish left open is closed
// (the process is final by then).
void Process::before_disposal() noexcept {
  std::lock_guard<std::mutex> work(work_mu_);
  final_on_loop();
}

void Process::publish(Result&& r) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    result_.publish(std::move(r));
    streams_.signal_final();
  }
  changed_.notify_all();
}

// Library shutdown: kill, reap and publish now, whatever the state.
void Process::shutdown() {
  std::lock_guard<std::mutex> work(work_mu_);
  if (final_on_loop()) return;
  adopt_caller_signals();
  if (lifecycle_ == Lifecycle::running) {
    escalation_.raise(Cause::aborted);
    if (!escalation_.kill_sent()) kill_group(now_ns());
    // Blocking: SIGKILL takes effect promptly and the library is going away.
    main_.await_exit();
    main_.exited_now();
    lifecycle_ = Lifecycle::draining;
  }
  constexpr int kLastReads = 16;
  for (OutputStream* pipe : streams_.both())
    if (pipe->open()) read_pipe(*pipe, kLastReads);
  finish();
}

// The result's text (ResultBuilder), moving large kept bytes into it
// (result.cpp).
void Process::build_result_json() {
  // Everything that allocates comes first: the small parts, and the
  // streams' measures. The text is then reserved exactly (escapes make it up
  // to six times longer than the bytes; growing by doubling left up to as
  // much again unused) and written without a reallocation, so nothing can
  // throw once a stream's bytes begin to move into it.
  const std::string head = result_.head(main_.pid());
  const char* between = ResultBuilder::kBetweenStreams;
  const std::string rest = result_.rest(containment_, confine_ ? confine_->json() : std::string("null"));
  auto tee_error = [](const OutputStream& pipe) -> const char* {
    return pipe.tee_errno() != 0 ? strerrorname_np(pipe.tee_errno()) : nullptr;
  };
  OutputStream& out = streams_.out();
  OutputStream& err = streams_.err();
  StreamJson out_json(out.capture(), out.routed(), tee_error(out));
  StreamJson err_json(err.capture(), err.routed(), tee_error(err));
  std::string j;
  j.reserve(head.size() + out_json.length() + std::strlen(between) + err_json.length() + rest.size());
  j += head;
  streams_.append_json(j, out, out_json);
  j += between;
  streams_.append_json(j, err, err_json);
  j += rest;
  result_.set_text(std::move(j));
}

}  // namespace sup
