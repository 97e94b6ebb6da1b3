// Callers in sup_poll that watch the exit and read the pipes themselves while the loop stands back.
#include "caller_drivers.hpp"

namespace sup {

bool CallerDrivers::leave() noexcept {
  if (--drivers_ > 0) return false;
  for (UniqueFd& fd : retired_) fd.reset();
  return stepped_back_;
}

CallerDrivers::Step CallerDrivers::sync() noexcept {
  if (drivers_ > 0 && !stepped_back_) {
    stepped_back_ = true;
    return Step::back;
  }
  if (drivers_ == 0 && stepped_back_) {
    stepped_back_ = false;
    return Step::in;
  }
  return Step::none;
}

void CallerDrivers::retire(UniqueFd& fd) noexcept {
  if (!fd.valid()) return;
  if (drivers_ > 0) {
    for (UniqueFd& slot : retired_) {
      if (slot.valid()) continue;
      slot = std::move(fd);
      return;
    }
  }
  fd.reset();
}

}  // namespace sup
