// What one output stream of the child has written: every byte counted, the
// first half of the limit and the newest half kept for the result. A live
// reader may need more of the newest bytes than that (everything it has not
// read yet, under backpressure): the ring retains at least retain_bytes, and
// only the result is cut to the limit. Memory grows with the output actually
// written, never to the limit up front. A limit of kKeepAll keeps every byte.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sup {

struct FreeDeleter {
  void operator()(char* p) const noexcept { std::free(p); }
};
using MallocBuffer = std::unique_ptr<char, FreeDeleter>;

class Capture {
 public:
  // How the buffer grows: realloc, or a test's stand-in.
  using Realloc = void* (*)(void*, size_t);
  static void* system_realloc(void* p, size_t n) noexcept { return std::realloc(p, n); }

  // "max_output_bytes": null. Every byte goes to the head, which grows with
  // the output (the ring is never used, a live reader finds every byte
  // there) until the host's memory runs out; then it ends as append says,
  // and the ring keeps the newest bytes in what the buffer already holds.
  static constexpr uint64_t kKeepAll = UINT64_MAX;

  Capture(uint64_t limit_bytes, uint64_t retain_bytes, Realloc grow = &system_realloc);
  // A buffer of a megabyte or more goes to the BufferPool, for the next
  // capture (with system_realloc only: a test's stand-in owns its own).
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  // Runs on the loop thread, where nothing may throw. When the buffer cannot
  // grow (the host is out of memory), the head ends, giving the second half
  // of its bytes up as room for the newest ones, and the ring keeps wrapping
  // within what the buffer already holds (if that is nothing, the bytes are
  // dropped and it tries to grow again next time). What is not kept counts
  // as omitted; every byte is still counted.
  void append(const char* data, size_t len) noexcept;

  uint64_t total() const noexcept { return total_; }
  // Where the next appended byte goes unless the buffer must grow first
  // (then realloc moves it); nullptr before the first append or once final.
  // For a prefetch only: it may point just past the buffer.
  const char* next_append() const noexcept;
  uint64_t omitted() const noexcept { return total_ - head_size() - result_tail_len(); }
  bool truncated() const noexcept { return omitted() > 0; }
  size_t head_size() const noexcept { return flattened() ? flat_head_ : head_len_; }
  size_t kept_size() const noexcept { return head_size() + result_tail_len(); }

  // Once nothing more is appended (the result is final): the kept bytes
  // become one piece where they are, the ring rotated in place after the
  // head, so that they exist once, not once more per reader of them. Only
  // when no live reader needs more of the tail than the result keeps.
  void flatten() noexcept;
  // The kept bytes in one piece after flatten(), unless lent out.
  std::optional<std::string_view> flat() const noexcept;

  // sup_result_output gave out a pointer to the flat bytes: from now on they
  // stay where they are.
  void hand_out() noexcept {
    if (stage_ == Stage::flat) stage_ = Stage::handed_out;
  }

  // Lending the flat buffer to the result's JSON text, which then holds the
  // kept bytes in escaped form and nothing else does (result.cpp): the
  // buffer is taken, emptied page by page as it is copied (PageReleaser)
  // and given back, rebuilt from the text, only if a reader asks for the
  // bytes again. Sizes and counts stay as they were meanwhile; read_at must
  // not be called until return_flat(). Only the capture's own buffer, not
  // handed out, is lent, once.
  bool lendable() const noexcept { return stage_ == Stage::flat && flat_size_ > 0; }
  MallocBuffer lend_flat() noexcept;
  bool lent() const noexcept { return stage_ == Stage::lent; }
  void return_flat(std::string bytes) noexcept;

  // Copies kept bytes starting at stream offset *pos into buf. If *pos falls
  // in the dropped middle it first moves to the oldest byte kept after it; a
  // call that copied head bytes stops at such a gap. Returns the count copied
  // and advances *pos by it.
  size_t read_at(uint64_t* pos, char* buf, size_t cap) const noexcept;

  // Head and the result's tail joined: the exact kept bytes (a copy).
  std::string kept() const;

 private:
  void append_tail(const char* data, size_t len) noexcept;
  // Room for `need` bytes of buf_: doubling while small, then the whole
  // limit at once (untouched pages cost nothing), doubling past 64 MiB; if
  // that much is refused, `need` alone. False if even that is refused.
  bool reserve(size_t need) noexcept;
  // Out of memory in the ring: its limit becomes what buf_ holds after the
  // head. False if that is nothing.
  bool shrink_ring_to_capacity() noexcept;
  char* ring() const noexcept { return buf_.get() + head_limit_; }
  bool flattened() const noexcept { return stage_ != Stage::collecting; }
  const char* flat_data() const noexcept { return stage_ == Stage::returned ? returned_.data() : buf_.get(); }
  size_t result_tail_len() const noexcept {
    return flattened() ? flat_size_ - flat_head_ : static_cast<size_t>(std::min<uint64_t>(tail_len_, tail_limit_));
  }

  // Lowered only when the buffer cannot grow (append).
  uint64_t head_limit_;
  uint64_t tail_limit_;
  uint64_t ring_limit_;
  Realloc grow_;
  const bool keep_all_;
  // One buffer: the head at [0, head_len_), then, once the head is full,
  // the ring at [head_limit_, head_limit_ + ring_size_), which grows up to
  // ring_limit_ and then wraps: tail_start_ is its oldest byte.
  MallocBuffer buf_;
  size_t cap_ = 0;
  size_t head_len_ = 0;
  size_t ring_size_ = 0;
  size_t tail_start_ = 0;
  size_t tail_len_ = 0;
  uint64_t total_ = 0;
  // Where the kept bytes are: appended to (collecting); then one piece in
  // buf_ (flat), whose pointer sup_result_output may give out (handed_out:
  // they stay there) or which may be lent to the result's text (lent) and
  // come back rebuilt from it, in returned_ (returned). From flat on, the
  // sizes are kept apart, so that they stay right while the bytes are lent.
  enum class Stage { collecting, flat, handed_out, lent, returned };
  Stage stage_ = Stage::collecting;
  size_t flat_head_ = 0;
  size_t flat_size_ = 0;
  std::string returned_;
};

// Rotates the n bytes at p left by k, in place (block swaps through a small
// buffer on the stack): p[k..n) then p[0..k).
void rotate_bytes(char* p, size_t n, size_t k) noexcept;

}  // namespace sup
