// The child's stdout and stderr together: what is read is kept, a stream is held back and resumed, and the kept bytes are handed out.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "backpressure.hpp"
#include "clock.hpp"
#include "json_text.hpp"
#include "output_stream.hpp"
#include "sup.h"
#include "unique_fd.hpp"

namespace sup {

struct Spec;

// Owns both OutputStreams, the backpressure window, the count of threads
// in sup_output_wait, and the kept bytes as the handle hands them out.
// Who touches what:
// - each stream as output_stream.hpp says, where mu_ is the process's mutex
//   given here: the methods that take it say so, the rest that touch what
//   it guards say "under mu_" and are called with it held;
// - the backpressure's lift, holding back and resuming: under work_mu_
//   (the loop thread, or a caller driving the process).
// Holding a stream back stops its watch; starting a watch again is the
// process's (its loop, its callbacks): resume() and lift() say which.
class Streams {
 public:
  // The routes, captures and windows from the spec; read_buffer: the most
  // one read appends (Engine::read_buffer_size).
  Streams(const Spec& spec, size_t read_buffer, std::mutex& mu, std::condition_variable& changed);
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;

  OutputStream& out() noexcept { return out_; }
  OutputStream& err() noexcept { return err_; }
  const OutputStream& out() const noexcept { return out_; }
  const OutputStream& err() const noexcept { return err_; }
  // SUP_STDOUT or SUP_STDERR.
  OutputStream& of(int stream) noexcept { return stream == 1 ? out_ : err_; }
  const OutputStream& other(const OutputStream& pipe) const noexcept { return &pipe == &out_ ? err_ : out_; }
  std::array<OutputStream*, 2> both() noexcept { return {&out_, &err_}; }
  std::array<const OutputStream*, 2> both() const noexcept { return {&out_, &err_}; }
  const Backpressure& backpressure() const noexcept { return backpressure_; }

  // Either stream has a pipe still open / a tee / is lent to its reader.
  bool any_open() const noexcept { return out_.open() || err_.open(); }
  bool any_tee() const noexcept { return out_.tee() || err_.tee(); }
  bool any_lent() const noexcept { return out_.lent() || err_.lent(); }
  // Copies a tee's host fd has yet to take (loop thread).
  bool copies_pending() const noexcept { return out_.copies_pending() || err_.copies_pending(); }
  // Each tee writes what its fd takes at once, and drops the rest (loop thread).
  void close_tees() noexcept {
    out_.close_tee();
    err_.close_tee();
  }
  // sup_output_total, the result's omitted bytes, and the bytes read from
  // both (what an input-wait look compares). Take mu_.
  uint64_t total(int stream);
  uint64_t omitted(int stream);
  uint64_t total_read();

  // ---- Reading (under work_mu_) ------------------------------------------
  // Bytes read from pipe: kept, its readiness signalled, a thread in
  // sup_output_wait woken. Takes mu_.
  void keep(OutputStream& pipe, const char* data, size_t len);
  // More than the window unread: held back, its watch stopped. Takes mu_.
  void hold_back_if_needed(OutputStream& pipe);
  // The tee's host fd lags the child by more than TeeSink::kHoldBack: held
  // back until it takes half of that (unless the backpressure is lifted, or
  // `ending`: the main process gone or being ended). Takes mu_.
  void hold_for_tee(OutputStream& pipe, bool ending);
  // The tee caught up: false if the window still holds the stream (resume()
  // frees it), else it is free, to be watched again. Takes mu_.
  bool release_tee_hold(OutputStream& pipe);
  // A held stream (not by its tee) its reader has read down to half the
  // window: free, to be watched again. Takes mu_.
  bool resume(OutputStream& pipe);
  // Lifts the backpressure for good: each stream is the loop's, not held.
  // Returns which were held or lent (and so want a watch again), or
  // nothing if it was lifted already. Takes mu_.
  std::array<bool, 2> lift();
  bool any_held() const noexcept { return out_.held() || err_.held(); }
  // The latest read by the reader of a held stream, 0 for none: the idle
  // clock counts it as activity (Deadlines::silence_deadline).
  Nanos held_back_read() const noexcept;
  // Not held (takes mu_).
  void free(OutputStream& pipe);
  // Closes the pipe's watch; its descriptor, for the process to close or
  // retire (CallerDrivers). Takes mu_.
  UniqueFd close(OutputStream& pipe);

  // ---- Waiting for output (under mu_) ------------------------------------
  void add_waiter() noexcept { ++waiters_; }
  void remove_waiter() noexcept { --waiters_; }
  // A read appended bytes: wakes the threads in sup_output_wait, if any.
  void wake_waiters() noexcept {
    if (waiters_ > 0) changed_.notify_all();
  }
  // The result is final: both eventfds readable for good.
  void signal_final() noexcept;
  // What sup_output_read touches first (Process::prefetch_for_read).
  const void* waiters_at() const noexcept { return &waiters_; }

  // ---- The kept bytes, once final (under mu_) ----------------------------
  // The captures flattened into one buffer each (once), if final: nothing
  // is appended any more.
  void flatten(bool final);
  // The stream's part of the result's text: a large stream whose text gives
  // its bytes back exactly moves into it instead of being copied.
  void append_json(std::string& j, OutputStream& pipe, StreamJson& text);
  // Kept bytes that moved into the result's text, rebuilt from it for a
  // reader that asks for them after all. text: the result's text, null
  // before it is made (nothing has moved then). May throw std::bad_alloc.
  void bring_back(OutputStream& pipe, const std::string* text);
  // sup_result_output: the kept bytes, valid until the handle goes. May
  // throw std::bad_alloc.
  std::string_view kept(int stream, const std::string* text);

 private:
  // Each stream's place in kept_ and kept_in_text_.
  static size_t slot(int stream) noexcept { return stream == SUP_STDOUT ? 0 : 1; }

  std::mutex& mu_;
  std::condition_variable& changed_;
  Backpressure backpressure_;  // the lift under work_mu_
  OutputStream out_;
  OutputStream err_;
  int waiters_ = 0;                    // under mu_: threads in sup_output_wait
  std::optional<std::string> kept_[2];  // under mu_: the kept bytes copied out
  KeptInText kept_in_text_[2];          // under mu_: where the kept bytes went in the text
};

}  // namespace sup
