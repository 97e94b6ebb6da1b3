// Parsing the spec's descriptor keys (spec_streams.hpp): where each of the
// child's stdin, stdout and stderr comes from or goes, the extra
// descriptors it is given, and its terminal.
#include "spec_streams.hpp"

#include <cjson/cJSON.h>

#include <limits.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdint>
#include <set>

#include "spec_value.hpp"

namespace sup {
namespace {

constexpr const char* kStdinForms =
    "must be \"null\", \"inherit\", \"pipe\", {\"data\": \"...\"}, {\"base64\": \"...\"} or {\"fd\": N}";

// A host descriptor's number: what an int holds, not negative. Whether it
// is open is checked at the spawn (check_host_fds), where it matters.
int descriptor_number(const cJSON* item, const std::string& key) {
  if (!cJSON_IsNumber(item)) spec_fail(key, "must be a descriptor number (an integer from 0 to 2147483647)");
  double v = item->valuedouble;
  if (v < 0) spec_fail(key, "must not be negative");
  if (v != std::floor(v)) spec_fail(key, "must be a whole number");
  if (v > INT_MAX) spec_fail(key, "too large (at most 2147483647)");
  return static_cast<int>(v);
}

constexpr const char* kPtyForms = "must be true, false or {\"rows\": R, \"cols\": C}";

// A window dimension: what struct winsize holds, and not 0 (a terminal of
// no rows is what a program sees when nobody set the size).
int terminal_dimension(const cJSON* item, const std::string& key) {
  if (!cJSON_IsNumber(item)) spec_fail(key, "must be an integer from 1 to 65535");
  double v = item->valuedouble;
  if (v != std::floor(v) || v < 1 || v > 65535) spec_fail(key, "must be an integer from 1 to 65535");
  return static_cast<int>(v);
}

}  // namespace

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
      spec_fail("stdin", std::string(kStdinForms) + ", not \"" + mode + "\"");
    return;
  }
  if (!cJSON_IsObject(item)) spec_fail("stdin", kStdinForms);
  const cJSON* source = nullptr;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    std::string key = e->string;
    if (key != "data" && key != "base64" && key != "fd")
      spec_fail("stdin." + key, "unknown key (only \"data\", \"base64\" or \"fd\")");
    if (source != nullptr) spec_fail("stdin." + key, "only one of \"data\", \"base64\" and \"fd\" may be given");
    source = e;
  }
  if (source == nullptr) spec_fail("stdin", "an object must hold \"data\", \"base64\" or \"fd\"");
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
    spec_fail(key, "not valid base64 (RFC 4648: A-Z a-z 0-9 + /, '=' padding only at the end)");
  }
}

void parse_pty(const cJSON* item, Spec& spec) {
  if (cJSON_IsBool(item)) {
    spec.pty = cJSON_IsTrue(item);
    return;
  }
  if (!cJSON_IsObject(item)) spec_fail("pty", kPtyForms);
  std::set<std::string> seen;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    std::string key = e->string;
    if (!seen.insert(key).second) spec_fail("pty." + key, "appears twice");
    if (key == "rows")
      spec.pty_rows = terminal_dimension(e, "pty.rows");
    else if (key == "cols")
      spec.pty_cols = terminal_dimension(e, "pty.cols");
    else
      spec_fail("pty." + key, "unknown key (only \"rows\" and \"cols\")");
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
      if (sub != "fd") spec_fail(key + "." + sub, "unknown key (only \"fd\")");
      if (fd != nullptr) spec_fail(key + ".fd", "appears twice");
      fd = e;
    }
    if (fd == nullptr) spec_fail(key, "an object must hold \"fd\"");
    spec.host_fd[err ? 2 : 1] = descriptor_number(fd, key + ".fd");
    return Route::fd;
  }
  if (!cJSON_IsString(item)) spec_fail(key, forms);
  std::string mode = item->valuestring;
  if (mode == "pipe") return Route::pipe;
  if (mode == "tee") return Route::tee;
  if (mode == "inherit") return Route::inherit;
  if (mode == "null") return Route::null_device;
  if (err && mode == "stdout") return Route::stdout_stream;
  spec_fail(key, std::string(forms) + ", not \"" + mode + "\"");
}

// "fds": {"3": 7}. The child's numbers are JSON keys, so they are text:
// plain decimal, as a reader would write them, so that "3" and "03" cannot
// both name one descriptor.
void parse_fds(const cJSON* item, Spec& spec) {
  if (!cJSON_IsObject(item)) spec_fail("fds", "must be an object of child descriptor to host descriptor ({\"3\": 7})");
  rlimit files{};
  const uint64_t limit = getrlimit(RLIMIT_NOFILE, &files) == 0 ? static_cast<uint64_t>(files.rlim_cur) : UINT64_MAX;
  std::set<int> seen;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    const std::string name = e->string;
    const std::string key = "fds." + name;
    if (!name.empty() && name[0] == '-') spec_fail(key, "a child descriptor must not be negative");
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      spec_fail(key, "a child descriptor must be a decimal number (\"3\")");
    if (name.size() > 1 && name[0] == '0') spec_fail(key, "a child descriptor is written without leading zeros");
    if (name.size() > 10 || std::stoll(name) > INT_MAX) spec_fail(key, "child descriptor too large (at most 2147483647)");
    const int child = static_cast<int>(std::stoll(name));
    if (child < 3)
      spec_fail(key, "0, 1 and 2 are \"stdin\", \"stdout\" and \"stderr\" ({\"fd\": N} there): \"fds\" starts at 3");
    if (static_cast<uint64_t>(child) >= limit)
      spec_fail(key, "beyond the descriptor limit (RLIMIT_NOFILE is " + std::to_string(limit) + ")");
    if (!seen.insert(child).second) spec_fail(key, "appears twice");
    spec.extra_fds.emplace_back(child, descriptor_number(e, key));
  }
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
