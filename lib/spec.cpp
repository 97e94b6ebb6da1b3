#include "spec.hpp"

#include <cjson/cJSON.h>

#include <cmath>
#include <memory>
#include <set>

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

void parse_stdin(const cJSON* item, Spec& spec) {
  if (cJSON_IsString(item)) {
    std::string mode = item->valuestring;
    if (mode == "null")
      spec.stdin_mode = StdinMode::null_device;
    else if (mode == "inherit")
      spec.stdin_mode = StdinMode::inherit;
    else
      fail("stdin", "must be \"null\", \"inherit\" or {\"data\": \"...\"}, not \"" + mode + "\"");
    return;
  }
  if (!cJSON_IsObject(item)) fail("stdin", "must be \"null\", \"inherit\" or {\"data\": \"...\"}");
  const cJSON* data = nullptr;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    if (std::string(e->string) != "data") fail(std::string("stdin.") + e->string, "unknown key (only \"data\")");
    if (data != nullptr) fail("stdin.data", "appears twice");
    data = e;
  }
  if (data == nullptr) fail("stdin", "an object must hold \"data\"");
  spec.stdin_mode = StdinMode::data;
  spec.stdin_data = string_value(data, "stdin.data");
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
    fail("interrupt_signal", "must be a signal name (\"SIGTERM\", \"TERM\") or number");
  }
  spec.interrupt_signal = sig;
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
  } else if (key == "max_runtime_ms") {
    spec.max_runtime_ms = whole_number(item, "max_runtime_ms", kMaxDurationMs, "ms");
  } else if (key == "grace_ms") {
    spec.grace_ms = whole_number(item, "grace_ms", kMaxDurationMs, "ms");
  } else if (key == "interrupt_signal") {
    parse_signal_key(item, spec);
  } else if (key == "on_timeout") {
    parse_on_timeout(item, spec);
  } else if (key == "max_output_bytes") {
    spec.max_output_bytes = static_cast<uint64_t>(whole_number(item, "max_output_bytes", kMaxBytes, "bytes"));
  } else if (key == "backpressure_bytes") {
    spec.backpressure_bytes = static_cast<uint64_t>(whole_number(item, "backpressure_bytes", kMaxBytes, "bytes"));
  } else if (key == "tty_foreground") {
    if (!cJSON_IsBool(item)) fail(key, "must be true or false");
    spec.tty_foreground = cJSON_IsTrue(item);
  } else {
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
  if (spec.tty_foreground && spec.stdin_mode != StdinMode::inherit)
    fail("tty_foreground", "needs \"stdin\": \"inherit\"");
  return spec;
}

}  // namespace sup
