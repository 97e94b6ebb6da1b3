// Writing JSON strings from arbitrary child output.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sup {

// Appends data as a quoted JSON string. Invalid UTF-8 (stray bytes, overlong
// forms, surrogates, code points past U+10FFFF) becomes U+FFFD, one per bad
// byte; NUL and other control characters are escaped.
void append_json_string(std::string& out, const char* data, size_t len);

// The same without the surrounding quotes, to build one string in parts.
void append_json_string_body(std::string& out, const char* data, size_t len);

inline void append_json_string(std::string& out, const std::string& s) {
  append_json_string(out, s.data(), s.size());
}

// How many bytes append_json_string_body appends for data.
size_t json_string_body_length(const char* data, size_t len);

// Appends an integer in decimal, as JSON writes a number.
template <class Int>
void append_decimal(std::string& out, Int v) {
  char buf[24];
  out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

// Appends milliseconds with three decimals, from whole microseconds: what
// "%.3f" printed, without printf's floating-point formatting, which was most
// of the cost of a small result's text (four calls, 5 of 11 us).
void append_ms(std::string& out, int64_t us);

// Appends the bytes that JSON string body text stands for: the inverse of
// append_json_string_body for text it wrote without replacing a byte.
void append_json_unescaped(std::string& out, const char* text, size_t len);

class Capture;

// Where a stream's kept bytes are in the result's text, escaped: head, then
// (after the gap marker, when truncated) tail.
struct KeptInText {
  size_t head_at = 0;
  size_t head_len = 0;
  size_t tail_at = 0;
  size_t tail_len = 0;
  // The kept bytes again, size of them, from that text.
  std::string bytes(const std::string& text, size_t size) const;
};

// One stream of the result: {"bytes": N, "captured": "...", "truncated": B,
// "omitted_bytes": N}. "captured" is the kept bytes as text; only a real gap
// (truncation) splits it, marked by a line "[sup: N bytes omitted]".
// Measured when made (the only step that allocates: the kept bytes are
// copied if the capture is not flat), so that the result's text can be
// reserved exactly and then written without a reallocation or an exception.
class StreamJson {
 public:
  // routed: the stream's "routed" value (route_name); tee_error: the
  // errno name of a failed "tee" ("EPIPE"), or nullptr for null.
  StreamJson(const Capture& capture, const char* routed, const char* tee_error = nullptr);
  StreamJson(const StreamJson&) = delete;
  StreamJson& operator=(const StreamJson&) = delete;

  // Exactly what append() appends.
  size_t length() const noexcept;
  // No byte was replaced by U+FFFD: the text gives the kept bytes back.
  bool lossless() const noexcept { return lossless_; }
  // out must have length() bytes of room.
  void append(std::string& out) noexcept;
  // The same from the capture's flat buffer, lent (Capture::lend_flat), whose
  // pages go back to the kernel as they are read: the bytes are in the
  // text only afterwards (where()).
  void append_moving(std::string& out, const char* lent) noexcept;
  // After an append: where the kept bytes went in out.
  KeptInText where() const noexcept;

 private:
  std::string_view bytes_;
  std::string copy_;
  size_t head_ = 0;  // bytes before the gap (all of them when there is none)
  size_t head_text_ = 0;
  size_t tail_text_ = 0;
  bool lossless_ = true;
  std::string opening_, marker_, closing_;
  size_t head_at_ = 0;
  size_t tail_at_ = 0;
};

}  // namespace sup
