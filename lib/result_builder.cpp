// One child's result (result_builder.hpp): the outcome's decision, and the
// record's JSON text.
#include "result_builder.hpp"

#include <sys/wait.h>

#include <cerrno>

#include "event_fd.hpp"
#include "json_text.hpp"
#include "signal_names.hpp"
#include "sup.h"

namespace sup {

void ResultBuilder::publish(Result&& r) noexcept {
  record_ = std::move(r);
  published_.store(true, std::memory_order_release);
  if (event_fd_.valid()) set_readable(event_fd_.get());
}

int ResultBuilder::event_fd() noexcept {
  if (!event_fd_.valid()) {
    const int fd = make_event_fd();
    if (fd < 0) return -errno;
    event_fd_.reset(fd);
    if (published()) set_readable(fd);
  }
  return event_fd_.get();
}

void ResultBuilder::decide(Result& r, Cause cause, TimeoutKind kind, const siginfo_t& status,
                           bool status_lost) noexcept {
  switch (cause) {
    case Cause::aborted: r.outcome = SUP_OUTCOME_ABORTED; break;
    case Cause::timed_out:
      r.outcome = kind == TimeoutKind::max_runtime ? SUP_OUTCOME_MAX_RUNTIME : SUP_OUTCOME_IDLE_TIMEOUT;
      break;
    case Cause::interrupted: r.outcome = SUP_OUTCOME_INTERRUPTED; break;
    case Cause::none: {
      const bool killed = status.si_code == CLD_KILLED || status.si_code == CLD_DUMPED;
      r.outcome = killed ? SUP_OUTCOME_SIGNALED : SUP_OUTCOME_EXITED;
      break;
    }
  }
  if (status_lost)
    r.status_lost = true;
  else if (status.si_code == CLD_EXITED)
    r.exit_code = status.si_status;
  else
    r.term_signal = status.si_status;
  if (r.outcome == SUP_OUTCOME_IDLE_TIMEOUT)
    r.phase = kind == TimeoutKind::first_output ? SUP_PHASE_FIRST_OUTPUT
              : kind == TimeoutKind::input      ? SUP_PHASE_INPUT
                                                : SUP_PHASE_IDLE;
}

std::string ResultBuilder::head(pid_t pid) const {
  const Result& r = record_;
  // Sized for the longest of each part, so that neither reallocates.
  std::string head;
  head.reserve(256);
  head += "{\"outcome\": \"";
  head += sup_outcome_name(r.outcome);
  head += "\", \"phase\": ";
  head += r.phase == SUP_PHASE_FIRST_OUTPUT ? "\"first_output\""
          : r.phase == SUP_PHASE_IDLE       ? "\"idle\""
          : r.phase == SUP_PHASE_INPUT      ? "\"input\""
                                            : "null";
  head += ", \"exit_code\": ";
  if (r.exit_code)
    append_decimal(head, *r.exit_code);
  else
    head += "null";
  head += ", \"term_signal\": ";
  if (r.term_signal)
    append_json_string(head, signal_name(*r.term_signal));
  else
    head += "null";
  head += ", \"status_lost\": ";
  head += r.status_lost ? "true" : "false";
  head += ", \"forced_kill\": ";
  head += r.forced_kill ? "true" : "false";
  head += ", \"pid\": ";
  append_decimal(head, pid);
  head += ", \"duration_ms\": ";
  append_ms(head, ns_to_us(r.duration));
  head += ", \"stdout\": ";
  return head;
}

std::string ResultBuilder::rest(const Containment& containment, const std::string& confined) const {
  const Result& r = record_;
  std::string rest;
  rest.reserve(416 + 64 * r.signals_sent.size());
  rest += ", \"signals_sent\": [";
  for (size_t i = 0; i < r.signals_sent.size(); ++i) {
    if (i > 0) rest += ", ";
    rest += "{\"signal\": ";
    append_json_string(rest, signal_name(r.signals_sent[i].signal));
    rest += ", \"at_ms\": ";
    append_ms(rest, ns_to_us(r.signals_sent[i].at));
    rest += "}";
  }
  rest += "], \"rusage\": {\"user_ms\": ";
  append_ms(rest, timeval_us(r.usage.ru_utime));
  rest += ", \"sys_ms\": ";
  append_ms(rest, timeval_us(r.usage.ru_stime));
  rest += ", \"max_rss_kb\": ";
  append_decimal(rest, r.usage.ru_maxrss);
  rest += "}, \"waiting_for_input\": ";
  rest += !r.waiting_for_input ? "null" : *r.waiting_for_input ? "true" : "false";
  rest += ", \"tty_foreground\": ";
  rest += !r.foreground.asked ? "null" : r.foreground.refused == nullptr ? "true" : "false";
  rest += ", \"tty_refused\": ";
  if (r.foreground.refused != nullptr)
    append_json_string(rest, r.foreground.refused);
  else
    rest += "null";
  containment.append_json(rest, r);
  rest += ", \"confined\": ";
  rest += confined;
  rest += ", \"limit\": ";
  if (r.limit != nullptr)
    append_json_string(rest, r.limit);
  else
    rest += "null";
  rest += "}";
  return rest;
}

}  // namespace sup
