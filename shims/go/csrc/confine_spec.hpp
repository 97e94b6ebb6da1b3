// The spec's confinement keys ("limits", "sandbox", "user", "group",
// "groups"), parsed and validated; confine.cpp turns them into a plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct cJSON;

namespace sup {

// "limits": each unset key leaves the host's own limit in place.
struct LimitsSpec {
  std::optional<uint64_t> memory_bytes;
  std::optional<uint64_t> cpu_seconds;
  std::optional<uint64_t> processes;
  std::optional<uint64_t> file_bytes;
  std::optional<uint64_t> open_files;
  // Only false does anything (RLIMIT_CORE 0); true leaves the host's limit.
  std::optional<bool> core_dump;
  bool any() const noexcept {
    return memory_bytes || cpu_seconds || processes || file_bytes || open_files || core_dump;
  }
};

struct SandboxSpec {
  bool given = false;
  std::vector<std::string> write;
  // nullopt: everything may be read (or executed).
  std::optional<std::vector<std::string>> read;
  std::optional<std::vector<std::string>> exec;
  bool network = true;
  bool strict = false;
  bool tmp = false;
};

// A user or group as the spec gives it: a number, or a name resolved on the
// caller's thread (credentials.cpp).
struct IdSpec {
  std::optional<uint32_t> id;
  std::string name;
};

struct ConfineSpec {
  LimitsSpec limits;
  SandboxSpec sandbox;
  std::optional<IdSpec> user;
  std::optional<IdSpec> group;
  std::optional<std::vector<IdSpec>> groups;
  bool any() const noexcept { return limits.any() || sandbox.given || user || group || groups; }
};

// Parses item if its key is one of the confinement keys; returns false for
// any other key. Throws SpecError naming the key for a bad value.
bool parse_confine_key(const cJSON* item, ConfineSpec& spec);

}  // namespace sup
