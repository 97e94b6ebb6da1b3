// Parsing a spec: the table of its keys (parse_key), each pointing to its
// parser, the plain keys' values, and the checks across keys. The
// descriptor keys are spec_streams.cpp's, the confinement keys
// confine_spec.cpp's.
#include "spec.hpp"

#include <cjson/cJSON.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <set>

#include "routing.hpp"
#include "signal_names.hpp"
#include "spec_nul.hpp"
#include "spec_streams.hpp"
#include "spec_value.hpp"

namespace sup {
namespace {

// Keeps every deadline, converted to nanoseconds, far from int64 overflow.
constexpr double kMaxDurationMs = 1e12;
constexpr double kMaxBytes = 1099511627776.0;  // 1 TiB

int64_t whole_number(const cJSON* item, const char* key, double max, const char* unit) {
  if (!cJSON_IsNumber(item)) spec_fail(key, "must be a non-negative integer");
  double v = item->valuedouble;
  if (v < 0) spec_fail(key, "must not be negative");
  if (v != std::floor(v)) spec_fail(key, "must be a whole number");
  if (v > max) spec_fail(key, std::string("too large (at most ") + std::to_string(static_cast<int64_t>(max)) + " " + unit + ")");
  return static_cast<int64_t>(v);
}

void parse_argv(const cJSON* item, Spec& spec) {
  if (!cJSON_IsArray(item)) spec_fail("argv", "must be an array of strings");
  int index = 0;
  for (const cJSON* a = item->child; a != nullptr; a = a->next, ++index) {
    if (!cJSON_IsString(a)) spec_fail("argv[" + std::to_string(index) + "]", "must be a string");
    spec.argv.emplace_back(a->valuestring);
  }
  if (spec.argv.empty()) spec_fail("argv", "must not be empty");
  if (spec.argv[0].empty()) spec_fail("argv[0]", "must not be empty");
}

void parse_env(const cJSON* item, Spec& spec) {
  if (!cJSON_IsObject(item)) spec_fail("env", "must be an object of strings or nulls");
  std::set<std::string> seen;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    std::string name = e->string;
    std::string key = "env." + name;
    if (name.empty()) spec_fail("env", "a variable name must not be empty");
    if (name.find('=') != std::string::npos) spec_fail(key, "a variable name must not contain '='");
    if (!seen.insert(name).second) spec_fail(key, "appears twice");
    if (cJSON_IsNull(e))
      spec.env.emplace_back(name, std::nullopt);
    else if (cJSON_IsString(e))
      spec.env.emplace_back(name, std::string(e->valuestring));
    else
      spec_fail(key, "must be a string (to set it) or null (to remove it)");
  }
}

void parse_signal_key(const cJSON* item, Spec& spec) {
  int sig = 0;
  if (cJSON_IsString(item)) {
    sig = parse_signal(item->valuestring);
    if (sig == 0) spec_fail("interrupt_signal", std::string("unknown signal \"") + item->valuestring + "\"");
  } else if (cJSON_IsNumber(item)) {
    double v = item->valuedouble;
    if (v != std::floor(v) || v < 1 || v > 64 || parse_signal(std::to_string(static_cast<int>(v))) == 0)
      spec_fail("interrupt_signal", "no such signal number");
    sig = static_cast<int>(v);
  } else {
    spec_fail("interrupt_signal", "must be a signal name (\"SIGTERM\", \"TERM\", \"SIGRTMIN+3\") or number");
  }
  spec.interrupt_signal = sig;
}

// "reset_signals": an array of signal names ("PIPE", "SIGXFSZ",
// "RTMIN+1") or numbers, as interrupt_signal takes them.
void parse_reset_signals(const cJSON* item, Spec& spec) {
  if (!cJSON_IsArray(item)) spec_fail("reset_signals", "must be an array of signal names (\"PIPE\", \"SIGXFSZ\") or numbers");
  int index = 0;
  for (const cJSON* e = item->child; e != nullptr; e = e->next, ++index) {
    const std::string key = "reset_signals[" + std::to_string(index) + "]";
    int sig = 0;
    if (cJSON_IsString(e)) {
      sig = parse_signal(e->valuestring);
      if (sig == 0) spec_fail(key, std::string("unknown signal \"") + e->valuestring + "\"");
    } else if (cJSON_IsNumber(e)) {
      double v = e->valuedouble;
      if (v != std::floor(v) || v < 1 || v > 64 || parse_signal(std::to_string(static_cast<int>(v))) == 0)
        spec_fail(key, "no such signal number");
      sig = static_cast<int>(v);
    } else {
      spec_fail(key, "must be a signal name (\"PIPE\", \"SIGXFSZ\") or number");
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
    spec_fail("on_timeout", "must be \"interrupt\" or \"kill\", not \"" + mode + "\"");
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
    spec_fail("contain", "must be \"group\", \"cgroup\" or \"auto\", not \"" + mode + "\"");
}

void parse_key(const cJSON* item, Spec& spec) {
  const std::string key = item->string;
  if (key == "argv") {
    parse_argv(item, spec);
  } else if (key == "cwd") {
    spec.cwd = string_value(item, key);
    if (spec.cwd->empty()) spec_fail(key, "must not be empty");
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
      spec_fail(key, "must be a non-negative integer, or null to keep every byte");
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
    if (!cJSON_IsBool(item)) spec_fail(key, "must be true or false");
    spec.env_clear = cJSON_IsTrue(item);
  } else if (key == "pty") {
    parse_pty(item, spec);
  } else if (key == "tty_foreground") {
    if (!cJSON_IsBool(item)) spec_fail(key, "must be true or false");
    spec.tty_foreground = cJSON_IsTrue(item);
  } else if (key == "contain") {
    parse_contain(item, spec);
  } else if (key == "keep_ignored_signals") {
    if (!cJSON_IsBool(item)) spec_fail(key, "must be true or false");
    spec.keep_ignored_signals = cJSON_IsTrue(item);
  } else if (key == "reset_signals") {
    parse_reset_signals(item, spec);
  } else if (key == "cgroup_parent") {
    spec.cgroup_parent = string_value(item, key);
    if (spec.cgroup_parent->empty() || (*spec.cgroup_parent)[0] != '/') spec_fail(key, "must be an absolute path");
  } else if (key == "require_sentinel") {
    if (!cJSON_IsBool(item)) spec_fail(key, "must be true or false");
    spec.require_sentinel = cJSON_IsTrue(item);
  } else if (!parse_confine_key(item, spec.confine)) {
    spec_fail(key, "unknown key");
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
    if (!seen.insert(item->string).second) spec_fail(item->string, "appears twice");
    parse_key(item, spec);
  }
  if (spec.argv.empty()) spec_fail("argv", "is required");
  check_nul_strings(json, spec);
  // The terminal is the child's stdin, stdout and stderr: no other source
  // or destination can be given beside it, and the host's own terminal is
  // not the child's.
  if (spec.pty) {
    for (const char* key : {"stdin", "stdout", "stderr", "tty_foreground"})
      if (seen.count(key) != 0)
        spec_fail(key, "not allowed with \"pty\" (the child's stdin, stdout and stderr are its terminal; write its "
                  "input with sup_input_write)");
  }
  if (spec.tty_foreground && spec.stdin_mode != StdinMode::inherit)
    spec_fail("tty_foreground", "needs \"stdin\": \"inherit\"");
  check_routes(spec);
  if (spec.cgroup_parent && spec.contain == ContainMode::group)
    spec_fail("cgroup_parent", "needs \"contain\": \"cgroup\" or \"auto\"");
  return spec;
}

}  // namespace sup
