// The two silence limits: "first_output_timeout_ms" until the child's first
// byte on a stream sup reads, then "idle_timeout_ms" from the last byte.
// Without a first-output limit the idle clock runs from the clone, as a
// child is silent from its first instant. A held-back stream's reader
// counts too (silence_deadline).
#include <algorithm>
#include <limits>

#include "process.hpp"

namespace sup {

Nanos Process::silence_deadline() const noexcept {
  constexpr Nanos kNever = std::numeric_limits<Nanos>::max();
  if (first_output_timeout_ > 0 && first_output_at_ == 0) return started_at_ + first_output_timeout_;
  if (idle_timeout_ <= 0) return kNever;
  // A stream held back waits for its reader: the reader's last read is
  // activity as much as the child's last byte, whichever came later. With
  // nobody reading, the silence is silence, and the idle limit ends it
  // (else a child blocked on a full pipe nobody reads waited forever).
  Nanos last = last_activity_;
  for (const OutputPipe* pipe : {&out_, &err_})
    if (pipe->paused) last = std::max(last, pipe->last_read.load(std::memory_order_relaxed));
  return last + idle_timeout_;
}

TimeoutKind Process::silence_kind() const noexcept {
  return first_output_timeout_ > 0 && first_output_at_ == 0 ? TimeoutKind::first_output : TimeoutKind::idle;
}

}  // namespace sup
