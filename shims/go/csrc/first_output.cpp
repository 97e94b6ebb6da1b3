// The two silence limits: "first_output_timeout_ms" until the child's first
// byte on a stream sup reads, then "idle_timeout_ms" from the last byte.
// Without a first-output limit the idle clock runs from the clone, as a
// child is silent from its first instant.
#include <limits>

#include "process.hpp"

namespace sup {

Nanos Process::silence_deadline() const noexcept {
  constexpr Nanos kNever = std::numeric_limits<Nanos>::max();
  // A stream held back is not silent: sup is not reading it.
  if (any_held_back()) return kNever;
  if (first_output_timeout_ > 0 && first_output_at_ == 0) return started_at_ + first_output_timeout_;
  if (idle_timeout_ > 0) return last_activity_ + idle_timeout_;
  return kNever;
}

TimeoutKind Process::silence_kind() const noexcept {
  return first_output_timeout_ > 0 && first_output_at_ == 0 ? TimeoutKind::first_output : TimeoutKind::idle;
}

}  // namespace sup
