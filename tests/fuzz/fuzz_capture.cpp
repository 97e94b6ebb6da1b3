// libFuzzer harness: sup::Capture (what an output stream keeps) and the
// result JSON of one stream (sup::StreamJson), including kept bytes moved
// into that text and brought back from it.
//
// Input layout (short inputs are padded with zeros):
//   [0..1]  limit, little endian, modulo 4097 (bytes: limit/2 head, the rest tail);
//           0xFFFF is Capture::kKeepAll ("max_output_bytes": null: all head)
//   [2]     retain: bits 0-1 choose 0, the tail limit, the limit, or the limit
//           plus (bits 2-7) * 7 (a live reader holding back more of the tail);
//           with kKeepAll, 4096 stands for the limit
//   [3]     read_at buffer size: 0 means 64 KiB, else 1..255
//   [4]     low 4 bits: number of chunk sizes that follow (0..15);
//           bit 4: flatten() before the second round of checks;
//           bits 5-7: 0, or a memory budget of (bits 5-7) * 700 - 600 bytes
//           the buffer may not grow past (the host out of memory)
//   [5..]   the chunk sizes, one byte each (clamped to what is left)
//   rest    the stream's bytes; what the chunk sizes leave is appended last
#include <cjson/cJSON.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture.hpp"
#include "json_text.hpp"

namespace {

[[noreturn]] void violated(const char* what, int line) {
  std::fprintf(stderr, "fuzz_capture: invariant violated (line %d): %s\n", line, what);
  std::abort();
}

#define CHECK(cond)                                \
  do {                                             \
    if (!(cond)) violated(#cond, __LINE__);        \
  } while (0)

// Length of the well-formed UTF-8 sequence at s[0] (Unicode table 3-7:
// no overlongs, no surrogates, nothing past U+10FFFF), 0 if there is none.
size_t utf8_length(const unsigned char* s, size_t avail) {
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c <= 0x7F) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (avail < n) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return n;
}

bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(p + i, s.size() - i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// The documented text form of bytes: well-formed sequences kept, every other
// byte one U+FFFD.
std::string as_text(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(p + i, s.size() - i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Walks read_at from 0 to the end: it must return exactly `expected`
// (head, then `tail` bytes ending at total), jumping over the gap between
// them exactly once when there is one, from the end of the head (with a zero
// tail, the jump is a call that returns nothing and moves to the end).
void check_walk(const sup::Capture& c, size_t cap, const std::string& stream, size_t head,
                size_t tail) {
  const uint64_t total = c.total();
  const bool gap = head + tail < total;
  std::string got;
  std::vector<char> buf(cap);
  uint64_t pos = 0;
  int jumps = 0;
  for (int calls = 0;; ++calls) {
    CHECK(calls <= static_cast<int>(total) + 2);  // progress
    uint64_t before = pos;
    size_t n = c.read_at(&pos, buf.data(), cap);
    CHECK(n <= cap);
    if (n == 0) {
      if (pos != before) {
        // Nothing kept after the gap (a zero tail): the jump lands at the end.
        ++jumps;
        CHECK(gap && tail == 0);
        CHECK(before == head);
        CHECK(pos == total);
        continue;
      }
      break;
    }
    uint64_t start = pos - n;
    if (start != before) {
      ++jumps;
      CHECK(gap);
      CHECK(before == head);               // only from the end of the head...
      CHECK(start == total - tail);        // ...to the oldest tail byte kept
    }
    CHECK(start + n <= total);
    CHECK(std::memcmp(buf.data(), stream.data() + start, n) == 0);
    got.append(buf.data(), n);
  }
  CHECK(pos == total);
  CHECK(jumps == (gap ? 1 : 0));
  CHECK(got == stream.substr(0, head) + stream.substr(total - tail));
  // Nothing past the end, and a position in the gap moves to its end.
  pos = total;
  CHECK(c.read_at(&pos, buf.data(), cap) == 0 && pos == total);
  CHECK(c.read_at(&pos, nullptr, 0) == 0);
  if (gap) {
    pos = head + (total - tail - head) / 2;
    size_t n = c.read_at(&pos, buf.data(), cap);
    CHECK(n == std::min<uint64_t>(cap, tail));
    CHECK(pos == total - tail + n);
    CHECK(std::memcmp(buf.data(), stream.data() + (total - tail), n) == 0);
  }
}

void check_json(sup::Capture& c, const std::string& stream, size_t head) {
  std::string text = "{\"s\": ";
  sup::StreamJson part(c, "pipe");
  text.reserve(6 + part.length() + 1);
  const char* before = text.data();
  part.append(text);
  // The length the result is reserved with, exactly: no reallocation.
  CHECK(text.size() - 6 == part.length());
  CHECK(text.data() == before);
  const std::string kept = c.kept();
  // The text gives the bytes back exactly unless a byte was replaced.
  const std::string back = part.where().bytes(text, kept.size());
  CHECK(part.lossless() == (back == kept));
  const size_t cut = c.truncated() ? head : kept.size();
  CHECK(part.lossless() == (as_text(kept.substr(0, cut)) + as_text(kept.substr(cut)) == kept));
  if (c.lendable() && part.lossless()) {
    // Moved instead of copied: the same text, and the bytes come back from it.
    std::string moved = "{\"s\": ";
    moved.reserve(6 + part.length() + 1);
    sup::MallocBuffer lent = c.lend_flat();
    CHECK(c.lent() && !c.flat() && c.kept_size() == kept.size() && c.total() == stream.size());
    part.append_moving(moved, lent.get());
    lent.reset();
    CHECK(moved == text);
    c.return_flat(part.where().bytes(moved, c.kept_size()));
    CHECK(!c.lent() && c.flat() && *c.flat() == kept && !c.lendable());
  }
  text += "}";
  CHECK(valid_utf8(text));
  CHECK(text.find('\0') == std::string::npos);
  cJSON* root = cJSON_ParseWithOpts(text.c_str(), nullptr, 1);
  CHECK(root != nullptr);
  const cJSON* s = cJSON_GetObjectItemCaseSensitive(root, "s");
  CHECK(cJSON_IsObject(s));
  const cJSON* bytes = cJSON_GetObjectItemCaseSensitive(s, "bytes");
  const cJSON* captured = cJSON_GetObjectItemCaseSensitive(s, "captured");
  const cJSON* truncated = cJSON_GetObjectItemCaseSensitive(s, "truncated");
  const cJSON* omitted = cJSON_GetObjectItemCaseSensitive(s, "omitted_bytes");
  CHECK(cJSON_IsNumber(bytes) && static_cast<uint64_t>(bytes->valuedouble) == c.total());
  CHECK(cJSON_IsString(captured));
  CHECK(cJSON_IsBool(truncated) && (cJSON_IsTrue(truncated) != 0) == c.truncated());
  CHECK(cJSON_IsNumber(omitted) && static_cast<uint64_t>(omitted->valuedouble) == c.omitted());
  // cJSON ends a string at a \u0000: compare the text only for bytes without NUL.
  if (kept.find('\0') == std::string::npos) {
    const std::string got = captured->valuestring;
    if (!c.truncated()) {
      CHECK(kept == stream);
      if (valid_utf8(stream)) CHECK(got == stream);
      CHECK(got == as_text(stream));
    } else {
      std::string marker = "[sup: " + std::to_string(c.omitted()) + " bytes omitted]";
      CHECK(got.find(marker) != std::string::npos);
      CHECK(starts_with(got, as_text(kept.substr(0, head))));
      CHECK(ends_with(got, as_text(kept.substr(head))));
    }
  }
  cJSON_Delete(root);
}

size_t g_budget = SIZE_MAX;

void* realloc_within_budget(void* p, size_t n) { return n <= g_budget ? std::realloc(p, n) : nullptr; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t hdr[5] = {0, 0, 0, 0, 0};
  std::memcpy(hdr, data, std::min<size_t>(size, 5));
  size_t at = std::min<size_t>(size, 5);
  const bool keep_all = (hdr[0] | (hdr[1] << 8)) == 0xFFFF;
  const uint64_t limit = keep_all ? sup::Capture::kKeepAll : (hdr[0] | (hdr[1] << 8)) % 4097u;
  // Keeping all, the head is unbounded (limit / 2 is more than any input)
  // and there is no tail, nor a ring for a reader: it reads the head.
  const uint64_t tail_limit = keep_all ? 0 : limit - limit / 2;
  const uint64_t retain_base = keep_all ? 4096 : limit;
  uint64_t retain = 0;
  switch (hdr[2] & 3) {
    case 0: retain = 0; break;
    case 1: retain = tail_limit; break;
    case 2: retain = retain_base; break;
    case 3: retain = retain_base + (hdr[2] >> 2) * 7u; break;
  }
  const size_t cap = hdr[3] == 0 ? 65536 : hdr[3];
  const size_t nchunks = hdr[4] & 15;
  const bool flatten = (hdr[4] & 16) != 0;
  const bool starved = (hdr[4] >> 5) != 0;
  g_budget = starved ? (hdr[4] >> 5) * 700u - 600u : SIZE_MAX;
  std::vector<size_t> chunks;
  for (size_t i = 0; i < nchunks && at < size; ++i) chunks.push_back(data[at++]);
  const std::string stream(reinterpret_cast<const char*>(data) + at, size - at);

  sup::Capture c(limit, retain, realloc_within_budget);
  size_t fed = 0;
  for (size_t len : chunks) {
    len = std::min(len, stream.size() - fed);
    c.append(stream.data() + fed, len);
    fed += len;
  }
  c.append(stream.data() + fed, stream.size() - fed);

  const uint64_t total = stream.size();
  size_t head = static_cast<size_t>(std::min<uint64_t>(total, limit / 2));
  size_t tail = static_cast<size_t>(std::min<uint64_t>(total - head, tail_limit));
  uint64_t ring_limit = keep_all ? 0 : std::max(tail_limit, retain);
  size_t ring = static_cast<size_t>(std::min<uint64_t>(total - head, ring_limit));
  if (starved) {
    // Out of memory: less may be kept, never more, and what is kept is a
    // head from offset 0 and the newest bytes. The live ring's size is what
    // a read from the end of the head gives. Keeping all, the head ends
    // and the room it gave up holds the newest bytes: a tail of any size.
    CHECK(c.head_size() <= head && c.kept_size() <= g_budget);
    head = c.head_size();
    CHECK(c.kept_size() - head <= std::min<uint64_t>(total - head, keep_all ? UINT64_MAX : tail_limit));
    tail = c.kept_size() - head;
    std::vector<char> all(total + 1);
    uint64_t pos = head;
    const size_t live = c.read_at(&pos, all.data(), all.size());
    CHECK(live <= std::min<uint64_t>(total - head, keep_all ? UINT64_MAX : ring_limit) && live >= tail);
    ring = live;
  }

  CHECK(c.total() == total);
  CHECK(c.head_size() == head);
  const std::string kept = c.kept();
  CHECK(kept == stream.substr(0, head) + stream.substr(total - tail));
  CHECK(c.kept_size() == kept.size());
  CHECK(c.omitted() == total - kept.size());
  CHECK(c.truncated() == (c.omitted() > 0));
  CHECK(!c.flat());
  // Live: the reader sees the whole ring, which may be more than the result keeps.
  check_walk(c, cap, stream, head, ring);
  check_json(c, stream, head);

  if (flatten) {
    c.flatten();
    if (starved && c.flat()) {
      CHECK(*c.flat() == kept);  // the ring may have shrunk to the result's tail
    } else if (ring_limit == tail_limit) {
      CHECK(c.flat());
      CHECK(*c.flat() == kept);
    } else {
      CHECK(!c.flat());  // a live reader may still need the ring
    }
    // Nothing more arrives once final.
    if (c.flat()) c.append("x", 1);
    CHECK(c.total() == total);
    CHECK(c.kept() == kept);
    CHECK(c.kept_size() == kept.size());
    CHECK(c.head_size() == head);
    CHECK(c.omitted() == total - kept.size());
    check_walk(c, cap, stream, head, c.flat() ? tail : ring);
    check_json(c, stream, head);
  }
  return 0;
}
