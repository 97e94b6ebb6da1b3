// Where the child's stdout and stderr go ("stdout" / "stderr" in the spec):
// a pipe sup reads ("pipe"), the same plus a copy to the host's own fd
// ("tee"), the host's fd itself ("inherit"), any descriptor of the host's
// ({"fd": N}), /dev/null ("null"), or, for stderr, wherever stdout goes
// ("stdout").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "launch.hpp"
#include "spec.hpp"
#include "tee_writer.hpp"
#include "unique_fd.hpp"

namespace sup {

// The result's "routed" value: "pipe", "tee", "inherit", "null", "stdout", "fd".
const char* route_name(Route route) noexcept;

// sup reads the stream (and so it is captured and feeds the idle clock).
bool route_is_read(Route route) noexcept;

// The spec's routing rules that span keys: an idle timeout needs a stream
// sup reads. Throws SpecError.
void check_routes(const Spec& spec);

// Makes the child's descriptors 1 and 2 as the spec routes them: pipes
// (read ends in fds.out_read / fds.err_read) or the host's own (its 1 or 2,
// or the one {"fd": N} names) or /dev/null's. Throws LaunchError.
void plan_output(const Spec& spec, int dev_null, SpawnFds& fds);

// The host's fd 1 or 2 as a "tee" writes to it, never blocking the loop
// thread. Pipes, FIFOs and terminals are opened anew through /proc/self/fd,
// which gives sup a description of its own that it can make non-blocking
// without touching the host's (O_NONBLOCK belongs to the description, which
// dup(2) would share); a socket is written with MSG_DONTWAIT; a regular
// file or other device through a duplicate, where a write does not wait for
// a reader. Where the reopen fails (a host that dropped privileges, on
// another user's terminal), a duplicate of the host's blocking description
// is written by a thread of its own (TeeWriter): neither poll(2) nor a byte
// count can promise that a blocking write to a terminal returns.
class TeeSink {
 public:
  // Returns nullptr when the host's fd is closed. Throws LaunchError.
  static std::unique_ptr<TeeSink> open(int host_fd);
  ~TeeSink();

  // Writes what the fd takes now, keeps the rest in order for flush().
  // Past kMaxPending copies are dropped; once the fd failed (EPIPE: its
  // reader is gone) nothing more is written. Never throws (out of memory
  // drops the copy).
  void copy(const char* data, size_t len) noexcept;
  // Writes kept bytes; returns true if any went out.
  bool flush() noexcept;
  size_t pending() const noexcept;
  // The fd can be polled for writability (not a regular file).
  bool pollable() const noexcept { return pollable_; }
  bool failed() const noexcept { return error_ != 0; }
  // The errno of the failed write (EPIPE: the reader has gone), else 0.
  int error() const noexcept { return error_; }
  // What the loop watches: the fd's writability, or (written by a thread)
  // the thread's progress, readable (watch_readable).
  int fd() const noexcept;
  bool watch_readable() const noexcept { return writer_ != nullptr; }
  // Drops what is kept (the fd is given up on).
  void give_up() noexcept;

  // While more than this waits, sup reads the child's stream no further
  // (it blocks on write, as on the host's fd itself).
  static constexpr size_t kHoldBack = 256 * 1024;
  static constexpr size_t kMaxPending = 4 * 1024 * 1024;

 private:
  enum class Kind { own, socket, threaded, plain };
  TeeSink(UniqueFd fd, Kind kind, bool pollable) noexcept;
  // One write; returns the count, 0 when the fd has no room, -1 once failed.
  ssize_t write_some(const char* data, size_t len) noexcept;
  void fail(int err) noexcept;

  UniqueFd fd_;
  Kind kind_;
  bool pollable_;
  int error_ = 0;
  std::string pending_;
  size_t pending_at_ = 0;
  std::unique_ptr<TeeWriter> writer_;  // Kind::threaded
};

}  // namespace sup
