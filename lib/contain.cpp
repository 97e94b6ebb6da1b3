// The process's side of containment (containment.hpp): which of its signals
// reach the rest of the tree, and when the tree is ended, as the main
// process's life and the escalation decide.
#include <signal.h>

#include "process.hpp"

namespace sup {

void Process::fall_back_to_group(std::string why) noexcept {
  if (confine_) confine_->fall_back_to_group(why);
  containment_.fall_back_to_group(std::move(why));
}

void Process::tree_after_exit() noexcept {
  if (escalation_.stage() != Escalation::interrupt_sent) containment_.end_tree(main_.pid());
}

void Process::signal_tree_on_loop(int sig) noexcept {
  if (sig == SIGKILL && lifecycle_ == Lifecycle::draining) {
    containment_.end_tree(main_.pid());
    return;
  }
  signal_tree(sig, 0, !main_.status_lost());
}

int Process::signal_tree(int sig, int then_sig, bool group_signalled) noexcept {
  return containment_.signal(sig, then_sig, main_.pid(), group_signalled);
}

}  // namespace sup
