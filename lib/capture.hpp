// What one output stream of the child has written: every byte counted, the
// first half of the limit and the newest half kept for the result. A live
// reader may need more of the newest bytes than that (everything it has not
// read yet, under backpressure): the ring retains at least retain_bytes, and
// only the result is cut to the limit. Memory grows with the output actually
// written, never to the limit up front.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sup {

class Capture {
 public:
  Capture(uint64_t limit_bytes, uint64_t retain_bytes);
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  void append(const char* data, size_t len);

  uint64_t total() const noexcept { return total_; }
  uint64_t omitted() const noexcept { return total_ - head_size() - result_tail_len(); }
  bool truncated() const noexcept { return omitted() > 0; }
  size_t head_size() const noexcept { return flat_ ? flat_head_ : head_.size(); }
  size_t kept_size() const noexcept { return head_size() + result_tail_len(); }

  // Once nothing more is appended (the result is final): the kept bytes move
  // into one buffer and the head and ring are freed, so that the result's
  // bytes exist once, not once more per reader of them. Only when no live
  // reader needs more of the tail than the result keeps.
  void flatten();
  // The kept bytes in one piece after flatten(), else nullptr (also while
  // they are lent out).
  const std::string* flat() const noexcept { return flat_ && !lent_ ? &flat_bytes_ : nullptr; }

  // Lending the flat buffer to the result's JSON text, which then holds the
  // kept bytes in escaped form and nothing else does (result.cpp): the
  // buffer is taken, emptied page by page as it is copied (append_releasing)
  // and given back, rebuilt from the text, only if a reader asks for the
  // bytes again. Sizes and counts stay as they were meanwhile; read_at must
  // not be called until return_flat().
  std::string lend_flat() noexcept;
  bool lent() const noexcept { return lent_; }
  void return_flat(std::string bytes) noexcept;

  // Copies kept bytes starting at stream offset *pos into buf. If *pos falls
  // in the dropped middle it first moves to the oldest byte kept after it; a
  // call that copied head bytes stops at such a gap. Returns the count copied
  // and advances *pos by it.
  size_t read_at(uint64_t* pos, char* buf, size_t cap) const noexcept;

  // Head and the result's tail joined: the exact kept bytes.
  std::string kept() const;

 private:
  void append_tail(const char* data, size_t len);
  size_t result_tail_len() const noexcept {
    return flat_ ? flat_size_ - flat_head_ : static_cast<size_t>(std::min<uint64_t>(tail_len_, tail_limit_));
  }

  uint64_t head_limit_;
  uint64_t tail_limit_;
  uint64_t ring_limit_;
  std::string head_;
  // Grows up to ring_limit_, then wraps: tail_start_ is the oldest kept byte.
  std::vector<char> tail_;
  size_t tail_start_ = 0;
  size_t tail_len_ = 0;
  uint64_t total_ = 0;
  // After flatten(): head then tail in one buffer; the sizes are kept apart
  // so that they stay right while the buffer is lent.
  bool flat_ = false;
  std::string flat_bytes_;
  size_t flat_head_ = 0;
  size_t flat_size_ = 0;
  bool lent_ = false;
};

// Appends len bytes from src to out (which must have the capacity: no
// reallocation, no exception) and hands the pages of src that have been
// copied back to the kernel as it goes (madvise MADV_DONTNEED; they read as
// zeros afterwards): moving a large buffer this way never holds both copies.
// src is writable memory of the caller's, freed by it afterwards.
void append_releasing(std::string& out, char* src, size_t len) noexcept;

}  // namespace sup
