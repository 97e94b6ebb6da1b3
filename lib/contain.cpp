// Containment of a child's whole tree in cgroup mode, as the process sees it:
// the tree's end once the main process has ended (counted, killed, waited
// for, measured, removed), and signals that reach every process of the
// tree, not only the main process's group. cgroup.cpp does the cgroup work.
#include <signal.h>

#include "json_text.hpp"
#include "process.hpp"

namespace sup {
namespace {

// After cgroup.kill, how long the end waits for the tree to be gone, and
// then for its directory to be removed: a process in uninterruptible sleep
// dies only when it wakes. Beyond that the result says so ("cgroup_left").
constexpr Nanos kTreeEmptyWait = 100 * kNanosPerMs;
constexpr Nanos kRemoveWait = 100 * kNanosPerMs;

}  // namespace

void Process::set_containment(std::unique_ptr<ChildCgroup> cgroup, std::string fallback) noexcept {
  cgroup_ = std::move(cgroup);
  contain_fallback_ = std::move(fallback);
}

void Process::fall_back_to_group(std::string why) noexcept {
  // The cgroup, empty (the child never entered it), is removed with it.
  cgroup_.reset();
  if (confine_) confine_->fall_back_to_group(why);
  contain_fallback_ = std::move(why);
}

void Process::end_tree_after_exit() noexcept {
  if (!cgroup_ || tree_ended_) return;
  tree_ended_ = true;
  // A tree killed while the main process ran (abort, the escalation's
  // SIGKILL, a release) left nothing over after it.
  if (!cgroup_->killed()) {
    leftovers_ = cgroup_->count_alive(pid_);
    cgroup_->kill();
  }
  cgroup_->wait_empty(kTreeEmptyWait);
}

void Process::tree_after_exit() noexcept {
  if (escalation_.stage() != Escalation::interrupt_sent) end_tree_after_exit();
}

void Process::signal_tree_on_loop(int sig) noexcept {
  if (sig == SIGKILL && lifecycle_ == Lifecycle::draining) {
    end_tree_after_exit();
    return;
  }
  signal_tree(sig, 0, !status_lost_);
}

int Process::signal_tree(int sig, int then_sig, bool group_signalled) noexcept {
  if (!cgroup_) return 0;
  if (sig == SIGKILL) return cgroup_->kill() ? 1 : 0;
  int reached = cgroup_->signal(sig, pid_, group_signalled ? pid_ : 0);
  if (then_sig != 0) cgroup_->signal(then_sig, pid_, group_signalled ? pid_ : 0);
  return reached;
}

void Process::close_tree(Result& r) noexcept {
  try {
    if (!cgroup_) {
      r.contained = SUP_CONTAIN_GROUP;
      if (!contain_fallback_.empty()) r.contain_fallback = contain_fallback_;
      return;
    }
    end_tree_after_exit();
    r.contained = SUP_CONTAIN_CGROUP;
    r.leftovers_ended = leftovers_;
    r.tree_cpu = cgroup_->cpu();
    if (!cgroup_->remove(kRemoveWait)) r.cgroup_left = cgroup_->path();
  } catch (...) {
    // Out of memory for a string: the keys stay null.
  }
}

void Process::append_contain_json(std::string& out) const {
  const Result& r = result_;
  out += ", \"contained\": ";
  out += r.contained == SUP_CONTAIN_CGROUP ? "\"cgroup\"" : "\"group\"";
  out += ", \"leftovers_ended\": ";
  if (r.leftovers_ended)
    append_decimal(out, *r.leftovers_ended);
  else
    out += "null";
  out += ", \"tree_cpu\": ";
  if (r.tree_cpu) {
    out += "{\"user_ms\": ";
    append_ms(out, r.tree_cpu->user_us);
    out += ", \"sys_ms\": ";
    append_ms(out, r.tree_cpu->sys_us);
    out += "}";
  } else {
    out += "null";
  }
  out += ", \"contain_fallback\": ";
  if (r.contain_fallback)
    append_json_string(out, *r.contain_fallback);
  else
    out += "null";
  out += ", \"cgroup_left\": ";
  if (r.cgroup_left)
    append_json_string(out, *r.cgroup_left);
  else
    out += "null";
  out += ", \"host_death\": ";
  out += host_death_ == HostDeath::tree ? "\"tree\"" : "\"main_process\"";
}

}  // namespace sup
