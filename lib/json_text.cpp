#include "json_text.hpp"

#include <array>

#include "capture.hpp"

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
struct Appender {
  std::string& out;
  void put(char c) { out.push_back(c); }
  void put(const char* s, size_t n) { out.append(s, n); }
};
struct Counter {
  size_t n = 0;
  void put(char) { ++n; }
  void put(const char*, size_t k) { n += k; }
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

template <class Sink>
void escape_body(Sink& sink, const char* data, size_t len) {
  static const char kHex[] = "0123456789abcdef";
  const auto* s = reinterpret_cast<const unsigned char*>(data);
  for (size_t i = 0; i < len;) {
    // Runs of plain ASCII, most of any text, go in one piece.
    size_t end = i;
    while (end < len && kEscapeLength[s[end]] == 1) ++end;
    if (end > i) {
      sink.put(data + i, end - i);
      i = end;
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

KeptText::KeptText(const Capture& c) {
  if (const std::string* flat = c.flat()) {
    bytes = flat;
  } else {
    copy = c.kept();
    bytes = &copy;
  }
}

namespace {

std::string omitted_marker(const Capture& c) {
  return "\\n[sup: " + std::to_string(c.omitted()) + " bytes omitted]\\n";
}

}  // namespace

size_t stream_json_length(const Capture& c, const KeptText& kept) {
  // The keys, three numbers of up to 20 digits and "false": under 160 bytes.
  constexpr size_t kFixed = 160;
  const std::string& k = *kept.bytes;
  if (!c.truncated()) return kFixed + json_string_body_length(k.data(), k.size());
  return kFixed + json_string_body_length(k.data(), c.head_size()) + omitted_marker(c).size() +
         json_string_body_length(k.data() + c.head_size(), k.size() - c.head_size());
}

void append_stream_json(std::string& out, const Capture& c, const KeptText& kept_text) {
  const std::string& kept = *kept_text.bytes;
  out += "{\"bytes\": " + std::to_string(c.total());
  out += ", \"captured\": \"";
  if (c.truncated()) {
    append_json_string_body(out, kept.data(), c.head_size());
    out += omitted_marker(c);
    append_json_string_body(out, kept.data() + c.head_size(), kept.size() - c.head_size());
  } else {
    // Head and tail are contiguous: a character straddling the boundary
    // between them is whole.
    append_json_string_body(out, kept.data(), kept.size());
  }
  out += "\", \"truncated\": ";
  out += c.truncated() ? "true" : "false";
  out += ", \"omitted_bytes\": " + std::to_string(c.omitted()) + "}";
}

}  // namespace sup
