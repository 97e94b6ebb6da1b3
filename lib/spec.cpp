#include "spec.hpp"

#include <cjson/cJSON.h>

#include <limits.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <set>

#include "routing.hpp"
#include "signal_names.hpp"

namespace sup {
namespace {

// Keeps every deadline, converted to nanoseconds, far from int64 overflow.
constexpr double kMaxDurationMs = 1e12;
constexpr double kMaxBytes = 1099511627776.0;  // 1 TiB

[[noreturn]] void fail(const std::string& key, const std::string& problem) {
  throw SpecError{"spec: " + key + ": " + problem};
}

int64_t whole_number(const cJSON* item, const char* key, double max, const char* unit) {
  if (!cJSON_IsNumber(item)) fail(key, "must be a non-negative integer");
  double v = item->valuedouble;
  if (v < 0) fail(key, "must not be negative");
  if (v != std::floor(v)) fail(key, "must be a whole number");
  if (v > max) fail(key, std::string("too large (at most ") + std::to_string(static_cast<int64_t>(max)) + " " + unit + ")");
  return static_cast<int64_t>(v);
}

std::string string_value(const cJSON* item, const std::string& key) {
  if (!cJSON_IsString(item)) fail(key, "must be a string");
  return item->valuestring;
}

void parse_argv(const cJSON* item, Spec& spec) {
  if (!cJSON_IsArray(item)) fail("argv", "must be an array of strings");
  int index = 0;
  for (const cJSON* a = item->child; a != nullptr; a = a->next, ++index) {
    if (!cJSON_IsString(a)) fail("argv[" + std::to_string(index) + "]", "must be a string");
    spec.argv.emplace_back(a->valuestring);
  }
  if (spec.argv.empty()) fail("argv", "must not be empty");
  if (spec.argv[0].empty()) fail("argv[0]", "must not be empty");
}

void parse_env(const cJSON* item, Spec& spec) {
  if (!cJSON_IsObject(item)) fail("env", "must be an object of strings or nulls");
  std::set<std::string> seen;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    std::string name = e->string;
    std::string key = "env." + name;
    if (name.empty()) fail("env", "a variable name must not be empty");
    if (name.find('=') != std::string::npos) fail(key, "a variable name must not contain '='");
    if (!seen.insert(name).second) fail(key, "appears twice");
    if (cJSON_IsNull(e))
      spec.env.emplace_back(name, std::nullopt);
    else if (cJSON_IsString(e))
      spec.env.emplace_back(name, std::string(e->valuestring));
    else
      fail(key, "must be a string (to set it) or null (to remove it)");
  }
}

constexpr const char* kStdinForms =
    "must be \"null\", \"inherit\", \"pipe\", {\"data\": \"...\"}, {\"base64\": \"...\"} or {\"fd\": N}";

// A host descriptor's number: what an int holds, not negative. Whether it
// is open is checked at the spawn (check_host_fds), where it matters.
int descriptor_number(const cJSON* item, const std::string& key) {
  if (!cJSON_IsNumber(item)) fail(key, "must be a descriptor number (an integer from 0 to 2147483647)");
  double v = item->valuedouble;
  if (v < 0) fail(key, "must not be negative");
  if (v != std::floor(v)) fail(key, "must be a whole number");
  if (v > INT_MAX) fail(key, "too large (at most 2147483647)");
  return static_cast<int>(v);
}

void parse_stdin(const cJSON* item, Spec& spec) {
  if (cJSON_IsString(item)) {
    std::string mode = item->valuestring;
    if (mode == "null")
      spec.stdin_mode = StdinMode::null_device;
    else if (mode == "inherit")
      spec.stdin_mode = StdinMode::inherit;
    else if (mode == "pipe")
      spec.stdin_mode = StdinMode::pipe;
    else
      fail("stdin", std::string(kStdinForms) + ", not \"" + mode + "\"");
    return;
  }
  if (!cJSON_IsObject(item)) fail("stdin", kStdinForms);
  const cJSON* source = nullptr;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    std::string key = e->string;
    if (key != "data" && key != "base64" && key != "fd")
      fail("stdin." + key, "unknown key (only \"data\", \"base64\" or \"fd\")");
    if (source != nullptr) fail("stdin." + key, "only one of \"data\", \"base64\" and \"fd\" may be given");
    source = e;
  }
  if (source == nullptr) fail("stdin", "an object must hold \"data\", \"base64\" or \"fd\"");
  std::string key = std::string("stdin.") + source->string;
  if (key == "stdin.fd") {
    spec.stdin_mode = StdinMode::fd;
    spec.host_fd[0] = descriptor_number(source, key);
    return;
  }
  spec.stdin_mode = StdinMode::data;
  std::string text = string_value(source, key);
  if (key == "stdin.data") {
    spec.stdin_data = std::move(text);
  } else if (!decode_base64(text.data(), text.size(), spec.stdin_data)) {
    fail(key, "not valid base64 (RFC 4648: A-Z a-z 0-9 + /, '=' padding only at the end)");
  }
}

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

// Strings that hold a NUL: only stdin.data may (its bytes are sent as they
// are); anywhere else a NUL would silently cut an argument, a variable or a
// path, so it is an error naming the key.
void check_nul_strings(const char* json, Spec& spec) {
  size_t expected = count_nul_escapes(json);
  if (expected == 0) return;
  NulFinder finder(json);
  std::vector<NulString> found = finder.run();
  // A walk that lost its way in text cJSON accepted must not let a NUL by.
  if (finder.nuls() != expected) fail("spec", "a string holds NUL (\\u0000) or a \\u escape without four hex digits");
  for (const NulString& s : found) {
    for (const char* p = s.begin; p + 1 < s.end; ++p) {
      if (*p != '\\') continue;
      if (p[1] == 'u' && nul_escape(p) && std::strncmp(p + 2, "0000", 4) != 0)
        fail(s.path.empty() ? "spec" : s.path, "a \\u escape needs four hex digits");
      ++p;
    }
    if (!s.is_key && s.path == "stdin.data" && spec.stdin_mode == StdinMode::data) {
      spec.stdin_data = decode_json_string(s.begin, s.end);
      continue;
    }
    if (s.is_key) fail(s.path.empty() ? "spec" : s.path, "a key must not contain NUL (\\u0000)");
    fail(s.path, "must not contain NUL (\\u0000)");
  }
}

void parse_signal_key(const cJSON* item, Spec& spec) {
  int sig = 0;
  if (cJSON_IsString(item)) {
    sig = parse_signal(item->valuestring);
    if (sig == 0) fail("interrupt_signal", std::string("unknown signal \"") + item->valuestring + "\"");
  } else if (cJSON_IsNumber(item)) {
    double v = item->valuedouble;
    if (v != std::floor(v) || v < 1 || v > 64 || parse_signal(std::to_string(static_cast<int>(v))) == 0)
      fail("interrupt_signal", "no such signal number");
    sig = static_cast<int>(v);
  } else {
    fail("interrupt_signal", "must be a signal name (\"SIGTERM\", \"TERM\", \"SIGRTMIN+3\") or number");
  }
  spec.interrupt_signal = sig;
}

// "reset_signals": an array of signal names ("PIPE", "SIGXFSZ",
// "RTMIN+1") or numbers, as interrupt_signal takes them.
void parse_reset_signals(const cJSON* item, Spec& spec) {
  if (!cJSON_IsArray(item)) fail("reset_signals", "must be an array of signal names (\"PIPE\", \"SIGXFSZ\") or numbers");
  int index = 0;
  for (const cJSON* e = item->child; e != nullptr; e = e->next, ++index) {
    const std::string key = "reset_signals[" + std::to_string(index) + "]";
    int sig = 0;
    if (cJSON_IsString(e)) {
      sig = parse_signal(e->valuestring);
      if (sig == 0) fail(key, std::string("unknown signal \"") + e->valuestring + "\"");
    } else if (cJSON_IsNumber(e)) {
      double v = e->valuedouble;
      if (v != std::floor(v) || v < 1 || v > 64 || parse_signal(std::to_string(static_cast<int>(v))) == 0)
        fail(key, "no such signal number");
      sig = static_cast<int>(v);
    } else {
      fail(key, "must be a signal name (\"PIPE\", \"SIGXFSZ\") or number");
    }
    spec.reset_signals |= uint64_t{1} << (sig - 1);
  }
}

void parse_on_timeout(const cJSON* item, Spec& spec) {
  std::string mode = string_value(item, "on_timeout");
  if (mode == "interrupt")
    spec.on_timeout = TimeoutAction::interrupt;
  else if (mode == "kill")
    spec.on_timeout = TimeoutAction::kill;
  else
    fail("on_timeout", "must be \"interrupt\" or \"kill\", not \"" + mode + "\"");
}

constexpr const char* kPtyForms = "must be true, false or {\"rows\": R, \"cols\": C}";

// A window dimension: what struct winsize holds, and not 0 (a terminal of
// no rows is what a program sees when nobody set the size).
int terminal_dimension(const cJSON* item, const std::string& key) {
  if (!cJSON_IsNumber(item)) fail(key, "must be an integer from 1 to 65535");
  double v = item->valuedouble;
  if (v != std::floor(v) || v < 1 || v > 65535) fail(key, "must be an integer from 1 to 65535");
  return static_cast<int>(v);
}

void parse_pty(const cJSON* item, Spec& spec) {
  if (cJSON_IsBool(item)) {
    spec.pty = cJSON_IsTrue(item);
    return;
  }
  if (!cJSON_IsObject(item)) fail("pty", kPtyForms);
  std::set<std::string> seen;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    std::string key = e->string;
    if (!seen.insert(key).second) fail("pty." + key, "appears twice");
    if (key == "rows")
      spec.pty_rows = terminal_dimension(e, "pty.rows");
    else if (key == "cols")
      spec.pty_cols = terminal_dimension(e, "pty.cols");
    else
      fail("pty." + key, "unknown key (only \"rows\" and \"cols\")");
  }
  spec.pty = true;
}

Route parse_route(const cJSON* item, const std::string& key, Spec& spec) {
  const bool err = key == "stderr";
  const char* forms = err ? "must be \"pipe\", \"tee\", \"inherit\", \"null\", \"stdout\" or {\"fd\": N}"
                          : "must be \"pipe\", \"tee\", \"inherit\", \"null\" or {\"fd\": N}";
  if (cJSON_IsObject(item)) {
    const cJSON* fd = nullptr;
    for (const cJSON* e = item->child; e != nullptr; e = e->next) {
      std::string sub = e->string;
      if (sub != "fd") fail(key + "." + sub, "unknown key (only \"fd\")");
      if (fd != nullptr) fail(key + ".fd", "appears twice");
      fd = e;
    }
    if (fd == nullptr) fail(key, "an object must hold \"fd\"");
    spec.host_fd[err ? 2 : 1] = descriptor_number(fd, key + ".fd");
    return Route::fd;
  }
  if (!cJSON_IsString(item)) fail(key, forms);
  std::string mode = item->valuestring;
  if (mode == "pipe") return Route::pipe;
  if (mode == "tee") return Route::tee;
  if (mode == "inherit") return Route::inherit;
  if (mode == "null") return Route::null_device;
  if (err && mode == "stdout") return Route::stdout_stream;
  fail(key, std::string(forms) + ", not \"" + mode + "\"");
}

// "fds": {"3": 7}. The child's numbers are JSON keys, so they are text:
// plain decimal, as a reader would write them, so that "3" and "03" cannot
// both name one descriptor.
void parse_fds(const cJSON* item, Spec& spec) {
  if (!cJSON_IsObject(item)) fail("fds", "must be an object of child descriptor to host descriptor ({\"3\": 7})");
  rlimit files{};
  const uint64_t limit = getrlimit(RLIMIT_NOFILE, &files) == 0 ? static_cast<uint64_t>(files.rlim_cur) : UINT64_MAX;
  std::set<int> seen;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    const std::string name = e->string;
    const std::string key = "fds." + name;
    if (!name.empty() && name[0] == '-') fail(key, "a child descriptor must not be negative");
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      fail(key, "a child descriptor must be a decimal number (\"3\")");
    if (name.size() > 1 && name[0] == '0') fail(key, "a child descriptor is written without leading zeros");
    if (name.size() > 10 || std::stoll(name) > INT_MAX) fail(key, "child descriptor too large (at most 2147483647)");
    const int child = static_cast<int>(std::stoll(name));
    if (child < 3)
      fail(key, "0, 1 and 2 are \"stdin\", \"stdout\" and \"stderr\" ({\"fd\": N} there): \"fds\" starts at 3");
    if (static_cast<uint64_t>(child) >= limit)
      fail(key, "beyond the descriptor limit (RLIMIT_NOFILE is " + std::to_string(limit) + ")");
    if (!seen.insert(child).second) fail(key, "appears twice");
    spec.extra_fds.emplace_back(child, descriptor_number(e, key));
  }
}

void parse_contain(const cJSON* item, Spec& spec) {
  std::string mode = string_value(item, "contain");
  if (mode == "group")
    spec.contain = ContainMode::group;
  else if (mode == "cgroup")
    spec.contain = ContainMode::cgroup;
  else if (mode == "auto")
    spec.contain = ContainMode::automatic;
  else
    fail("contain", "must be \"group\", \"cgroup\" or \"auto\", not \"" + mode + "\"");
}

void parse_key(const cJSON* item, Spec& spec) {
  const std::string key = item->string;
  if (key == "argv") {
    parse_argv(item, spec);
  } else if (key == "cwd") {
    spec.cwd = string_value(item, key);
    if (spec.cwd->empty()) fail(key, "must not be empty");
  } else if (key == "env") {
    parse_env(item, spec);
  } else if (key == "stdin") {
    parse_stdin(item, spec);
  } else if (key == "idle_timeout_ms") {
    spec.idle_timeout_ms = whole_number(item, "idle_timeout_ms", kMaxDurationMs, "ms");
  } else if (key == "first_output_timeout_ms") {
    spec.first_output_timeout_ms = whole_number(item, "first_output_timeout_ms", kMaxDurationMs, "ms");
  } else if (key == "max_runtime_ms") {
    spec.max_runtime_ms = whole_number(item, "max_runtime_ms", kMaxDurationMs, "ms");
  } else if (key == "input_wait_timeout_ms") {
    spec.input_wait_timeout_ms = whole_number(item, "input_wait_timeout_ms", kMaxDurationMs, "ms");
  } else if (key == "tty_stop_timeout_ms") {
    spec.tty_stop_timeout_ms = whole_number(item, "tty_stop_timeout_ms", kMaxDurationMs, "ms");
  } else if (key == "grace_ms") {
    spec.grace_ms = whole_number(item, "grace_ms", kMaxDurationMs, "ms");
  } else if (key == "interrupt_signal") {
    parse_signal_key(item, spec);
  } else if (key == "on_timeout") {
    parse_on_timeout(item, spec);
  } else if (key == "max_output_bytes") {
    if (cJSON_IsNull(item))
      spec.max_output_bytes = kKeepAllOutput;
    else if (!cJSON_IsNumber(item))
      fail(key, "must be a non-negative integer, or null to keep every byte");
    else
      spec.max_output_bytes = static_cast<uint64_t>(whole_number(item, "max_output_bytes", kMaxBytes, "bytes"));
  } else if (key == "backpressure_bytes") {
    spec.backpressure_bytes = static_cast<uint64_t>(whole_number(item, "backpressure_bytes", kMaxBytes, "bytes"));
  } else if (key == "stdout") {
    spec.stdout_route = parse_route(item, key, spec);
  } else if (key == "stderr") {
    spec.stderr_route = parse_route(item, key, spec);
  } else if (key == "fds") {
    parse_fds(item, spec);
  } else if (key == "env_clear") {
    if (!cJSON_IsBool(item)) fail(key, "must be true or false");
    spec.env_clear = cJSON_IsTrue(item);
  } else if (key == "pty") {
    parse_pty(item, spec);
  } else if (key == "tty_foreground") {
    if (!cJSON_IsBool(item)) fail(key, "must be true or false");
    spec.tty_foreground = cJSON_IsTrue(item);
  } else if (key == "contain") {
    parse_contain(item, spec);
  } else if (key == "keep_ignored_signals") {
    if (!cJSON_IsBool(item)) fail(key, "must be true or false");
    spec.keep_ignored_signals = cJSON_IsTrue(item);
  } else if (key == "reset_signals") {
    parse_reset_signals(item, spec);
  } else if (key == "cgroup_parent") {
    spec.cgroup_parent = string_value(item, key);
    if (spec.cgroup_parent->empty() || (*spec.cgroup_parent)[0] != '/') fail(key, "must be an absolute path");
  } else if (key == "require_sentinel") {
    if (!cJSON_IsBool(item)) fail(key, "must be true or false");
    spec.require_sentinel = cJSON_IsTrue(item);
  } else if (!parse_confine_key(item, spec.confine)) {
    fail(key, "unknown key");
  }
}

}  // namespace

Spec parse_spec(const char* json) {
  if (json == nullptr) throw SpecError{"spec: NULL"};
  const char* error_at = nullptr;
  std::unique_ptr<cJSON, decltype(&cJSON_Delete)> root(
      cJSON_ParseWithOpts(json, &error_at, /*require_null_terminated=*/1), cJSON_Delete);
  if (!root) {
    size_t offset = error_at != nullptr ? static_cast<size_t>(error_at - json) : 0;
    throw SpecError{"spec: not valid JSON (at byte " + std::to_string(offset) + ")"};
  }
  if (!cJSON_IsObject(root.get())) throw SpecError{"spec: must be a JSON object"};

  Spec spec;
  std::set<std::string> seen;
  for (const cJSON* item = root->child; item != nullptr; item = item->next) {
    if (!seen.insert(item->string).second) fail(item->string, "appears twice");
    parse_key(item, spec);
  }
  if (spec.argv.empty()) fail("argv", "is required");
  check_nul_strings(json, spec);
  // The terminal is the child's stdin, stdout and stderr: no other source
  // or destination can be given beside it, and the host's own terminal is
  // not the child's.
  if (spec.pty) {
    for (const char* key : {"stdin", "stdout", "stderr", "tty_foreground"})
      if (seen.count(key) != 0)
        fail(key, "not allowed with \"pty\" (the child's stdin, stdout and stderr are its terminal; write its "
                  "input with sup_input_write)");
  }
  if (spec.tty_foreground && spec.stdin_mode != StdinMode::inherit)
    fail("tty_foreground", "needs \"stdin\": \"inherit\"");
  check_routes(spec);
  if (spec.cgroup_parent && spec.contain == ContainMode::group)
    fail("cgroup_parent", "needs \"contain\": \"cgroup\" or \"auto\"");
  return spec;
}

bool decode_base64(const char* text, size_t len, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  size_t padding = 0;
  while (padding < 2 && padding < len && text[len - 1 - padding] == '=') ++padding;
  if (padding > 0 && len % 4 != 0) return false;
  size_t data_len = len - padding;
  if (data_len % 4 == 1) return false;
  out.clear();
  out.reserve(data_len / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < data_len; ++i) {
    int v = value(text[i]);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero, or the text is not canonical base64.
  return (acc & ((1u << bits) - 1)) == 0;
}

}  // namespace sup
