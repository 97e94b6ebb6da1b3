#include "json_text.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "capture.hpp"
#include "page_release.hpp"

namespace sup {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence starting at s[0], or 0 if invalid
// (RFC 3629 table 3-7 ranges).
size_t utf8_sequence_length(const unsigned char* s, size_t avail) {
  unsigned char c = s[0];
  auto cont = [&](size_t i, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i < avail && s[i] >= lo && s[i] <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Where escaped text goes: appended to a string, or only counted, so that a
// result can be sized exactly before it is written.
// escape_body tells the sink of each byte replaced by U+FFFD (the text then
// no longer gives the bytes back) and, between whole characters, how far
// into the input it is (so that a sink can free what it has read).
struct Appender {
  std::string& out;
  void put(char c) { out.push_back(c); }
  void put(const char* s, size_t n) { out.append(s, n); }
  void replaced() {}
  void progress(size_t) {}
};
struct Counter {
  size_t n = 0;
  size_t replaced_bytes = 0;
  void put(char) { ++n; }
  void put(const char*, size_t k) { n += k; }
  void replaced() { ++replaced_bytes; }
  void progress(size_t) {}
};
// Appends, and gives the input's pages back to the kernel as it passes them
// (the input is a lent buffer, freed afterwards).
struct ReleasingAppender : Appender {
  ReleasingAppender(std::string& o, const char* s) : Appender{o}, src(s), pages(s) {}
  const char* src;
  PageReleaser pages;
  void progress(size_t i) { pages.read_upto(src + i); }
};

// What each byte becomes in JSON text: 1 itself, 2 a two-character escape,
// 6 \u00XX; 0 for a byte of a UTF-8 sequence, decoded on its own.
constexpr std::array<unsigned char, 256> make_escape_lengths() {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 0x80; ++c) t[c] = c < 0x20 ? 6 : 1;
  for (int c : {'"', '\\', '\n', '\r', '\t', '\b', '\f'}) t[c] = 2;
  return t;
}
constexpr std::array<unsigned char, 256> kEscapeLength = make_escape_lengths();

constexpr size_t kLongestRun = 256 << 10;

// True if none of the eight bytes at p needs more than itself in JSON text:
// no control byte, no '"' or '\\', nothing from 0x80 up. Eight at a time
// (SWAR): a word with such a byte is always caught, and then looked at byte
// by byte, since a borrow may also mark the bytes above it.
inline bool all_plain(const unsigned char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101u;
  constexpr uint64_t kHigh = 0x8080808080808080u;
  uint64_t x;
  std::memcpy(&x, p, sizeof x);
  const uint64_t control = (x - kOnes * 0x20) & ~x;  // a byte below 0x20
  const uint64_t q = x ^ (kOnes * '"');
  const uint64_t b = x ^ (kOnes * '\\');
  const uint64_t quote = (q - kOnes) & ~q;            // a byte equal to '"'
  const uint64_t backslash = (b - kOnes) & ~b;        // ... or to '\\'
  return ((control | quote | backslash | x) & kHigh) == 0;
}

template <class Sink>
void escape_body(Sink& sink, const char* data, size_t len) {
  static const char kHex[] = "0123456789abcdef";
  const auto* s = reinterpret_cast<const unsigned char*>(data);
  for (size_t i = 0; i < len;) {
    // Runs of plain ASCII and valid UTF-8, most of any text, go in one
    // piece (of about 256 KiB at most: a releasing sink frees its input
    // between pieces).
    size_t end = i;
    const size_t run_end = len - i > kLongestRun ? i + kLongestRun : len;
    for (;;) {
      while (end + 8 <= run_end && all_plain(s + end)) end += 8;
      while (end < run_end && kEscapeLength[s[end]] == 1) ++end;
      if (end >= run_end || s[end] < 0x80) break;
      // The commonest sequences first: two bytes (Latin, Greek, Cyrillic...)
      // and three outside the surrogates' lead byte (the rest of the BMP).
      const unsigned char c = s[end];
      auto cont = [&](size_t k) { return (s[end + k] & 0xC0) == 0x80; };
      if (c >= 0xC2 && c <= 0xDF && len - end >= 2 && cont(1)) {
        end += 2;
        continue;
      }
      if (c >= 0xE1 && c <= 0xEF && c != 0xED && len - end >= 3 && cont(1) && cont(2)) {
        end += 3;
        continue;
      }
      const size_t n = utf8_sequence_length(s + end, len - end);
      if (n == 0) break;
      end += n;  // may pass run_end by three bytes at most
    }
    if (end > i) {
      sink.put(data + i, end - i);
      i = end;
      sink.progress(i);
      continue;
    }
    unsigned char c = s[i];
    const char* pair = nullptr;
    switch (c) {
      case '"': pair = "\\\""; break;
      case '\\': pair = "\\\\"; break;
      case '\n': pair = "\\n"; break;
      case '\r': pair = "\\r"; break;
      case '\t': pair = "\\t"; break;
      case '\b': pair = "\\b"; break;
      case '\f': pair = "\\f"; break;
      default: break;
    }
    if (pair != nullptr) {
      sink.put(pair, 2);
      ++i;
      continue;
    }
    if (c < 0x20) {
      sink.put("\\u00", 4);
      sink.put(kHex[c >> 4]);
      sink.put(kHex[c & 15]);
      ++i;
      continue;
    }
    size_t n = utf8_sequence_length(s + i, len - i);
    if (n == 0) {
      sink.put(kReplacement, 3);
      sink.replaced();
      ++i;
    } else {
      sink.put(data + i, n);
      i += n;
    }
  }
}

}  // namespace

void append_json_string(std::string& out, const char* data, size_t len) {
  out.reserve(out.size() + len + 2);
  out.push_back('"');
  append_json_string_body(out, data, len);
  out.push_back('"');
}

void append_json_string_body(std::string& out, const char* data, size_t len) {
  Appender sink{out};
  escape_body(sink, data, len);
}

size_t json_string_body_length(const char* data, size_t len) {
  Counter sink;
  escape_body(sink, data, len);
  return sink.n;
}

namespace {

size_t unhex(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

}  // namespace

void append_json_unescaped(std::string& out, const char* text, size_t len) {
  for (size_t i = 0; i < len;) {
    const void* found = std::memchr(text + i, '\\', len - i);
    size_t end = found ? static_cast<size_t>(static_cast<const char*>(found) - text) : len;
    out.append(text + i, end - i);
    if (end + 1 >= len) return;  // no escape (a lone trailing backslash is not ours)
    char e = text[end + 1];
    i = end + 2;
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'u':  // \u00XX: escape_body writes nothing else with \u
        if (i + 4 <= len) out.push_back(static_cast<char>(unhex(text[i + 2]) << 4 | unhex(text[i + 3])));
        i += 4;
        break;
      default: out.push_back(e); break;  // \" and \\ (and \/ from elsewhere)
    }
  }
}

StreamJson::StreamJson(const Capture& c, const char* routed, const char* tee_error) {
  if (auto flat = c.flat()) {
    bytes_ = *flat;
  } else {
    copy_ = c.kept();
    bytes_ = copy_;
  }
  const std::string_view k = bytes_;
  head_ = c.truncated() ? c.head_size() : k.size();
  // Head and tail are measured apart only when a gap divides them: a
  // character straddling a boundary without a gap is whole.
  Counter head, tail;
  escape_body(head, k.data(), head_);
  escape_body(tail, k.data() + head_, k.size() - head_);
  head_text_ = head.n;
  tail_text_ = tail.n;
  lossless_ = head.replaced_bytes == 0 && tail.replaced_bytes == 0;
  // Appended into room reserved once: chains of + and std::to_string made
  // a temporary string at every step.
  opening_.reserve(48);
  opening_ += "{\"bytes\": ";
  append_decimal(opening_, c.total());
  opening_ += ", \"captured\": \"";
  if (c.truncated()) {
    marker_.reserve(48);
    marker_ += "\\n[sup: ";
    append_decimal(marker_, c.omitted());
    marker_ += " bytes omitted]\\n";
  }
  closing_.reserve(64);
  closing_ += "\", \"truncated\": ";
  closing_ += c.truncated() ? "true" : "false";
  closing_ += ", \"omitted_bytes\": ";
  append_decimal(closing_, c.omitted());
  closing_ += ", \"routed\": \"";
  closing_ += routed;
  closing_ += "\", \"tee_error\": ";
  if (tee_error != nullptr) {
    closing_ += "\"";
    closing_ += tee_error;
    closing_ += "\"";
  } else {
    closing_ += "null";
  }
  closing_ += "}";
}

size_t StreamJson::length() const noexcept {
  return opening_.size() + head_text_ + marker_.size() + tail_text_ + closing_.size();
}

void StreamJson::append(std::string& out) noexcept {
  const std::string_view k = bytes_;
  out += opening_;
  head_at_ = out.size();
  Appender sink{out};
  escape_body(sink, k.data(), head_);
  out += marker_;
  tail_at_ = out.size();
  escape_body(sink, k.data() + head_, k.size() - head_);
  out += closing_;
}

void StreamJson::append_moving(std::string& out, const char* lent) noexcept {
  // The lent buffer is where bytes_ points: its pages go as they are read.
  out += opening_;
  head_at_ = out.size();
  ReleasingAppender sink{out, lent};
  escape_body(sink, lent, head_);
  out += marker_;
  tail_at_ = out.size();
  ReleasingAppender tail_sink{out, lent + head_};
  escape_body(tail_sink, lent + head_, bytes_.size() - head_);
  out += closing_;
}

KeptInText StreamJson::where() const noexcept { return {head_at_, head_text_, tail_at_, tail_text_}; }

std::string KeptInText::bytes(const std::string& text, size_t size) const {
  std::string out;
  out.reserve(size);
  append_json_unescaped(out, text.data() + head_at, head_len);
  append_json_unescaped(out, text.data() + tail_at, tail_len);
  return out;
}

void append_ms(std::string& out, int64_t us) {
  if (us < 0) {
    out += '-';
    us = -us;
  }
  append_decimal(out, us / 1000);
  const int frac = static_cast<int>(us % 1000);
  const char decimals[] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                           static_cast<char>('0' + frac % 10)};
  out.append(decimals, sizeof decimals);
}

}  // namespace sup
