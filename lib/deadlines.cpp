// The silence and runtime limits (deadlines.hpp): "first_output_timeout_ms"
// until the child's first byte on a stream sup reads, then
// "idle_timeout_ms" from the last byte; without a first-output limit the
// idle clock runs from the exec, as a child is silent from its first
// instant. "max_runtime_ms" counts from the call.
#include "deadlines.hpp"

#include <algorithm>

namespace sup {

void Deadlines::launched(Nanos started_at) noexcept {
  started_at_ = started_at;
  last_activity_ = started_at;
  silence_ = Silence::before_first_byte;
}

bool Deadlines::note_output(Nanos now) noexcept {
  last_activity_ = now;
  if (silence_ == Silence::after_first_byte) return false;
  silence_ = Silence::after_first_byte;
  return first_output_timeout_ > 0 && idle_timeout_ > 0;
}

Nanos Deadlines::silence_deadline(Nanos reader_last_read) const noexcept {
  if (silence_kind() == TimeoutKind::first_output) return started_at_ + first_output_timeout_;
  if (idle_timeout_ <= 0) return kNever;
  // A stream held back waits for its reader: the reader's last read is
  // activity as much as the child's last byte, whichever came later. With
  // nobody reading, the silence is silence, and the idle limit ends it
  // (else a child blocked on a full pipe nobody reads waited forever).
  return std::max(last_activity_, reader_last_read) + idle_timeout_;
}

TimeoutKind Deadlines::silence_kind() const noexcept {
  return first_output_timeout_ > 0 && silence_ != Silence::after_first_byte ? TimeoutKind::first_output
                                                                             : TimeoutKind::idle;
}

Nanos Deadlines::runtime_deadline() const noexcept { return max_runtime_ > 0 ? called_at_ + max_runtime_ : kNever; }

Nanos Deadlines::next(Nanos reader_last_read) const noexcept {
  return std::min(silence_deadline(reader_last_read), runtime_deadline());
}

bool Deadlines::over(Nanos now, Nanos reader_last_read, TimeoutKind* kind) const noexcept {
  if (now >= silence_deadline(reader_last_read)) {
    *kind = silence_kind();
    return true;
  }
  if (now >= runtime_deadline()) {
    *kind = TimeoutKind::max_runtime;
    return true;
  }
  return false;
}

}  // namespace sup
