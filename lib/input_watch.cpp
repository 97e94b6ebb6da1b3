// The process's side of waiting for input: when the loop looks at the tree
// (after output has gone quiet), sup_input_wanted's look, the checks for
// a stop on the terminal, and the end once input_wait_timeout_ms or
// tty_stop_timeout_ms has run out. The judging is input_wait.hpp's.
#include <signal.h>
#include <time.h>

#include <algorithm>

#include "process.hpp"
#include "sup.h"

namespace sup {

int Process::input_wanted() {
  if (is_final()) return SUP_ESRCH;
  // From now on the loop looks too, whenever output goes quiet, so that
  // the next call has a look to compare with and the result can say.
  if (input_wait_.ask()) request(kRearm);
  const int cgroup_dir = containment_.cgroup_dir();
  int verdict =
      input_wait_.look(engine_.group_index(), main_.pid(), cgroup_dir, streams_.total_read(), /*blocking=*/true);
  // A reader seen for the first time: asleep now, but it may be fed the
  // next instant. Whether it stays asleep takes a second look.
  if (verdict == 0) {
    const Nanos wait = input_wait_.second_look_in();
    if (wait > 0) {
      const timespec pause{0, static_cast<long>(wait)};
      nanosleep(&pause, nullptr);
      if (!is_final())
        verdict =
            input_wait_.look(engine_.group_index(), main_.pid(), cgroup_dir, streams_.total_read(), /*blocking=*/true);
    }
  }
  // Final meanwhile: the pid looked at may already be another's.
  return is_final() ? SUP_ESRCH : verdict;
}

// Loop thread: a look at the tree or a check for a stop on the terminal
// when one is due, and the end when it has waited for input
// input_wait_timeout_ms, or been stopped tty_stop_timeout_ms.
void Process::look_for_input(Nanos now) {
  if (lifecycle_ != Lifecycle::running || escalation_.cause() != Cause::none || !input_wait_.watching()) return;
  // A look need not come to the ns: one due within the engine's timer lead
  // is taken now, rather than waited for awake (on_deadline), which would
  // cost more than the look. A stream held back: the child is blocked
  // writing, not reading.
  const Nanos due = now + Engine::kTimerLead;
  if (streams_.any_held()) return;
  // "tty_stop_timeout_ms": one waitid, no /proc read.
  if (due >= input_wait_.stop_check_due(deadlines_.last_activity())) {
    const int sig = TtyStop::stop_signal(main_.pidfd());
    input_wait_.stop_checked((sig == SIGTTIN || sig == SIGTTOU) && !caller_stopped_on_terminal(), now_ns());
  }
  // Nothing in the tree ran since the last whole look: nothing was written
  // to the pipes since either, and the verdict stands.
  if (due >= input_wait_.look_due(deadlines_.last_activity()) &&
      input_wait_.look_if_still(streams_.total_read()) == InputWait::kWholeLook) {
    // Bytes already in a pipe are output, even if the loop has not read them.
    for (OutputStream* pipe : streams_.both())
      if (pipe->open() && !pipe->lent() && !read_pipe(*pipe, 1)) close_pipe(*pipe);
    if (ended()) return;
    if (now_ns() + Engine::kTimerLead >= input_wait_.look_due(deadlines_.last_activity()))
      input_wait_.look(engine_.group_index(), main_.pid(), containment_.cgroup_dir(), streams_.total_read(),
                       /*blocking=*/false);
  }
  if (input_wait_.timed_out(now_ns())) timed_out(TimeoutKind::input);
}

// The last of sup_signal's stopping or continuing signals was SIGTTIN or
// SIGTTOU: a stop by either is the caller's, not the terminal's.
bool Process::caller_stopped_on_terminal() const noexcept {
  // sup_signal's records (host_signal.cpp), newest first: the last signal
  // that stops or continues decides. A caller's own SIGTTIN or SIGTTOU is
  // a pause it chose, not a wait for input.
  return signals_.last_stop_on_terminal();
}

}  // namespace sup
