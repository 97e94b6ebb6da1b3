// The C boundary's library-wide calls: the version, the names of outcomes,
// errors and signals, and how an exception becomes a code (api_call.hpp).
#include <string.h>

#include <new>
#include <system_error>

#include "api_call.hpp"
#include "launch.hpp"
#include "signal_names.hpp"
#include "spec.hpp"
#include "sup.h"

namespace sup {

ApiError current_error() {
  try {
    throw;
  } catch (const SpecError& e) {
    return {SUP_EINVAL, SUP_PART_SPEC, e.message};
  } catch (const LaunchError& e) {
    return {e.code, e.part, e.message};
  } catch (const std::bad_alloc&) {
    return {SUP_ENOMEM, SUP_PART_SYSTEM, "out of memory"};
  } catch (const std::system_error& e) {
    return {e.code().value() > 0 ? -e.code().value() : SUP_EINTERNAL, SUP_PART_SYSTEM, e.what()};
  } catch (...) {
    return {SUP_EINTERNAL, SUP_PART_SYSTEM, "internal error"};
  }
}

}  // namespace sup

extern "C" {

SUP_API int sup_version(void) { return SUP_VERSION_NUMBER; }

SUP_API const char* sup_outcome_name(int outcome) {
  switch (outcome) {
    case SUP_OUTCOME_EXITED: return "exited";
    case SUP_OUTCOME_SIGNALED: return "signaled";
    case SUP_OUTCOME_IDLE_TIMEOUT: return "idle_timeout";
    case SUP_OUTCOME_MAX_RUNTIME: return "max_runtime";
    case SUP_OUTCOME_INTERRUPTED: return "interrupted";
    case SUP_OUTCOME_ABORTED: return "aborted";
    default: return nullptr;
  }
}

SUP_API const char* sup_strerror(int err) {
  switch (err) {
    case SUP_OK: return "success";
    case SUP_EPERM: return "operation not permitted";
    case SUP_ESRCH: return "the child is gone: its result is final";
    case SUP_ENOENT: return "no such file or directory";
    case SUP_E2BIG: return "argument list too long";
    case SUP_ENOEXEC: return "exec format error";
    case SUP_EBADF: return "bad file descriptor";
    case SUP_ECHILD: return "handle inherited through fork: inert in this process";
    case SUP_EPIPE: return "the child's stdin is closed";
    case SUP_ECANCELED: return "the handle was released";
    case SUP_EAGAIN: return "resource temporarily unavailable";
    case SUP_ENOMEM: return "out of memory";
    case SUP_EACCES: return "permission denied";
    case SUP_ENOTDIR: return "not a directory";
    case SUP_EISDIR: return "is a directory";
    case SUP_EINVAL: return "invalid argument";
    case SUP_EMFILE: return "too many open files";
    case SUP_ENOSPC: return "no pseudo-terminal left";
    case SUP_ENOTSUP: return "not supported for this child";
    case SUP_EBUSY: return "result not final yet";
    case SUP_ENODATA: return "no such value in this result";
    case SUP_ENOSYS: return "kernel lacks pidfd support (Linux >= 5.9 needed)";
    case SUP_EINTERNAL: return "internal error in sup";
    default: break;
  }
  if (err < 0 && err > -4096) {
    const char* text = strerrordesc_np(-err);
    if (text != nullptr) return text;
  }
  return "unknown error";
}

SUP_API int sup_signal_parse(const char* text) {
  if (text == nullptr) return SUP_EINVAL;
  try {
    int sig = sup::parse_signal(text);
    return sig > 0 ? sig : SUP_EINVAL;
  } catch (...) {
    return SUP_ENOMEM;
  }
}

SUP_API const char* sup_signal_name(int sig) { return sup::signal_name_or_null(sig); }

}  // extern "C"
