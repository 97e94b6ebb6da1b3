// libFuzzer harness: the JSON spec parser and the launch plan built from it.
//
// The input, as a NUL-terminated string, goes to sup::parse_spec; a spec that
// parses goes on to sup::plan_launch. SpecError and LaunchError are normal
// answers. Every other way out (a crash, a sanitizer report, another
// exception, a violated invariant below) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <climits>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "launch.hpp"
#include "signal_names.hpp"
#include "spec.hpp"

namespace {

[[noreturn]] void violated(const char* what, const char* text) {
  std::fprintf(stderr, "fuzz_spec: invariant violated: %s\nspec: %s\n", what, text);
  std::abort();
}

#define CHECK(cond)                                \
  do {                                             \
    if (!(cond)) violated(#cond, json);            \
  } while (0)

bool has_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

// The documented limits (README "The spec"; lib/spec.cpp).
constexpr int64_t kMaxDurationMs = 1000000000000;  // 1e12 ms
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;  // 1 TiB

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Counts the escapes inside JSON strings that cJSON decodes as U+0000, found
// independently of the library by a lexer that only knows where strings
// begin and end (all it needs once cJSON has accepted the text): \u0000, and
// any \u whose four characters are not all hex digits (cJSON 1.7's
// parse_hex4 answers 0 for those instead of failing).
size_t count_nul_escapes(const char* s) {
  size_t count = 0;
  bool in_string = false;
  for (; *s != '\0'; ++s) {
    if (!in_string) {
      if (*s == '"') in_string = true;
      continue;
    }
    if (*s == '"') {
      in_string = false;
    } else if (*s == '\\') {
      if (s[1] == 'u') {
        bool all_hex = true, all_zero = true;
        for (int i = 2; i < 6 && all_hex; ++i) {
          if (s[i] == '\0' || !is_hex(s[i])) all_hex = false;
          else if (s[i] != '0') all_zero = false;
        }
        if (!all_hex || all_zero) ++count;
      }
      if (s[1] != '\0') ++s;
    }
  }
  return count;
}

void check_spec(const sup::Spec& spec, const char* json) {
  CHECK(!spec.argv.empty());
  CHECK(!spec.argv[0].empty());
  for (const std::string& a : spec.argv) CHECK(!has_nul(a));
  if (spec.cwd) {
    CHECK(!spec.cwd->empty());
    CHECK(!has_nul(*spec.cwd));
  }
  for (const auto& [name, value] : spec.env) {
    CHECK(!name.empty());
    CHECK(name.find('=') == std::string::npos);
    CHECK(!has_nul(name));
    if (value) CHECK(!has_nul(*value));
  }
  CHECK(spec.idle_timeout_ms >= 0 && spec.idle_timeout_ms <= kMaxDurationMs);
  CHECK(spec.max_runtime_ms >= 0 && spec.max_runtime_ms <= kMaxDurationMs);
  CHECK(spec.input_wait_timeout_ms >= 0 && spec.input_wait_timeout_ms <= kMaxDurationMs);
  CHECK(spec.tty_stop_timeout_ms >= 0 && spec.tty_stop_timeout_ms <= kMaxDurationMs);
  CHECK(spec.grace_ms >= 0 && spec.grace_ms <= kMaxDurationMs);
  CHECK(spec.max_output_bytes <= kMaxBytes || spec.max_output_bytes == sup::kKeepAllOutput);
  CHECK(spec.backpressure_bytes <= kMaxBytes);
  CHECK(spec.interrupt_signal >= 1 && spec.interrupt_signal <= 64);
  if (spec.stdin_mode != sup::StdinMode::data) CHECK(spec.stdin_data.empty());
  if (spec.tty_foreground) CHECK(spec.stdin_mode == sup::StdinMode::inherit);
  // reset_signals holds signals 1..64 only; every one names a real signal.
  for (int sig = 1; sig <= 64; ++sig)
    if (spec.reset_signals & (uint64_t{1} << (sig - 1))) CHECK(sup::parse_signal(std::to_string(sig)) == sig);

  // {"fd": N}: a number exactly where the stream is a descriptor.
  CHECK((spec.stdin_mode == sup::StdinMode::fd) == (spec.host_fd[0] >= 0));
  CHECK((spec.stdout_route == sup::Route::fd) == (spec.host_fd[1] >= 0));
  CHECK((spec.stderr_route == sup::Route::fd) == (spec.host_fd[2] >= 0));
  if (spec.pty) CHECK(spec.host_fd[0] < 0 && spec.host_fd[1] < 0 && spec.host_fd[2] < 0);
  // "fds": child numbers from 3, unique; host numbers not negative.
  std::set<int> children;
  for (const auto& [child, host] : spec.extra_fds) {
    CHECK(child >= 3);
    CHECK(host >= 0);
    CHECK(children.insert(child).second);
  }

  // A NUL is never dropped silently: cJSON would cut its string short at
  // one, so an accepted spec may hold one only in stdin.data, where each must
  // come back as a NUL byte.
  size_t nul_escapes = count_nul_escapes(json);
  if (nul_escapes > 0) {
    CHECK(spec.stdin_mode == sup::StdinMode::data);
    size_t nul_bytes = 0;
    for (char c : spec.stdin_data) nul_bytes += c == '\0';
    CHECK(nul_bytes == nul_escapes);
  }
}

// The child's descriptor plan as launch() would hand it to the child: every
// target once, sorted (the child's binary search and the gaps it closes
// depend on it), 0, 1, 2 and every "fds" number among them, each from the
// host number named, and the parking place above them all.
void check_fd_plan(const sup::Spec& spec, const char* json) {
  const int stdio[3] = {100, 101, 102};
  sup::ChildFdPlan plan(stdio, spec.extra_fds);
  CHECK(plan.planned());
  const sup::ChildFds v = plan.view();
  CHECK(v.count == 3 + spec.extra_fds.size());
  CHECK(v.moves != nullptr && v.parked != nullptr);
  for (size_t i = 0; i < v.count; ++i) {
    if (i < 3) CHECK(v.moves[i].target == static_cast<int>(i) && v.moves[i].source == stdio[i]);
    if (i > 0) CHECK(v.moves[i - 1].target < v.moves[i].target);
    CHECK(v.park_from > v.moves[i].target || v.moves[i].target == INT_MAX);
  }
  for (const auto& [child, host] : spec.extra_fds) {
    bool found = false;
    for (size_t i = 0; i < v.count; ++i) found |= v.moves[i].target == child && v.moves[i].source == host;
    CHECK(found);
  }
}

void check_plan(const sup::Spec& spec, const sup::LaunchPlan& plan, const char* json) {
  CHECK(plan.argv_storage.size() == spec.argv.size());
  CHECK(plan.argv.size() == spec.argv.size() + 1);
  CHECK(plan.argv.back() == nullptr);
  for (size_t i = 0; i < spec.argv.size(); ++i) {
    CHECK(plan.argv[i] != nullptr);
    CHECK(plan.argv[i] == plan.argv_storage[i].c_str());
    CHECK(plan.argv_storage[i] == spec.argv[i]);
    CHECK(std::strlen(plan.argv[i]) == spec.argv[i].size());
  }
  CHECK(plan.argv0 == spec.argv[0]);
  CHECK(!plan.exec_path.empty());
  CHECK(!has_nul(plan.exec_path));
  CHECK(plan.cwd == spec.cwd);
  CHECK(plan.signals.keep_ignored == spec.keep_ignored_signals);
  CHECK(plan.signals.reset == spec.reset_signals);
  if (!plan.envp.empty()) {
    CHECK(plan.envp.size() == plan.env_storage.size() + 1);
    CHECK(plan.envp.back() == nullptr);
    for (size_t i = 0; i < plan.env_storage.size(); ++i) {
      CHECK(plan.envp[i] == plan.env_storage[i].c_str());
      CHECK(plan.env_storage[i].find('=') != std::string::npos);
      CHECK(!has_nul(plan.env_storage[i]));
    }
    // What the spec sets is there, what it removes is not.
    for (const auto& [name, value] : spec.env) {
      std::string prefix = name + "=";
      size_t found = 0;
      for (const std::string& kv : plan.env_storage)
        if (kv.compare(0, prefix.size(), prefix) == 0) {
          ++found;
          if (value) CHECK(kv == prefix + *value);
        }
      CHECK(found == (value ? 1u : 0u));
    }
  } else {
    CHECK(spec.env.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);  // adds the NUL
  const char* json = text.c_str();
  sup::Spec spec;
  try {
    spec = sup::parse_spec(json);
  } catch (const sup::SpecError& e) {
    if (e.message.empty()) violated("a SpecError without a message", json);
    return 0;
  }
  check_spec(spec, json);
  check_fd_plan(spec, json);
  try {
    sup::LaunchPlan plan = sup::plan_launch(spec);
    check_plan(spec, plan, json);
  } catch (const sup::LaunchError& e) {
    CHECK(e.code < 0);
    CHECK(!e.message.empty());
  }
  return 0;
}
