// Writing JSON strings from arbitrary child output.
#pragma once

#include <cstddef>
#include <string>

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

class Capture;

// A stream's kept bytes in one piece: the capture's own buffer once it is
// flat, else a copy.
struct KeptText {
  explicit KeptText(const Capture& capture);
  KeptText(const KeptText&) = delete;
  KeptText& operator=(const KeptText&) = delete;
  const std::string* bytes;
  std::string copy;
};

// One stream of the result: {"bytes": N, "captured": "...", "truncated": B,
// "omitted_bytes": N}. "captured" is the kept bytes as text; only a real gap
// (truncation) splits it, marked by a line "[sup: N bytes omitted]".
void append_stream_json(std::string& out, const Capture& capture, const KeptText& kept);
// At least what append_stream_json appends, and at most 160 bytes more.
size_t stream_json_length(const Capture& capture, const KeptText& kept);

}  // namespace sup
