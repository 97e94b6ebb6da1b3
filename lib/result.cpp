// Ending a process's supervision: reaping, deciding the outcome once, and the
// result as JSON.
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "engine.hpp"
#include "json_text.hpp"
#include "process.hpp"
#include "signal_names.hpp"
#include "sup.h"

namespace sup {
namespace {

void append_ms(std::string& out, double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", ms);
  out += buf;
}


}  // namespace

void Process::maybe_finish() {
  if (lifecycle_ == Lifecycle::draining && !out_.open() && !err_.open()) finish();
}

int Process::decide_outcome() const noexcept {
  switch (cause_) {
    case Cause::aborted: return SUP_OUTCOME_ABORTED;
    case Cause::timed_out:
      return timeout_kind_ == TimeoutKind::idle ? SUP_OUTCOME_IDLE_TIMEOUT : SUP_OUTCOME_MAX_RUNTIME;
    case Cause::interrupted: return SUP_OUTCOME_INTERRUPTED;
    case Cause::none: break;
  }
  bool killed = leader_status_.si_code == CLD_KILLED || leader_status_.si_code == CLD_DUMPED;
  return killed ? SUP_OUTCOME_SIGNALED : SUP_OUTCOME_EXITED;
}

void Process::finish() {
  if (lifecycle_ == Lifecycle::final) return;
  // From here the leader may be reaped and its pid reused: no caller may
  // signal the group any more, and one inside kill_from_caller's window
  // leaves it within a system call.
  caller_kills_.fetch_or(kReaping, std::memory_order_acq_rel);
  while ((caller_kills_.load(std::memory_order_acquire) & ~kReaping) != 0) sched_yield();
  adopt_caller_signals();
  // What is left in the group without holding our pipes cannot be seen
  // without scanning /proc, and keeping the leader for a grace period after
  // every run would cost a pid and an fd per finished child: it gets SIGKILL
  // now, while the unreaped leader still pins the group id.
  if (!status_lost_ && escalation_ != Escalation::kill_sent) kill(-pid_, SIGKILL);
  Nanos now = now_ns();
  hand_back_terminal();
  lifecycle_ = Lifecycle::final;

  Result r;
  r.outcome = decide_outcome();
  if (status_lost_)
    r.status_lost = true;
  else if (leader_status_.si_code == CLD_EXITED)
    r.exit_code = leader_status_.si_status;
  else
    r.term_signal = leader_status_.si_status;
  r.forced_kill = forced_kill_;
  r.duration = now - spawned_at_;
  r.signals_sent = std::move(signals_sent_);
  r.usage = leader_usage_;
  // The caller is waiting for this: publish first, tear down after. The
  // status and rusage came from waitid(WNOWAIT); reaping the zombie took
  // 8-9 us of the time from exit to result. sup_release waits for it.
  publish(std::move(r));
  if (!status_lost_) {
    siginfo_t reaped{};
    syscall(SYS_waitid, P_PIDFD, pidfd_.get(), &reaped, WEXITED | __WALL, nullptr);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    reaped_ = true;
  }
  changed_.notify_all();  // a releasing thread; no system call without one

  exit_watch_.close();
  engine_.clear_deadline(*this);
  close_pipe(out_);
  close_pipe(err_);
  close_stdin();
  pidfd_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  flatten_kept();
}

void Process::publish(Result&& r) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    result_ = std::move(r);
    published_.store(true, std::memory_order_release);
    if (event_fd_.valid()) {
      uint64_t one = 1;
      (void)!write(event_fd_.get(), &one, sizeof one);
    }
    signal_ready(out_);
    signal_ready(err_);
  }
  changed_.notify_all();
}

void Process::shutdown() {
  if (lifecycle_ == Lifecycle::final) return;
  adopt_caller_signals();
  if (lifecycle_ == Lifecycle::running) {
    cause_ = std::max(cause_, Cause::aborted);
    if (escalation_ != Escalation::kill_sent) kill_group(now_ns());
    // Blocking: SIGKILL takes effect promptly and the library is going away.
    await_leader_exit();
    leader_exited_now();
    lifecycle_ = Lifecycle::draining;
  }
  constexpr int kLastReads = 16;
  for (OutputPipe* pipe : {&out_, &err_})
    if (pipe->open()) read_pipe(*pipe, kLastReads);
  finish();
}

std::string Process::build_result_json() const {
  const Result& r = result_;
  std::string j;
  // Sized exactly, by a counting pass over the kept bytes: escapes make the
  // text up to six times longer than the bytes, and growing by doubling
  // left up to as much again unused (32 MiB for 16 MiB of log lines).
  const KeptText out_text(out_.capture), err_text(err_.capture);
  j.reserve(512 + stream_json_length(out_.capture, out_text) + stream_json_length(err_.capture, err_text) +
            64 * r.signals_sent.size());
  j += "{\"outcome\": \"";
  j += sup_outcome_name(r.outcome);
  j += "\", \"exit_code\": ";
  j += r.exit_code ? std::to_string(*r.exit_code) : "null";
  j += ", \"term_signal\": ";
  if (r.term_signal)
    append_json_string(j, signal_name(*r.term_signal));
  else
    j += "null";
  j += ", \"status_lost\": ";
  j += r.status_lost ? "true" : "false";
  j += ", \"forced_kill\": ";
  j += r.forced_kill ? "true" : "false";
  j += ", \"pid\": " + std::to_string(pid_);
  j += ", \"duration_ms\": ";
  append_ms(j, ns_to_ms(r.duration));
  j += ", \"stdout\": ";
  append_stream_json(j, out_.capture, out_text);
  j += ", \"stderr\": ";
  append_stream_json(j, err_.capture, err_text);
  j += ", \"signals_sent\": [";
  for (size_t i = 0; i < r.signals_sent.size(); ++i) {
    if (i > 0) j += ", ";
    j += "{\"signal\": ";
    append_json_string(j, signal_name(r.signals_sent[i].signal));
    j += ", \"at_ms\": ";
    append_ms(j, ns_to_ms(r.signals_sent[i].at));
    j += "}";
  }
  j += "], \"rusage\": {\"user_ms\": ";
  append_ms(j, timeval_ms(r.usage.ru_utime));
  j += ", \"sys_ms\": ";
  append_ms(j, timeval_ms(r.usage.ru_stime));
  j += ", \"max_rss_kb\": " + std::to_string(r.usage.ru_maxrss) + "}}";
  return j;
}

}  // namespace sup
