#include "capture.hpp"

#include <algorithm>
#include <cstring>

#include "buffer_pool.hpp"

namespace sup {

Capture::Capture(uint64_t limit_bytes, uint64_t retain_bytes, Realloc grow)
    : head_limit_(limit_bytes == kKeepAll ? kKeepAll : limit_bytes / 2),
      tail_limit_(limit_bytes == kKeepAll ? 0 : limit_bytes - limit_bytes / 2),
      ring_limit_(limit_bytes == kKeepAll ? 0 : std::max(tail_limit_, retain_bytes)),
      grow_(grow),
      keep_all_(limit_bytes == kKeepAll) {}

Capture::~Capture() {
  if (!buf_ || grow_ != &system_realloc) return;
  if (BufferPool* pool = BufferPool::shared())
    pool->give(buf_.release(), cap_);
}

namespace {

// Past this, the buffer is reserved at its limit at once instead of
// doubling: each doubling copies everything and briefly holds both copies.
// Untouched reserved pages cost no memory.
constexpr size_t kGrowInPlaceAfter = 64 * 1024;
constexpr uint64_t kMaxReserve = 64u << 20;
// Keeping every byte, out of memory: the least the ring is then given,
// where the buffer holds less after the head.
constexpr uint64_t kKeepAllRing = 64 * 1024;

}  // namespace

bool Capture::reserve(size_t need) noexcept {
  if (need <= cap_) return true;
  const size_t whole = static_cast<size_t>(head_limit_ + ring_limit_);
  size_t want = std::max({need, cap_ * 2, size_t{256}});
  if (need > kGrowInPlaceAfter) want = std::max(want, static_cast<size_t>(std::min<uint64_t>(whole, kMaxReserve)));
  want = std::min(want, whole);
  // The jump to the whole limit: a buffer of that size another capture
  // left, its pages already the host's (buffer_pool.hpp), instead of fresh
  // ones. What was written so far (the first 64 KiB or so) moves into it.
  if (grow_ == &system_realloc && want >= BufferPool::kPooledFrom) {
    BufferPool* pool = BufferPool::shared();
    if (char* reused = pool != nullptr ? pool->take(want) : nullptr) {
      if (cap_ > 0) std::memcpy(reused, buf_.get(), cap_);
      buf_.reset(reused);
      cap_ = want;
      return true;
    }
  }
  void* grown = grow_(buf_.get(), want);
  // Refused (strict overcommit, RLIMIT_AS): the exact need may still fit.
  if (grown == nullptr && want > need) grown = grow_(buf_.get(), want = need);
  if (grown == nullptr) return false;
  (void)buf_.release();
  buf_.reset(static_cast<char*>(grown));
  cap_ = want;
  return true;
}

bool Capture::shrink_ring_to_capacity() noexcept {
  // The head is full here, so buf_ holds at least head_limit_ bytes.
  const uint64_t room = cap_ - head_limit_;
  if (room == 0) return false;
  ring_limit_ = std::min(ring_limit_, room);
  tail_limit_ = std::min(tail_limit_, ring_limit_);
  return true;
}

void Capture::append(const char* data, size_t len) noexcept {
  if (flattened() || len == 0) return;  // final: nothing more arrives
  total_ += len;
  if (head_len_ < head_limit_) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(len, head_limit_ - head_len_));
    if (reserve(head_len_ + n)) {
      std::memcpy(buf_.get() + head_len_, data, n);
      head_len_ += n;
      data += n;
      len -= n;
    } else {
      // Its bytes must run from offset 0 without a gap, so the head ends
      // here. The newest bytes (a child's last words) matter more than the
      // middle: the second half of what it holds becomes room for the ring,
      // which starts right after it.
      head_len_ /= 2;
      head_limit_ = head_len_;
      // Keeping every byte, there was no ring: it gets what the buffer
      // holds after the new head (shrunk further if even that is refused).
      if (ring_limit_ == 0 && tail_limit_ == 0 && keep_all_) {
        ring_limit_ = tail_limit_ = std::max<uint64_t>(cap_ - head_len_, kKeepAllRing);
      }
    }
  }
  if (len > 0) append_tail(data, len);
}

void Capture::append_tail(const char* data, size_t len) noexcept {
  // Here the head is full: the ring starts right after it.
  if (ring_limit_ == 0) return;
  if (len >= ring_limit_) {
    // Only the newest ring_limit_ bytes of this chunk survive.
    if (!reserve(static_cast<size_t>(head_limit_ + ring_limit_))) {
      if (shrink_ring_to_capacity()) append_tail(data, len);
      return;
    }
    data += len - ring_limit_;
    len = static_cast<size_t>(ring_limit_);
    std::memcpy(ring(), data, len);
    ring_size_ = len;
    tail_start_ = 0;
    tail_len_ = len;
    return;
  }
  if (ring_size_ < ring_limit_) {
    // Still growing: the ring has not wrapped, tail_start_ is 0.
    size_t n = std::min(static_cast<size_t>(ring_limit_) - ring_size_, len);
    if (!reserve(static_cast<size_t>(head_limit_) + ring_size_ + n)) {
      if (shrink_ring_to_capacity()) append_tail(data, len);
      return;
    }
    std::memcpy(ring() + ring_size_, data, n);
    ring_size_ += n;
    tail_len_ += n;
    data += n;
    len -= n;
    if (len == 0) return;
  }
  // Full ring: overwrite the oldest bytes.
  size_t cap = ring_size_;
  size_t write_at = (tail_start_ + tail_len_) % cap;
  size_t first = std::min(len, cap - write_at);
  std::memcpy(ring() + write_at, data, first);
  std::memcpy(ring(), data + first, len - first);
  size_t overflow = tail_len_ + len > cap ? tail_len_ + len - cap : 0;
  tail_start_ = (tail_start_ + overflow) % cap;
  tail_len_ = std::min(cap, tail_len_ + len);
}

const char* Capture::next_append() const noexcept {
  if (flattened() || !buf_) return nullptr;
  if (head_len_ < head_limit_) return buf_.get() + head_len_;
  if (ring_size_ < ring_limit_ || ring_size_ == 0) return ring() + ring_size_;
  return ring() + (tail_start_ + tail_len_) % ring_size_;
}

size_t Capture::read_at(uint64_t* pos, char* buf, size_t cap) const noexcept {
  if (cap == 0) return 0;  // buf may be NULL then
  if (flattened()) {
    // [0, head) then, after the gap, the newest bytes up to total_.
    const char* f = flat_data();
    uint64_t tail_begin = total_ - (flat_size_ - flat_head_);
    size_t at;
    size_t avail;
    if (*pos < flat_head_) {
      at = static_cast<size_t>(*pos);
      // Without a gap the buffer is the stream itself; with one, stop at it.
      avail = (tail_begin == flat_head_ ? flat_size_ : flat_head_) - at;
    } else {
      if (*pos >= total_) return 0;
      if (*pos < tail_begin) *pos = tail_begin;
      at = flat_head_ + static_cast<size_t>(*pos - tail_begin);
      avail = flat_size_ - at;
    }
    size_t n = std::min(cap, avail);
    if (n == 0) return 0;
    std::memcpy(buf, f + at, n);
    *pos += n;
    return n;
  }
  size_t copied = 0;
  if (*pos < head_len_) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(cap, head_len_ - *pos));
    std::memcpy(buf, buf_.get() + *pos, n);
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
  for (size_t done = 0; done < n;) {
    size_t at = (tail_start_ + offset + done) % ring_size_;
    size_t run = std::min(n - done, ring_size_ - at);
    std::memcpy(buf + done, ring() + at, run);
    done += run;
  }
  *pos += n;
  return copied + n;
}

void Capture::flatten() noexcept {
  if (flattened() || ring_limit_ != tail_limit_) return;
  // The ring sits right after the full head: rotated so that its oldest
  // byte comes first, head and tail are one piece where they are. Nothing
  // is copied elsewhere, no page is added: the kept bytes never exist
  // twice, not even for a moment. (With the ring at the result's limit, the
  // ring holds exactly the result's tail.)
  if (tail_len_ > 0) rotate_bytes(ring(), ring_size_, tail_start_);
  flat_head_ = head_len_;
  flat_size_ = head_len_ + tail_len_;
  tail_start_ = 0;
  stage_ = Stage::flat;
}

std::optional<std::string_view> Capture::flat() const noexcept {
  if (!flattened() || stage_ == Stage::lent) return std::nullopt;
  // Never a null pointer, even for no bytes: sup_result_output's NULL means
  // "no result".
  const char* data = flat_data();
  return std::string_view(data != nullptr ? data : "", flat_size_);
}

MallocBuffer Capture::lend_flat() noexcept {
  stage_ = Stage::lent;
  cap_ = 0;
  return std::move(buf_);
}

void Capture::return_flat(std::string bytes) noexcept {
  returned_ = std::move(bytes);
  stage_ = Stage::returned;
}

std::string Capture::kept() const {
  if (auto f = flat()) return std::string(*f);
  size_t tail = result_tail_len();
  std::string out(head_len_ + tail, '\0');
  if (head_len_ > 0) std::memcpy(out.data(), buf_.get(), head_len_);
  uint64_t pos = total_ - tail;
  read_at(&pos, out.data() + head_len_, tail);
  return out;
}

void rotate_bytes(char* p, size_t n, size_t k) noexcept {
  // Gries and Mills' block swaps: the shorter side is swapped into its
  // place at the far end of the longer one, and what remains is again a
  // rotation, of fewer bytes. Every swap is sequential memory traffic.
  char tmp[16 * 1024];
  auto swap_blocks = [&tmp](char* a, char* b, size_t len) {
    for (size_t done = 0; done < len;) {
      size_t c = std::min(sizeof tmp, len - done);
      std::memcpy(tmp, a + done, c);
      std::memcpy(a + done, b + done, c);
      std::memcpy(b + done, tmp, c);
      done += c;
    }
  };
  while (k != 0 && k != n) {
    size_t left = k, right = n - k;
    if (left <= right) {
      // A B1 B2 with |B2| = |A|: swap A and B2, A is in place at the end.
      swap_blocks(p, p + n - left, left);
      n -= left;  // B2 B1 remain, to be rotated left by |A| again
    } else {
      // A1 A2 B with |A1| = |B|: swap A1 and B, B is in place at the front.
      swap_blocks(p, p + left, right);
      p += right;
      n -= right;
      k = left - right;  // A2 A1 remain, rotated left by |A2|
    }
  }
}

}  // namespace sup
