// The C boundary of a child's result: the JSON, and the typed accessors.
#include <sys/resource.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api_call.hpp"
#include "process.hpp"
#include "sup.h"

using sup::Call;
using sup::valid_stream;

extern "C" {

SUP_API const char* sup_result(sup_proc* p) {
  Call proc(p);
  if (!proc) return nullptr;
  if (!proc->is_final()) {
    proc->need_loop();  // a caller that only looks leaves the child to the loop
    return nullptr;
  }
  try {
    return proc->result_json().c_str();
  } catch (...) {
    return nullptr;
  }
}

// The typed result accessors share their checks: a usable, final handle.
#define SUP_FINAL_OR_RETURN(proc)          \
  if (!(proc)) return (proc).rc();         \
  if (!(proc)->is_final()) return SUP_EBUSY

SUP_API int sup_result_outcome(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().outcome;
}

SUP_API int sup_result_exit_code(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().exit_code ? *proc->result().exit_code : SUP_ENODATA;
}

SUP_API int sup_result_term_signal(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().term_signal ? *proc->result().term_signal : SUP_ENODATA;
}

SUP_API int sup_result_phase(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().phase;
}

SUP_API int sup_result_status_lost(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().status_lost ? 1 : 0;
}

SUP_API int sup_result_forced_kill(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().forced_kill ? 1 : 0;
}

SUP_API double sup_result_duration_ms(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return sup::ns_to_ms(proc->result().duration);
}

SUP_API int sup_result_rusage(sup_proc* p, double* user_ms, double* sys_ms, int64_t* max_rss_kb) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  const struct rusage& u = proc->result().usage;
  if (user_ms != nullptr) *user_ms = sup::timeval_ms(u.ru_utime);
  if (sys_ms != nullptr) *sys_ms = sup::timeval_ms(u.ru_stime);
  if (max_rss_kb != nullptr) *max_rss_kb = u.ru_maxrss;
  return 0;
}

SUP_API int sup_result_signals(sup_proc* p, int* signals, double* at_ms, size_t cap) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  const auto& sent = proc->result().signals_sent;
  for (size_t i = 0; i < sent.size() && i < cap; ++i) {
    if (signals != nullptr) signals[i] = sent[i].signal;
    if (at_ms != nullptr) at_ms[i] = sup::ns_to_ms(sent[i].at);
  }
  return static_cast<int>(sent.size());
}

SUP_API const char* sup_result_output(sup_proc* p, int stream, size_t* len) {
  Call proc(p);
  if (!proc || len == nullptr || !valid_stream(stream) || !proc->is_final()) return nullptr;
  try {
    std::string_view kept = proc->kept_output(stream);
    *len = kept.size();
    return kept.data();
  } catch (...) {
    return nullptr;
  }
}

SUP_API int64_t sup_result_omitted_bytes(sup_proc* p, int stream) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (!valid_stream(stream)) return SUP_EINVAL;
  if (!proc->is_final()) return SUP_EBUSY;
  return static_cast<int64_t>(proc->omitted_bytes(stream));
}

SUP_API int sup_result_contained(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().contained;
}

SUP_API int64_t sup_result_leftovers_ended(sup_proc* p) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  return proc->result().leftovers_ended ? *proc->result().leftovers_ended : int64_t{SUP_ENODATA};
}

SUP_API int sup_result_host_death(sup_proc* p) {
  Call proc(p);
  if (!proc) return proc.rc();
  return proc->host_death() == sup::HostDeath::tree ? SUP_HOST_DEATH_TREE : SUP_HOST_DEATH_MAIN_PROCESS;
}

SUP_API int sup_result_tree_cpu(sup_proc* p, double* user_ms, double* sys_ms) {
  Call proc(p);
  SUP_FINAL_OR_RETURN(proc);
  const auto& cpu = proc->result().tree_cpu;
  if (!cpu) return SUP_ENODATA;
  if (user_ms != nullptr) *user_ms = static_cast<double>(cpu->user_us) / 1e3;
  if (sys_ms != nullptr) *sys_ms = static_cast<double>(cpu->sys_us) / 1e3;
  return 0;
}

}  // extern "C"
