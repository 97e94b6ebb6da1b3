#include "capture.hpp"

#include <algorithm>
#include <cstring>

#include "page_release.hpp"

namespace sup {

Capture::Capture(uint64_t limit_bytes, uint64_t retain_bytes)
    : head_limit_(limit_bytes / 2),
      tail_limit_(limit_bytes - limit_bytes / 2),
      ring_limit_(std::max(tail_limit_, retain_bytes)) {}

namespace {

// Past this, a buffer is reserved at its limit at once instead of doubling:
// each doubling copies everything and briefly holds both copies. Untouched
// reserved pages cost no memory.
constexpr size_t kGrowInPlaceAfter = 64 * 1024;
constexpr uint64_t kMaxReserve = 64u << 20;

}  // namespace

void Capture::append(const char* data, size_t len) {
  if (flat_) return;  // final: nothing more arrives
  total_ += len;
  if (head_.size() < head_limit_) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(len, head_limit_ - head_.size()));
    if (head_.size() + n > head_.capacity() && head_.size() + n > kGrowInPlaceAfter)
      // Room for the tail too: flatten() then joins in place, no copy.
      head_.reserve(static_cast<size_t>(std::min(head_limit_ + tail_limit_, kMaxReserve)));
    head_.append(data, n);
    data += n;
    len -= n;
  }
  if (len > 0) append_tail(data, len);
}

void Capture::append_tail(const char* data, size_t len) {
  if (ring_limit_ == 0) return;
  if (len >= ring_limit_) {
    // Only the newest ring_limit_ bytes of this chunk survive.
    data += len - ring_limit_;
    len = static_cast<size_t>(ring_limit_);
    tail_.assign(data, data + len);
    tail_start_ = 0;
    tail_len_ = len;
    return;
  }
  if (tail_.size() < ring_limit_) {
    // Still growing: the ring has not wrapped, tail_start_ is 0.
    size_t room = static_cast<size_t>(ring_limit_) - tail_.size();
    size_t n = std::min(room, len);
    if (tail_.size() + n > tail_.capacity() && tail_.size() + n > kGrowInPlaceAfter)
      tail_.reserve(static_cast<size_t>(std::min(ring_limit_, std::max<uint64_t>(kMaxReserve, tail_.size() + n))));
    tail_.insert(tail_.end(), data, data + n);
    tail_len_ += n;
    data += n;
    len -= n;
    if (len == 0) return;
  }
  // Full ring: overwrite the oldest bytes.
  size_t cap = tail_.size();
  size_t write_at = (tail_start_ + tail_len_) % cap;
  size_t first = std::min(len, cap - write_at);
  std::memcpy(tail_.data() + write_at, data, first);
  std::memcpy(tail_.data(), data + first, len - first);
  size_t overflow = tail_len_ + len > cap ? tail_len_ + len - cap : 0;
  tail_start_ = (tail_start_ + overflow) % cap;
  tail_len_ = std::min(cap, tail_len_ + len);
}

size_t Capture::read_at(uint64_t* pos, char* buf, size_t cap) const noexcept {
  if (cap == 0) return 0;  // buf may be NULL then
  if (flat_) {
    // [0, head) then, after the gap, the newest bytes up to total_.
    const std::string& f = flat_bytes_;
    uint64_t tail_begin = total_ - (f.size() - flat_head_);
    size_t at;
    size_t avail;
    if (*pos < flat_head_) {
      at = static_cast<size_t>(*pos);
      // Without a gap the buffer is the stream itself; with one, stop at it.
      avail = (tail_begin == flat_head_ ? f.size() : flat_head_) - at;
    } else {
      if (*pos >= total_) return 0;
      if (*pos < tail_begin) *pos = tail_begin;
      at = flat_head_ + static_cast<size_t>(*pos - tail_begin);
      avail = f.size() - at;
    }
    size_t n = std::min(cap, avail);
    std::memcpy(buf, f.data() + at, n);
    *pos += n;
    return n;
  }
  size_t copied = 0;
  if (*pos < head_.size()) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(cap, head_.size() - *pos));
    std::memcpy(buf, head_.data() + *pos, n);
    *pos += n;
    copied += n;
    buf += n;
    cap -= n;
  }
  uint64_t tail_begin = total_ - tail_len_;
  if (cap == 0 || *pos >= total_) return copied;
  // One call never joins the two sides of a dropped gap: the caller could not
  // tell where it is. The next call makes the jump.
  if (*pos < tail_begin && copied > 0) return copied;
  if (*pos < tail_begin) *pos = tail_begin;
  size_t offset = static_cast<size_t>(*pos - tail_begin);
  size_t n = std::min(cap, tail_len_ - offset);
  size_t ring = tail_.size();
  for (size_t done = 0; done < n;) {
    size_t at = (tail_start_ + offset + done) % ring;
    size_t run = std::min(n - done, ring - at);
    std::memcpy(buf + done, tail_.data() + at, run);
    done += run;
  }
  *pos += n;
  return copied + n;
}

void Capture::flatten() {
  if (flat_ || ring_limit_ != tail_limit_) return;
  // The tail is appended to the head, whose buffer was reserved with room
  // for it, and the ring's pages go back as they are copied: the kept bytes
  // never exist twice, not even for a moment.
  size_t tail = result_tail_len();
  size_t head = head_.size();
  std::string joined = std::move(head_);
  std::string().swap(head_);
  joined.reserve(head + tail);  // a no-op unless the head never grew past 64 KiB
  if (tail > 0) {
    size_t cap = tail_.size();
    size_t from = (tail_start_ + tail_len_ - tail) % cap;
    size_t first = std::min(tail, cap - from);
    append_releasing(joined, tail_.data() + from, first);
    append_releasing(joined, tail_.data(), tail - first);
  }
  std::vector<char>().swap(tail_);
  tail_start_ = 0;
  tail_len_ = 0;
  flat_head_ = head;
  flat_size_ = head + tail;
  flat_bytes_ = std::move(joined);
  flat_ = true;
}

std::string Capture::lend_flat() noexcept {
  lent_ = true;
  return std::move(flat_bytes_);
}

void Capture::return_flat(std::string bytes) noexcept {
  flat_bytes_ = std::move(bytes);
  lent_ = false;
}

void append_releasing(std::string& out, char* src, size_t len) noexcept {
  constexpr size_t kStep = 256 << 10;
  PageReleaser pages(src);
  for (size_t done = 0; done < len;) {
    size_t n = std::min(kStep, len - done);
    out.append(src + done, n);
    done += n;
    pages.read_upto(src + done);
  }
}

std::string Capture::kept() const {
  if (flat_) return flat_bytes_;
  size_t tail = result_tail_len();
  std::string out = head_;
  out.resize(head_.size() + tail);
  uint64_t pos = total_ - tail;
  read_at(&pos, out.data() + head_.size(), tail);
  return out;
}

}  // namespace sup
