// The C boundary of a child's life: from a spec to a running child (the
// stdio plumbing of a spawn), waiting, interrupting, signals, and release.
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

#include "api_call.hpp"
#include "confine.hpp"
#include "engine.hpp"
#include "errno_text.hpp"
#include "launch.hpp"
#include "process.hpp"
#include "routing.hpp"
#include "spec.hpp"
#include "sup.h"
#include "terminal.hpp"

namespace {

using sup::Call;
using sup::Process;
using sup::UniqueFd;

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
    if (input < 0) throw sup::LaunchError{-errno, "fcntl: " + sup::errno_text(errno)};
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

  sup::ChildSetup setup;
  setup.stdin_file = stdin_file;
  setup.cgroup = std::move(cgroup);
  setup.contain_fallback = std::move(contain_fallback);
  if (confine) setup.confinement = confine->take();
  setup.foreground = grant;
  // A pipe for the host to write stays with the API side; data is fed by
  // the loop.
  if (spec.stdin_mode == sup::StdinMode::pipe) setup.input = std::move(fds.stdin_write);
  if (spec.pty) setup.input = std::move(terminal_input);
  auto proc = std::make_unique<Process>(engine, spec, called_at, std::move(setup));
  *out = reinterpret_cast<sup_proc*>(engine.spawn(std::move(proc), plan, std::move(fds)));
  return 0;
}

}  // namespace

extern "C" {

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
    } catch (...) {
      sup::ApiError e = sup::current_error();
      detail = std::move(e.detail);
      rc = e.code;
      part = e.part;
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

SUP_API void sup_release(sup_proc* p) {
  auto* proc = reinterpret_cast<Process*>(p);
  if (proc == nullptr || !proc->handle().valid()) return;
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
  const sup::Nanos sent_at = proc->interrupt_from_caller();
  const int rc = proc->request_interrupt(sent_at);
  // Sent from here, the interrupt is on record and decides the outcome,
  // even if the child's end was published before the request: 0, as for
  // any request that changed something.
  return sent_at != 0 ? 0 : rc;
}

SUP_API int sup_abort(sup_proc* p) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (proc->is_final()) return 1;
  // The kill is sent from here; the loop needs no wake-up to learn of it:
  // it adopts it when it sees the main process exit (or sooner, whenever it
  // looks at the process). Waking it anyway cost this thread a wake-up
  // across CPUs and put the loop on a CPU beside the dying child.
  // On record, the kill decides the outcome ("aborted") even when the
  // child's end is published before this returns: 0, not "already final".
  if (proc->kill_from_caller()) return 0;
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

SUP_API int sup_signal(sup_proc* p, int sig) {
  Call proc(p);
  if (!proc) return proc.rc();
  if (sig < 0 || sig > 64) return SUP_EINVAL;
  return proc->signal_from_caller(sig);
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

}  // extern "C"
