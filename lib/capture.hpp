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
#include <optional>
#include <string>
#include <vector>

namespace sup {

class Capture {
 public:
  Capture(uint64_t limit_bytes, uint64_t retain_bytes);

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
  // The kept bytes in one piece after flatten(), else nullptr.
  const std::string* flat() const noexcept { return flat_ ? &*flat_ : nullptr; }

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
    return flat_ ? flat_->size() - flat_head_ : static_cast<size_t>(std::min<uint64_t>(tail_len_, tail_limit_));
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
  std::optional<std::string> flat_;
  size_t flat_head_ = 0;
};

}  // namespace sup
