// The pipes live readers read themselves without backpressure, and the sweep that takes back the ones a reader left.
#pragma once

#include <uv.h>

#include "uv_handle.hpp"

namespace sup {

class Process;

// A reader on sup_output_fd reads a plain pipe itself (direct_read.cpp):
// the loop stops watching it, and every chunk saves the loop's read and the
// hand-over to the reader. Without backpressure_bytes the child must not
// wait for that reader, so the pipe is only lent: every kSweepMs the loop
// looks at each process holding one (Process::check_reader_leases) and takes
// back a pipe whose reader left bytes unread for a whole sweep or fell
// behind the child. One coarse timer for every process, running only while
// some process holds a lease. Loop thread only (the processes' places in the
// list are their EngineLinks'), but for forget (a forked child).
class ReaderLeases {
 public:
  // How often the leases are looked at: a child whose reader went away
  // waits at most about three sweeps on a full pipe before the loop reads
  // it (bytes seen waiting at two sweeps in a row, with no read between).
  // Each sweep touches a few cache lines of every process holding a lease.
  static constexpr uint64_t kSweepMs = 100;

  // proc's reader reads a pipe of it itself; the sweep looks at it from
  // now on. Throws LaunchError (the timer cannot be started).
  void hold(Process& proc, uv_loop_t* loop);
  // proc holds no lease any more (or is being torn down). Idempotent.
  void drop(Process& proc) noexcept;
  // The engine's end: the timer is closed (every process was torn down).
  void close() noexcept;
  // In a forked child: leaves libuv's handle alone.
  void forget() noexcept;

 private:
  void sweep();

  UvHandle<uv_timer_t> timer_;
  bool running_ = false;
  Process* first_ = nullptr;
};

}  // namespace sup
