// A "tee" to a descriptor sup may not make non-blocking and cannot reopen
// (a terminal or pipe /proc/self/fd refuses: a host that dropped privileges
// on another user's terminal). A blocking write there waits for every byte,
// for good once nobody reads: it is made on a thread of its own, never on
// the loop's. The loop hands bytes over and is told of progress through an
// eventfd.
#pragma once

#include <cstddef>
#include <memory>

#include "unique_fd.hpp"

namespace sup {

class TeeWriter {
 public:
  // Takes fd (a duplicate of the host's). Throws LaunchError (no thread,
  // no eventfd).
  explicit TeeWriter(UniqueFd fd);
  // Drops what is queued; a write under way is left to end on its own
  // (the thread, detached, then ends): it may never end, holding the
  // duplicate, if nobody ever reads the host's descriptor. (The first
  // writer makes the library unloadable: dlclose would unmap its code.)
  ~TeeWriter();
  TeeWriter(const TeeWriter&) = delete;
  TeeWriter& operator=(const TeeWriter&) = delete;

  // Queues len bytes, unless more than max_queued would then wait (the copy
  // is dropped). Returns false once the descriptor failed.
  bool queue(const char* data, size_t len, size_t max_queued) noexcept;
  // Bytes queued or being written.
  size_t pending() const noexcept;
  // Readable when the thread wrote something or the descriptor failed.
  int progress_fd() const noexcept { return progress_fd_; }
  // Clears progress_fd; returns whether bytes went out since the last call.
  bool take_progress() noexcept;
  // The descriptor's errno once a write failed (EPIPE: its reader is gone),
  // else 0.
  int error() const noexcept;
  // Drops what is queued (a write under way ends on its own).
  void drop_queued() noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
  int progress_fd_;
};

}  // namespace sup
