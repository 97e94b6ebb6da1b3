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

class Capture;

// One stream of the result: {"bytes": N, "captured": "...", "truncated": B,
// "omitted_bytes": N}. "captured" is the kept bytes as text; only a real gap
// (truncation) splits it, marked by a line "[sup: N bytes omitted]".
void append_stream_json(std::string& out, const Capture& capture);

}  // namespace sup
