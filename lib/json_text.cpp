#include "json_text.hpp"

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

}  // namespace

void append_json_string(std::string& out, const char* data, size_t len) {
  out.reserve(out.size() + len + 2);
  out.push_back('"');
  append_json_string_body(out, data, len);
  out.push_back('"');
}

void append_json_string_body(std::string& out, const char* data, size_t len) {
  static const char kHex[] = "0123456789abcdef";
  const auto* s = reinterpret_cast<const unsigned char*>(data);
  for (size_t i = 0; i < len;) {
    unsigned char c = s[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
      ++i;
      continue;
    }
    size_t n = utf8_sequence_length(s + i, len - i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(data + i, n);
      i += n;
    }
  }
}

void append_stream_json(std::string& out, const Capture& c) {
  out += "{\"bytes\": " + std::to_string(c.total());
  out += ", \"captured\": \"";
  std::string copy;
  const std::string& kept = c.flat() != nullptr ? *c.flat() : (copy = c.kept());
  if (c.truncated()) {
    append_json_string_body(out, kept.data(), c.head_size());
    out += "\\n[sup: " + std::to_string(c.omitted()) + " bytes omitted]\\n";
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
