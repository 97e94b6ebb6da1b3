// What one output stream of the child has written: every byte counted, the
// first half of the limit and the newest half kept. Memory grows with the
// output actually written, never to the limit up front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sup {

class Capture {
 public:
  explicit Capture(uint64_t limit_bytes);

  void append(const char* data, size_t len);

  uint64_t total() const noexcept { return total_; }
  uint64_t omitted() const noexcept { return total_ - head_.size() - tail_len_; }
  bool truncated() const noexcept { return omitted() > 0; }
  size_t head_size() const noexcept { return head_.size(); }

  // Copies kept bytes starting at stream offset *pos into buf. If *pos falls
  // in the dropped middle it first moves to the oldest byte kept after it.
  // Returns the count copied and advances *pos by it.
  size_t read_at(uint64_t* pos, char* buf, size_t cap) const noexcept;

  // Head and tail joined: the exact kept bytes.
  std::string kept() const;

 private:
  void append_tail(const char* data, size_t len);

  uint64_t head_limit_;
  uint64_t tail_limit_;
  std::string head_;
  // Grows up to tail_limit_, then wraps: tail_start_ is the oldest kept byte.
  std::vector<char> tail_;
  size_t tail_start_ = 0;
  size_t tail_len_ = 0;
  uint64_t total_ = 0;
};

}  // namespace sup
