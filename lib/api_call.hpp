// The C boundary's shared rules: a handle held for one call, and an exception turned into a code.
#pragma once

#include <string>

#include "process.hpp"
#include "sup.h"

// Every extern "C" entry point (api*.cpp) checks its handle through Call,
// catches what it may throw, and returns a code: nothing throws past the C
// boundary.
namespace sup {

// Holds a handle for the length of one call (handle_pins.hpp). rc() is the
// code to return when there is no usable process: SUP_EINVAL for NULL or a
// bad handle, SUP_ECHILD for one inherited through fork(), SUP_ECANCELED once
// released.
class Call {
 public:
  explicit Call(sup_proc* p) noexcept {
    auto* proc = reinterpret_cast<Process*>(p);
    if (proc == nullptr || !proc->handle().valid()) return;
    if (proc->forked_away()) {
      rc_ = SUP_ECHILD;
      return;
    }
    if (!proc->handle().pin()) {
      rc_ = SUP_ECANCELED;
      return;
    }
    proc_ = proc;
  }
  ~Call() {
    if (proc_ != nullptr) proc_->handle().unpin();
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  Process* get() const noexcept { return proc_; }
  Process* operator->() const noexcept { return proc_; }
  explicit operator bool() const noexcept { return proc_ != nullptr; }
  int rc() const noexcept { return rc_; }

 private:
  Process* proc_ = nullptr;
  int rc_ = SUP_EINVAL;
};

inline bool valid_stream(int stream) noexcept { return stream == SUP_STDOUT || stream == SUP_STDERR; }

// What an entry point returns for the exception in flight: its code, the
// part of a spawn it concerns (enum sup_part) and the detail a human needs
// (a spec's key, a path that failed to exec). Only inside a catch block.
struct ApiError {
  int code;
  int part;
  std::string detail;
};
ApiError current_error();

}  // namespace sup
