// The C boundary of a child's streams: its live output, and its input (a
// stdin pipe or the terminal).
#include <cstddef>
#include <cstdint>
#include <new>

#include "api_call.hpp"
#include "process.hpp"
#include "sup.h"

using sup::Call;
using sup::valid_stream;

extern "C" {

SUP_API int sup_output_read(sup_proc* p, int stream, uint64_t* pos, void* buf, size_t cap, size_t* nread) {
  sup::Process::prefetch_for_read(p, stream);
  Call proc(p);
  if (!proc) return proc.rc();
  if (!valid_stream(stream) || pos == nullptr || nread == nullptr || (buf == nullptr && cap > 0)) return SUP_EINVAL;
  *nread = 0;
  proc->need_loop();  // the loop fills the capture
  int64_t n = proc->read_output(stream, pos, static_cast<char*>(buf), cap);
  if (n < 0) return static_cast<int>(n);
  *nread = static_cast<size_t>(n);
  return 0;
}

SUP_API int sup_output_wait(sup_proc* p, uint64_t stdout_pos, uint64_t stderr_pos, int timeout_ms) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (timeout_ms < -1) return SUP_EINVAL;
  proc->need_loop();
  try {
    return proc->wait_output(stdout_pos, stderr_pos, timeout_ms);
  } catch (...) {
    return SUP_EINTERNAL;
  }
}

SUP_API int64_t sup_output_total(sup_proc* p, int stream) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (!valid_stream(stream)) return SUP_EINVAL;
  proc->need_loop();
  return static_cast<int64_t>(proc->output_total(stream));
}

SUP_API int sup_output_fd(sup_proc* p, int stream) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (!valid_stream(stream)) return SUP_EINVAL;
  proc->need_loop();
  return proc->output_fd(stream);
}

SUP_API int sup_input_write(sup_proc* p, const void* buf, size_t len, size_t* written) {
  Call proc(p);
  if (written != nullptr) *written = 0;
  if (!proc) return proc.rc();
  if (buf == nullptr && len > 0) return SUP_EINVAL;
  return proc->input_write(static_cast<const char*>(buf), len, written);
}

SUP_API int sup_input_wait(sup_proc* p, int timeout_ms) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (timeout_ms < -1) return SUP_EINVAL;
  return proc->input_wait(timeout_ms);
}

SUP_API int sup_input_fd(sup_proc* p) {
  Call proc(p);
  return proc ? proc->input_fd() : proc.rc();
}

SUP_API int sup_input_close(sup_proc* p) {
  Call proc(p);
  return proc ? proc->input_close() : proc.rc();
}

SUP_API int sup_input_wanted(sup_proc* p) {
  Call proc(p);
  if (!proc) return proc.rc();
  try {
    return proc->input_wanted();
  } catch (const std::bad_alloc&) {
    return SUP_ENOMEM;
  } catch (...) {
    return SUP_EINTERNAL;
  }
}

SUP_API int sup_pty_resize(sup_proc* p, int rows, int cols) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (rows < 1 || rows > 65535 || cols < 1 || cols > 65535) return SUP_EINVAL;
  return proc->pty_resize(rows, cols);
}

}  // extern "C"
