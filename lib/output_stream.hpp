// One of the child's output streams: its pipe, what sup keeps of it, its live reader's place and lease, and its tee.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "capture.hpp"
#include "clock.hpp"
#include "event_fd.hpp"
#include "routing.hpp"
#include "unique_fd.hpp"
#include "uv_handle.hpp"

namespace sup {

// Who reads a plain pipe (direct_read.cpp, reader_leases.hpp).
enum class PipeHolder : uint8_t {
  loop,    // the loop watches and reads it (always so for a terminal or a tee)
  reader,  // lent: the live reader reads it itself, the loop does not watch it
  lapsed,  // the loop's again, taken back from a reader that left bytes
           // unread (or found a caller driving the process): lent again
           // once that reader has read all that sup holds
};

// What Process does with a stream goes through here; Process decides when
// (the loop's watches, the locks, the idle clock). Who touches what, under
// Process's locks:
// - the pipe and its watch, the tee, the lease's sweep state: the loop
//   thread, or under work_mu_ a reader holding the lease (read_some,
//   count_read) or a caller driving the process;
// - the capture, the reader's position, the readiness eventfd and held():
//   under mu_; the loop, the capture's only writer, may read them without;
// - holder(): changed under work_mu_, read without it as a hint;
// - the reader's read count and last read: atomics, written by readers and
//   read by the loop.
class OutputStream {
 public:
  OutputStream(int stream, uint64_t limit, uint64_t retain) : stream_(stream), capture_(limit, retain) {}
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  // SUP_STDOUT or SUP_STDERR.
  int stream() const noexcept { return stream_; }

  // ---- Before the spawn ------------------------------------------------
  // The result's "routed" (route_name) and, for "tee", the copy to the
  // host's fd (nullptr when that fd is closed).
  void set_route(const char* routed, std::unique_ptr<TeeSink> tee) noexcept;
  // "pty": the terminal's master, read as this stream. Its reads give at
  // most a few KiB, and EIO, once the child's side is closed, is its end.
  void set_terminal() noexcept { terminal_ = true; }
  const char* routed() const noexcept { return routed_; }
  bool terminal() const noexcept { return terminal_; }
  // The child has exec'd: the pipe's read end (none for a stream routed
  // elsewhere).
  void attach(UniqueFd fd) noexcept { fd_ = std::move(fd); }

  // ---- The pipe ----------------------------------------------------------
  bool open() const noexcept { return fd_.valid(); }
  int fd() const noexcept { return fd_.get(); }
  UvHandle<uv_poll_t>& watch() noexcept { return watch_; }
  // One read(2), EINTR retried: the count, 0 at EOF, -1 with errno.
  ssize_t read_some(char* buf, size_t cap) noexcept;
  // Reads enough to empty a full pipe (or terminal) once its writer is gone.
  int drain_reads() const noexcept { return terminal_ ? 64 : 16; }
  // The watch closed and the descriptor handed over, for Process to close
  // (or keep while a caller may poll it).
  UniqueFd close() noexcept;

  // ---- What sup keeps, and the reader's place: under mu_ -----------------
  Capture& capture() noexcept { return capture_; }
  const Capture& capture() const noexcept { return capture_; }
  // Appends bytes read from the pipe, and the readiness follows.
  void keep(const char* data, size_t len) {
    capture_.append(data, len);
    signal_ready(false);
  }
  // Read but not yet by the reader (sup_output_read's furthest position).
  uint64_t unread() const noexcept { return capture_.total() - reader_pos_; }
  // The reader has read up to pos.
  void reader_at(uint64_t pos) noexcept {
    if (pos > reader_pos_) reader_pos_ = pos;
  }
  // sup_output_fd's eventfd, made at its first call; 0 or -errno.
  int make_ready_fd() noexcept;
  bool has_ready_fd() const noexcept { return ready_fd_.valid(); }
  // What sup_output_fd gives: the reader's epoll set if there is one, else
  // the eventfd.
  int reader_fd() const noexcept { return reader_set_.valid() ? reader_set_.get() : ready_fd_.get(); }
  // The eventfd readable while bytes wait unread or the result is final
  // (level semantics), not readable otherwise (a reader caught up).
  void signal_ready(bool final) noexcept;
  void clear_ready_if_caught_up(bool final) noexcept;
  // Held back (backpressure_bytes, or the tee's slow descriptor): the loop
  // reads the pipe no further. Set under the same lock as the unread count
  // it is decided on, so that a reader that drains everything either sees
  // it set and asks for a resume, or prevents it.
  bool held() const noexcept { return held_; }
  void set_held(bool held) noexcept { held_ = held; }
  // Held back by the tee's descriptor (loop thread only).
  bool tee_held() const noexcept { return tee_held_; }
  void set_tee_held(bool held) noexcept { tee_held_ = held; }

  // ---- The reader's activity (atomics) -----------------------------------
  // The reader (or the tee's descriptor) took bytes at `at`.
  void note_read(Nanos at) noexcept { last_read_.store(at, std::memory_order_relaxed); }
  // While held back, when the reader last took bytes (0: never, or not
  // held): the idle clock counts it as activity.
  Nanos held_back_read() const noexcept { return held_ ? last_read_.load(std::memory_order_relaxed) : 0; }

  // ---- The lease (direct_read.cpp) ---------------------------------------
  PipeHolder holder() const noexcept { return holder_.load(std::memory_order_acquire); }
  bool lent() const noexcept { return holder() == PipeHolder::reader; }
  // The reader's epoll set, holding the eventfd (made first); false if
  // epoll refused (the reader then has the eventfd alone).
  bool make_reader_set() noexcept;
  bool has_reader_set() const noexcept { return reader_set_.valid(); }
  // The pipe into the reader's set; false if epoll refused it.
  bool lend() noexcept;
  // Out of the reader's set, before the loop reads it (a reader would be
  // woken for bytes it may no longer take). lapse: the reader may take it
  // again once caught up. Returns whether it was lent.
  bool take_back(bool lapse) noexcept;
  // Never lent: a reader that comes while a caller drives the process takes
  // it once it has read all that sup holds.
  void lapse() noexcept { holder_.store(PipeHolder::lapsed, std::memory_order_relaxed); }
  // Lent no more, for good (the pipe closed or the child ending).
  void end_lapse() noexcept { holder_.store(PipeHolder::loop, std::memory_order_relaxed); }
  // The reader read n bytes into a buffer of cap (under work_mu_).
  void count_read(ssize_t n, size_t cap) noexcept;
  // The sweep's first look, without work_mu_: whether the reader has not
  // read since the last sweep, or read big chunks (else it keeps up).
  bool lease_in_doubt() noexcept;
  // Its second, under work_mu_: the reader left bytes unread at two sweeps
  // in a row with no read between, or half a pipe after big reads.
  bool reader_left_bytes() noexcept;

  // ---- "tee" (routing.cpp; loop thread) -----------------------------------
  TeeSink* tee() const noexcept { return tee_.get(); }
  UvHandle<uv_poll_t>& tee_watch() noexcept { return tee_watch_; }
  // The tee's descriptor failed: its errno, the result's "tee_error".
  void tee_failed(int error) noexcept {
    if (tee_errno_ == 0) tee_errno_ = error;
  }
  int tee_errno() const noexcept { return tee_errno_; }
  // EPIPE: the stream ends as the descriptor's own reader leaving would.
  bool tee_ended() const noexcept;
  // Copies the host's fd has yet to take, while its watch runs.
  bool copies_pending() const noexcept;
  // What the fd takes at once is written, the rest dropped.
  void close_tee() noexcept;

 private:
  const int stream_;
  bool terminal_ = false;
  const char* routed_ = "pipe";
  UniqueFd fd_;
  UvHandle<uv_poll_t> watch_;

  bool held_ = false;
  Capture capture_;
  uint64_t reader_pos_ = 0;
  UniqueFd ready_fd_;
  bool ready_signaled_ = false;
  // With a lease: the eventfd and, while lent, the pipe. Made under
  // work_mu_ and mu_, then kept until the handle goes.
  UniqueFd reader_set_;
  std::atomic<PipeHolder> holder_{PipeHolder::loop};
  // The reader's reads (taking the lease counts as one) and whether one
  // since the last sweep found the pipe well filled; the count at the last
  // sweep, and whether it found bytes waiting with no read since the one
  // before (the loop's).
  std::atomic<uint64_t> reads_{0};
  std::atomic<bool> read_full_{false};
  uint64_t reads_at_sweep_ = 0;
  bool unread_seen_ = false;
  std::atomic<Nanos> last_read_{0};

  std::unique_ptr<TeeSink> tee_;
  UvHandle<uv_poll_t> tee_watch_;
  bool tee_held_ = false;
  int tee_errno_ = 0;
};

}  // namespace sup
