// Containment of one child's tree (containment.hpp): the signals that reach
// every process of it in cgroup mode, its end, and the result's keys.
#include "containment.hpp"

#include <signal.h>

#include "json_text.hpp"

namespace sup {

void Containment::set(std::unique_ptr<ChildCgroup> cgroup, std::string fallback) noexcept {
  cgroup_ = std::move(cgroup);
  fallback_ = std::move(fallback);
}

void Containment::fall_back_to_group(std::string why) noexcept {
  cgroup_.reset();
  fallback_ = std::move(why);
}

int Containment::signal(int sig, int then_sig, pid_t pid, bool group_signalled) noexcept {
  if (!cgroup_) return 0;
  if (sig == SIGKILL) return cgroup_->kill() ? 1 : 0;
  int reached = cgroup_->signal(sig, pid, group_signalled ? pid : 0);
  if (then_sig != 0) cgroup_->signal(then_sig, pid, group_signalled ? pid : 0);
  return reached;
}

void Containment::end_tree(pid_t pid) noexcept {
  if (!cgroup_ || tree_ended_) return;
  tree_ended_ = true;
  // A tree killed while the main process ran (abort, the escalation's
  // SIGKILL, a release) left nothing over after it.
  if (!cgroup_->killed()) {
    leftovers_ = cgroup_->count_alive(pid);
    cgroup_->kill();
  }
  cgroup_->wait_empty(kTreeEmptyWait);
}

void Containment::close(pid_t pid, ContainOutcome& r) noexcept {
  try {
    if (!cgroup_) {
      r.contained = SUP_CONTAIN_GROUP;
      if (!fallback_.empty()) r.contain_fallback = fallback_;
      return;
    }
    end_tree(pid);
    r.contained = SUP_CONTAIN_CGROUP;
    r.leftovers_ended = leftovers_;
    r.tree_cpu = cgroup_->cpu();
    if (!cgroup_->remove(kRemoveWait)) r.cgroup_left = cgroup_->path();
  } catch (...) {
    // Out of memory for a string: the keys stay null.
  }
}

void Containment::append_json(std::string& out, const ContainOutcome& r) const {
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
