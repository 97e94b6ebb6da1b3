// Where a supervised child is in its life, as the loop thread sees it: running, draining, final, closed.
#pragma once

namespace sup {

// Moves only forward, under Process's work_mu_ (the loop thread, or a
// caller finishing the process: caller_wait.cpp). Every loop-thread entry
// first asks whether it is final (Process::final_on_loop); API threads ask
// Process::is_final, which is published with the result.
enum class Lifecycle {
  running,   // main process alive
  draining,  // main process exited; waiting for what it left to close the pipes
  final,     // result published; immutable. The loop still owns the watches,
             // the pipes and the zombie (a caller may have published).
  closed,    // final, and torn down: reaped, everything closed (tear_down)
};

}  // namespace sup
