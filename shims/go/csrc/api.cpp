// The C boundary: argument checks, exceptions turned into codes, and the
// stdio plumbing of a spawn. Nothing here throws past extern "C".
#include <algorithm>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "confine.hpp"
#include "engine.hpp"
#include "launch.hpp"
#include "process.hpp"
#include "routing.hpp"
#include "signal_names.hpp"
#include "spec.hpp"
#include "sup.h"
#include "terminal.hpp"

namespace {

using sup::Process;
using sup::UniqueFd;

// Holds a handle for the length of one call (see Process::pin). rc() is the
// code to return when there is no usable process: SUP_EINVAL for NULL or a
// bad handle, SUP_ECHILD for one inherited through fork(), SUP_ECANCELED once
// released.
class Call {
 public:
  explicit Call(sup_proc* p) noexcept {
    auto* proc = reinterpret_cast<Process*>(p);
    if (proc == nullptr || !proc->valid()) return;
    if (proc->forked_away()) {
      rc_ = SUP_ECHILD;
      return;
    }
    if (!proc->pin()) {
      rc_ = SUP_ECANCELED;
      return;
    }
    proc_ = proc;
  }
  ~Call() {
    if (proc_ != nullptr) proc_->unpin();
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

bool valid_stream(int stream) noexcept { return stream == SUP_STDOUT || stream == SUP_STDERR; }

void write_detail(char* buf, size_t size, const std::string& message) noexcept {
  if (buf == nullptr || size == 0) return;
  size_t n = std::min(size - 1, message.size());
  std::memcpy(buf, message.data(), n);
  buf[n] = '\0';
}

int spawn(const char* spec_json, sup_proc** out) {
  const sup::Nanos called_at = sup::now_ns();
  sup::Spec spec = sup::parse_spec(spec_json);
  // Before sup opens anything: a descriptor the caller named but had not
  // open must not become one of this spawn's own pipes.
  sup::check_host_fds(spec);
  sup::LaunchPlan plan = sup::plan_launch(spec);
  sup::Engine& engine = sup::Engine::instance();
  engine.prewake_spawner();  // wakes while the pipes are made
  if (spec.require_sentinel) {
    sup::Sentinel& sentinel = engine.sentinel();
    sentinel.wait_started();
    if (sentinel.coverage() != sup::HostDeath::tree)
      throw sup::LaunchError{SUP_ENOTSUP,
                             "require_sentinel: no sentinel runs, so only the main process would die with the host: " +
                                 sentinel.absence()};
  }
  // "contain": the child's cgroup, made before it exists; an "auto" that
  // cannot have one says why in the result.
  std::unique_ptr<sup::ChildCgroup> cgroup;
  std::string contain_fallback;
  if (spec.contain != sup::ContainMode::group) {
    try {
      cgroup = sup::ChildCgroup::create(spec.cgroup_parent, engine.sentinel());
      plan.cgroup_fd = cgroup->dir_fd();
      plan.cgroup_optional = spec.contain == sup::ContainMode::automatic;
    } catch (const sup::LaunchError& e) {
      if (spec.contain == sup::ContainMode::cgroup) throw;
      contain_fallback = e.message;
    }
  }

  sup::SpawnFds fds;
  UniqueFd terminal_input;
  if (spec.pty) {
    // One terminal for 0, 1 and 2: the master is read as stdout (no
    // stderr of its own), and a second descriptor of it is the host's
    // input side, which outlives the loop's (sup_pty_resize, a late VEOF).
    sup::Terminal terminal = sup::open_terminal(spec.pty_rows, spec.pty_cols);
    int input = fcntl(terminal.master.get(), F_DUPFD_CLOEXEC, 3);
    if (input < 0) throw sup::LaunchError{-errno, std::string("fcntl: ") + strerrordesc_np(errno)};
    terminal_input.reset(input);
    fds.child_out = std::move(terminal.slave);
    fds.out_read = std::move(terminal.master);
    fds.stdio = {{fds.child_out.get(), fds.child_out.get(), fds.child_out.get()}};
  } else {
    sup::plan_output(spec, engine.dev_null(), fds);
    fds.stdio.fd[0] = engine.dev_null();
  }
  // With "pty", "stdin" is refused (spec.cpp): its mode is the default,
  // null, and fd 0 stays the terminal.
  if (spec.stdin_mode == sup::StdinMode::inherit) {
    // A host that closed its stdin passes /dev/null rather than nothing.
    if (fcntl(0, F_GETFD) >= 0) fds.stdio.fd[0] = 0;
  } else if (spec.stdin_mode == sup::StdinMode::fd) {
    fds.stdio.fd[0] = spec.host_fd[0];
  } else if (spec.stdin_mode == sup::StdinMode::data || spec.stdin_mode == sup::StdinMode::pipe) {
    sup::PipeEnds stdin_pipe = sup::make_pipe();
    sup::set_nonblocking(stdin_pipe.write_end.get());
    fds.child_stdin = std::move(stdin_pipe.read_end);
    fds.stdin_write = std::move(stdin_pipe.write_end);
    fds.stdio.fd[0] = fds.child_stdin.get();
  }

  const sup::ForegroundGrant grant = sup::decide_foreground(spec.tty_foreground);
  plan.tty_foreground = false;
  if (grant.asked && grant.refused == nullptr) {
    fds.tty = sup::above_stdio(UniqueFd(fcntl(0, F_DUPFD_CLOEXEC, 3)));
    fds.host_pgrp = getpgrp();
    plan.tty_foreground = true;
  }

  // What a reader waiting for input must be waiting on (proc_look.hpp):
  // the stdin pipe, the terminal, or the host's own stdin or descriptor.
  sup::StdinFile stdin_file;
  if (spec.pty)
    stdin_file = sup::StdinFile::of_fd(fds.child_out.get());
  else if (spec.stdin_mode == sup::StdinMode::pipe)
    stdin_file = sup::StdinFile::of_fd(fds.stdin_write.get());
  else if (spec.stdin_mode == sup::StdinMode::inherit && fds.stdio.fd[0] == 0)
    stdin_file = sup::StdinFile::of_fd(0);
  else if (spec.stdin_mode == sup::StdinMode::fd)
    stdin_file = sup::StdinFile::of_fd(spec.host_fd[0]);

  // "limits", "sandbox", "user": the ruleset, the filter and the ids made
  // here, once, for the child to apply.
  std::optional<sup::ConfinePlan> confine;
  if (spec.confine.any()) {
    confine.emplace(spec.confine, plan, cgroup.get(), spec.pty ? fds.child_out.get() : -1, contain_fallback);
    plan.confine = confine->child();
  }

  // The child's descriptors. A Landlock ruleset reaches the child as one
  // more, above every number the spec asks for, where nothing replaces it
  // before confine_child uses and closes it.
  std::vector<std::pair<int, int>> child_fds = spec.extra_fds;
  if (confine && confine->ruleset_fd() >= 0) {
    int above = 2;
    for (const auto& [child, host] : child_fds) above = std::max(above, child);
    child_fds.emplace_back(above + 1, confine->ruleset_fd());
    confine->place_ruleset(above + 1);
  }
  plan.fds = sup::ChildFdPlan(fds.stdio.fd, child_fds);

  auto proc = std::make_unique<Process>(engine, spec, called_at);
  proc->set_stdin_file(stdin_file);
  proc->set_containment(std::move(cgroup), std::move(contain_fallback));
  if (confine) proc->set_confinement(confine->take());
  proc->set_foreground(grant);
  // A pipe for the host to write stays with the API side; data is fed by
  // the loop.
  if (spec.stdin_mode == sup::StdinMode::pipe) proc->set_input(std::move(fds.stdin_write));
  if (spec.pty) proc->set_input(std::move(terminal_input));
  *out = reinterpret_cast<sup_proc*>(engine.spawn(std::move(proc), plan, std::move(fds)));
  return 0;
}

}  // namespace

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

SUP_API int sup_signal(sup_proc* p, int sig) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (sig < 0 || sig > 64) return SUP_EINVAL;
  return proc->signal_from_caller(sig);
}

SUP_API int sup_spawn_v2(const char* spec_json, sup_proc** out, char* errbuf, size_t errbuf_size, int* failed_part) {
  std::string detail;
  int rc;
  int part = SUP_PART_NONE;
  if (out == nullptr) {
    detail = "out: NULL";
    rc = SUP_EINVAL;
    part = SUP_PART_SPEC;
  } else {
    *out = nullptr;
    try {
      rc = spawn(spec_json, out);
    } catch (const sup::SpecError& e) {
      detail = e.message;
      rc = SUP_EINVAL;
      part = SUP_PART_SPEC;
    } catch (const sup::LaunchError& e) {
      detail = e.message;
      rc = e.code;
      part = e.part;
    } catch (const std::bad_alloc&) {
      detail = "out of memory";
      rc = SUP_ENOMEM;
      part = SUP_PART_SYSTEM;
    } catch (const std::system_error& e) {
      detail = e.what();
      rc = e.code().value() > 0 ? -e.code().value() : SUP_EINTERNAL;
      part = SUP_PART_SYSTEM;
    } catch (...) {
      detail = "internal error";
      rc = SUP_EINTERNAL;
      part = SUP_PART_SYSTEM;
    }
  }
  write_detail(errbuf, errbuf_size, detail);
  if (failed_part != nullptr) *failed_part = part;
  return rc;
}

SUP_API int sup_spawn_ex(const char* spec_json, sup_proc** out, char* errbuf, size_t errbuf_size) {
  return sup_spawn_v2(spec_json, out, errbuf, errbuf_size, nullptr);
}

SUP_API int sup_spawn(const char* spec_json, sup_proc** out) { return sup_spawn_v2(spec_json, out, nullptr, 0, nullptr); }

SUP_API int sup_poll(sup_proc* p, int timeout_ms) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (timeout_ms < -1) return SUP_EINVAL;
  try {
    return proc->wait_final(timeout_ms);
  } catch (...) {
    return SUP_EINTERNAL;
  }
}

SUP_API int sup_interrupt(sup_proc* p) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (proc->is_final()) return 1;
  return proc->request_interrupt(proc->interrupt_from_caller());
}

SUP_API int sup_abort(sup_proc* p) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (proc->is_final()) return 1;
  // The kill is sent from here; the loop needs no wake-up to learn of it:
  // it adopts it when it sees the main process exit (or sooner, whenever it
  // looks at the process). Waking it anyway cost this thread a wake-up
  // across CPUs and put the loop on a CPU beside the dying child.
  if (proc->kill_from_caller()) return proc->is_final() ? 1 : 0;
  return proc->request(sup::kAbort);
}

SUP_API int sup_expire(sup_proc* p) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (proc->is_final()) return 1;
  // Latched for the loop, which sends the signals as the deadline would
  // (handle_requests_locked): the escalation's grace and its kill are the
  // loop's anyway. A signal handler's caller keeps its errno.
  const int saved_errno = errno;
  const int rc = proc->request(sup::kExpire);
  errno = saved_errno;
  return rc;
}

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

SUP_API void sup_release(sup_proc* p) {
  auto* proc = reinterpret_cast<Process*>(p);
  if (proc == nullptr || !proc->valid()) return;
  // Inherited through fork(), it only has memory to free (Engine::dispose).
  if (!proc->forked_away()) {
    try {
      proc->release();
    } catch (...) {
      // release allocates nothing; only a failing mutex or condition
      // variable could throw, and the process is then left as it is.
      return;
    }
  }
  sup::Engine::dispose(*proc);
}

SUP_API int sup_fd(sup_proc* p) {
  Call proc(p);
  if (!proc) return proc.rc();
  proc->need_loop();  // its waiter is woken by the loop's result
  return proc->event_fd();
}

SUP_API int sup_pid(sup_proc* p) {
  Call proc(p);
  return proc ? proc->pid() : proc.rc();
}

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
