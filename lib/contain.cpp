// The process's side of containment (containment.hpp): which of its signals
// reach the rest of the tree, and when the tree is ended, as the main
// process's life and the escalation decide.
#include <signal.h>

#include "process.hpp"

namespace sup {

// Spawner (or caller's) thread, right after the clone (adopt_child),
// before anything else sees the process: "auto" ran the child in group
// mode after all, the kernel having refused it its cgroup.
void Process::fall_back_to_group(std::string why) noexcept {
  if (confine_) confine_->fall_back_to_group(why);
  containment_.fall_back_to_group(std::move(why));
}

// Cgroup mode (each of contain.cpp's does nothing in group mode). At the
// main process's exit: the tree's end (Containment::end_tree), unless an
// interrupt's grace is running: the tree has the rest of it (a setsid'd
// server exits cleanly), and is ended when its pipes close or the grace
// is over.
void Process::tree_after_exit() noexcept {
  if (escalation_.stage() != Escalation::interrupt_sent) containment_.end_tree(main_.pid());
}

// signal_tree for the loop's own signals: a SIGKILL once the main process
// has exited ends the tree as Containment::end_tree does (counted first).
void Process::signal_tree_on_loop(int sig) noexcept {
  if (sig == SIGKILL && lifecycle_ == Lifecycle::draining) {
    containment_.end_tree(main_.pid());
    return;
  }
  signal_tree(sig, 0, !main_.status_lost());
}

// Containment::signal for the main process's tree: what the group kill did not
// reach. Async-signal-safe. Returns how many processes it reached.
int Process::signal_tree(int sig, int then_sig, bool group_signalled) noexcept {
  return containment_.signal(sig, then_sig, main_.pid(), group_signalled);
}

}  // namespace sup
