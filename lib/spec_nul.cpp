// Finding the strings of a spec's JSON text that hold NUL (spec_nul.hpp).
#include "spec_nul.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "spec_value.hpp"

namespace sup {
namespace {

// cJSON ends its strings at the first NUL, so "a\u0000b" would reach us as
// "a". This walks the (already valid) JSON text itself to find every string
// holding the escape \u0000, with where it sits ("argv[1]", "env.K").
struct NulString {
  std::string path;
  const char* begin;  // the raw text between the quotes
  const char* end;
  bool is_key;
};

bool is_hex(char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

// At "\u": would cJSON make a NUL of it? It does for \u0000, and (1.7.15)
// for a \u not followed by four hex digits.
bool nul_escape(const char* p) {
  for (int i = 2; i < 6; ++i)
    if (!is_hex(p[i])) return true;
  return std::strncmp(p + 2, "0000", 4) == 0;
}

// Steps over a string's raw text from just after its opening quote; returns
// the number of escapes in it that become a NUL.
size_t skip_string(const char*& p) {
  size_t nuls = 0;
  while (*p != '\0' && *p != '"') {
    if (*p == '\\' && p[1] != '\0') {
      if (p[1] == 'u' && nul_escape(p)) ++nuls;
      p += 2;
    } else {
      ++p;
    }
  }
  return nuls;
}

// cJSON's own leading skips: a UTF-8 byte order mark, then any byte up to
// 0x20 counts as white space.
const char* skip_bom(const char* p) { return std::strncmp(p, "\xEF\xBB\xBF", 3) == 0 ? p + 3 : p; }

class NulFinder {
 public:
  explicit NulFinder(const char* text) : p_(skip_bom(text)) {}
  std::vector<NulString> run() {
    value("");
    return std::move(found_);
  }
  size_t nuls() const noexcept { return nuls_; }

 private:
  void ws() {
    while (*p_ != '\0' && static_cast<unsigned char>(*p_) <= 0x20) ++p_;
  }
  // At an opening quote: steps past the string, returns its raw span.
  bool string(const char** begin, const char** end) {
    *begin = ++p_;
    size_t n = skip_string(p_);
    nuls_ += n;
    *end = p_;
    if (*p_ == '"') ++p_;
    return n > 0;
  }
  void value(const std::string& path) {
    ws();
    const char *b, *e;
    if (*p_ == '{') {
      ++p_;
      for (;;) {
        ws();
        if (*p_ != '"') break;
        bool nul = string(&b, &e);
        std::string key(b, e);
        if (nul) found_.push_back({path, b, e, true});
        ws();
        if (*p_ == ':') ++p_;
        value(path.empty() ? key : path + "." + key);
        ws();
        if (*p_ != ',') break;
        ++p_;
      }
      if (*p_ == '}') ++p_;
    } else if (*p_ == '[') {
      ++p_;
      for (size_t i = 0;; ++i) {
        ws();
        if (*p_ == ']' || *p_ == '\0') break;
        value(path + "[" + std::to_string(i) + "]");
        ws();
        if (*p_ != ',') break;
        ++p_;
      }
      if (*p_ == ']') ++p_;
    } else if (*p_ == '"') {
      if (string(&b, &e)) found_.push_back({path, b, e, false});
    } else {
      while (*p_ != '\0' && *p_ != ',' && *p_ != ']' && *p_ != '}') ++p_;
    }
  }

  const char* p_;
  std::vector<NulString> found_;
  size_t nuls_ = 0;
};

// Every NUL escape in every string, by the quotes alone: outside strings
// JSON has no quote, so this count cannot be fooled by structure.
size_t count_nul_escapes(const char* p) {
  size_t nuls = 0;
  while (*p != '\0') {
    if (*p++ != '"') continue;
    nuls += skip_string(p);
    if (*p == '"') ++p;
  }
  return nuls;
}

unsigned hex4(const char* s) {
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s[i];
    v = v * 16 + static_cast<unsigned>(c >= '0' && c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes the raw text of a JSON string that cJSON already accepted, NULs
// included, as cJSON would (raw bytes pass through).
std::string decode_json_string(const char* s, const char* end) {
  std::string out;
  out.reserve(static_cast<size_t>(end - s));
  while (s < end) {
    if (*s != '\\' || s + 1 >= end) {
      out.push_back(*s++);
      continue;
    }
    char c = s[1];
    s += 2;
    switch (c) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        if (end - s < 4) return out;
        unsigned cp = hex4(s);
        s += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && end - s >= 6 && s[0] == '\\' && s[1] == 'u') {
          unsigned low = hex4(s + 2);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            s += 6;
          }
        }
        append_utf8(out, cp);
        break;
      }
      default: out.push_back(c); break;  // \" \\ \/
    }
  }
  return out;
}

}  // namespace

// Strings that hold a NUL: only stdin.data may (its bytes are sent as they
// are); anywhere else a NUL would silently cut an argument, a variable or a
// path, so it is an error naming the key.
void check_nul_strings(const char* json, Spec& spec) {
  size_t expected = count_nul_escapes(json);
  if (expected == 0) return;
  NulFinder finder(json);
  std::vector<NulString> found = finder.run();
  // A walk that lost its way in text cJSON accepted must not let a NUL by.
  if (finder.nuls() != expected) spec_fail("spec", "a string holds NUL (\\u0000) or a \\u escape without four hex digits");
  for (const NulString& s : found) {
    for (const char* p = s.begin; p + 1 < s.end; ++p) {
      if (*p != '\\') continue;
      if (p[1] == 'u' && nul_escape(p) && std::strncmp(p + 2, "0000", 4) != 0)
        spec_fail(s.path.empty() ? "spec" : s.path, "a \\u escape needs four hex digits");
      ++p;
    }
    if (!s.is_key && s.path == "stdin.data" && spec.stdin_mode == StdinMode::data) {
      spec.stdin_data = decode_json_string(s.begin, s.end);
      continue;
    }
    if (s.is_key) spec_fail(s.path.empty() ? "spec" : s.path, "a key must not contain NUL (\\u0000)");
    spec_fail(s.path, "must not contain NUL (\\u0000)");
  }
}

}  // namespace sup
