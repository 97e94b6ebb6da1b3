// The child's stdin, where sup holds its other end: the host's writes
// ("stdin": "pipe", or "pty" to the terminal's master), and the bytes of
// "stdin": "data", which the loop feeds. Process keeps the entry points'
// checks (released, final) and the libuv plumbing of the feed's watch.
#pragma once

#include <uv.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>

#include "unique_fd.hpp"
#include "uv_handle.hpp"

namespace sup {

// Locking: a member of Process (input_). host_writes() and terminal() are
// immutable. The host's end (set_host_end() at construction; write, fd,
// close_host_end, resize, release) is behind the part's own mutex, taken by
// API threads, never while holding another lock. The feed is given by the
// spawner (Process::adopt_child), before anything else can see the process,
// and is the loop thread's from then on (feeding() is asked by the spawner
// first, Process::loop_needed_by, before the loop has the process).
class ChildInput {
 public:
  // host_writes: "stdin": "pipe", or "pty" (terminal: the host's end is the
  // terminal's master). data: "stdin": "data"'s bytes ("" otherwise).
  ChildInput(bool host_writes, bool terminal, std::string data)
      : host_writes_(host_writes), terminal_(terminal), data_(std::move(data)) {}

  // ---- The host's end (sup_input_*, sup_pty_resize) --------------------
  bool host_writes() const noexcept { return host_writes_; }
  bool terminal() const noexcept { return terminal_; }
  // Before the spawn, while nothing else can see the process: the pipe's
  // write end, or the terminal's master.
  void set_host_end(UniqueFd fd) noexcept { host_end_ = std::move(fd); }
  // Writes without blocking and without ever raising SIGPIPE in the
  // caller's thread. final: the result is final (the child's input has
  // ended). *written: the count, 0 on failure. Returns 0, SUP_EAGAIN,
  // SUP_EPIPE, SUP_EBADF (no end, or closed), SUP_EINVAL (a buffer the
  // kernel cannot read).
  int write(const char* buf, size_t len, size_t* written, bool final);
  // The host's end, or SUP_EBADF once closed (or without one).
  int fd();
  // A pipe's end is closed; a terminal's master is kept (closing it would
  // hang the child up) and its end of input written instead, unless final.
  // ended: the child's reader has had its end of input now. Returns 0,
  // SUP_EAGAIN (the terminal's input queue is full), SUP_EPIPE, SUP_EBADF.
  int close_host_end(bool final, bool& ended);
  // The terminal's size (SIGWINCH to its foreground). Returns 0,
  // SUP_ENOTSUP (no terminal), SUP_ESRCH (final, or gone), SUP_EINTERNAL.
  int resize(int rows, int cols, bool final);
  // sup_release, once no other call is inside: the host's end closes (a
  // terminal's master too).
  void release() noexcept;

  // ---- The feed ("stdin": "data"), loop thread ---------------------------
  // At the adoption: the pipe's write end the data goes into
  // (non-blocking), invalid without data to feed.
  void feed_from(UniqueFd fd) noexcept { feed_fd_ = std::move(fd); }
  bool feeding() const noexcept { return feed_fd_.valid(); }
  int feed_fd() const noexcept { return feed_fd_.get(); }
  // Its writability watch, which Process makes and starts (its callback is
  // Process's) while feeding().
  UvHandle<uv_poll_t>& feed_watch() noexcept { return feed_watch_; }
  // Writes what the pipe takes. Returns true when the feed is over: every
  // byte written, or the child's stdin gone (EPIPE: the rest is not
  // wanted); the caller then ends it.
  bool feed() noexcept;
  // The watch and the pipe closed, the data freed. Also at tear-down.
  void end_feed() noexcept;

 private:
  const bool host_writes_;
  const bool terminal_;
  std::mutex mu_;
  UniqueFd host_end_;
  // "pty": sup_input_close wrote the end of input (VEOF) but keeps the
  // master open; and the last byte written, which says whether a line is
  // unfinished (-1: none).
  bool end_written_ = false;
  int last_byte_ = -1;

  std::string data_;
  size_t written_ = 0;
  UniqueFd feed_fd_;
  UvHandle<uv_poll_t> feed_watch_;
};

}  // namespace sup
