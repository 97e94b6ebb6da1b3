// The escalation's state machine (escalation_state.hpp): none, then the
// interrupt with its grace, then SIGKILL, never back; the cause ranked; the
// waits of the end after a kill or an exit.
#include "escalation_state.hpp"

#include <algorithm>

namespace sup {

EscalationState::EscalationState(Nanos grace, int interrupt_signal, TimeoutAction on_timeout, Nanos called_at)
    : grace_(grace), interrupt_signal_(interrupt_signal), on_timeout_(on_timeout), called_at_(called_at) {
  signals_sent_.reserve(2);
}

void EscalationState::raise(Cause cause) noexcept { cause_ = std::max(cause_, cause); }

void EscalationState::time_out(TimeoutKind kind) noexcept {
  timeout_kind_ = kind;
  raise(Cause::timed_out);
}

void EscalationState::interrupt_sent(Nanos at) noexcept {
  if (stage_ != Escalation::none) return;
  stage_ = Escalation::interrupt_sent;
  kill_at_ = at + grace_;
}

void EscalationState::killed(Nanos now, bool delivered, bool draining) noexcept {
  stage_ = Escalation::kill_sent;
  if (delivered) forced_kill_ = true;
  if (draining) give_up_pipes_at_ = now + kPipeDrainAfterKill;
}

void EscalationState::give_up_pipes_soon(Nanos now) noexcept {
  if (give_up_pipes_at_ == 0) give_up_pipes_at_ = now + kPipeDrainAfterKill;
}

void EscalationState::copies_wait_from(Nanos now) noexcept {
  if (tee_give_up_at_ == 0) tee_give_up_at_ = now + kTeeStall;
}

bool EscalationState::end_waits_over(Nanos now) const noexcept {
  return (give_up_pipes_at_ != 0 && now >= give_up_pipes_at_) || (tee_give_up_at_ != 0 && now >= tee_give_up_at_);
}

Nanos EscalationState::next(bool draining) const noexcept {
  Nanos next = kNever;
  if (stage_ == Escalation::interrupt_sent) next = std::min(next, kill_at_);
  if (draining && give_up_pipes_at_ != 0) next = std::min(next, give_up_pipes_at_);
  if (draining && tee_give_up_at_ != 0) next = std::min(next, tee_give_up_at_);
  return next;
}

void EscalationState::record(int sig, Nanos at) { signals_sent_.push_back({sig, at - called_at_}); }

void EscalationState::sort_signals() {
  std::stable_sort(signals_sent_.begin(), signals_sent_.end(),
                   [](const SignalSent& a, const SignalSent& b) { return a.at < b.at; });
}

}  // namespace sup
