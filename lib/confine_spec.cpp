// Parsing the confinement keys of a spec; every error names its key.
#include "confine_spec.hpp"

#include <cjson/cJSON.h>

#include <cmath>
#include <set>

#include "spec.hpp"
#include "spec_value.hpp"

namespace sup {
namespace {

uint64_t positive(const cJSON* item, const std::string& key, double max) {
  if (!cJSON_IsNumber(item)) spec_fail(key, "must be a positive integer");
  double v = item->valuedouble;
  if (v != std::floor(v) || v < 1) spec_fail(key, "must be a positive integer");
  if (v > max) spec_fail(key, "too large (at most " + std::to_string(static_cast<uint64_t>(max)) + ")");
  return static_cast<uint64_t>(v);
}

bool boolean(const cJSON* item, const std::string& key) {
  if (!cJSON_IsBool(item)) spec_fail(key, "must be true or false");
  return cJSON_IsTrue(item);
}

void parse_limits(const cJSON* item, LimitsSpec& limits) {
  if (!cJSON_IsObject(item))
    spec_fail("limits", "must be an object of \"memory_bytes\", \"cpu_seconds\", \"processes\", \"file_bytes\", "
                   "\"open_files\", \"core_dump\"");
  std::set<std::string> seen;
  // 2^53: exact as a JSON number, and far beyond any real limit.
  constexpr double kMax = 9007199254740992.0;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    const std::string name = e->string;
    const std::string key = "limits." + name;
    if (!seen.insert(name).second) spec_fail(key, "appears twice");
    if (name == "memory_bytes")
      limits.memory_bytes = positive(e, key, kMax);
    else if (name == "cpu_seconds")
      limits.cpu_seconds = positive(e, key, 1e9);  // RLIMIT_CPU's hard limit is one more
    else if (name == "processes")
      limits.processes = positive(e, key, 4194304);  // the kernel's PID_MAX_LIMIT
    else if (name == "file_bytes")
      limits.file_bytes = positive(e, key, kMax);
    else if (name == "open_files")
      limits.open_files = positive(e, key, 1 << 30);  // above the kernel's nr_open ceiling
    else if (name == "core_dump")
      limits.core_dump = boolean(e, key);
    else
      spec_fail(key, "unknown key (\"memory_bytes\", \"cpu_seconds\", \"processes\", \"file_bytes\", \"open_files\" or "
                "\"core_dump\")");
  }
}

std::vector<std::string> paths(const cJSON* item, const std::string& key) {
  if (!cJSON_IsArray(item)) spec_fail(key, "must be an array of absolute paths");
  std::vector<std::string> out;
  int index = 0;
  for (const cJSON* p = item->child; p != nullptr; p = p->next, ++index) {
    const std::string at = key + "[" + std::to_string(index) + "]";
    if (!cJSON_IsString(p)) spec_fail(at, "must be a string");
    std::string path = p->valuestring;
    if (path.empty() || path[0] != '/') spec_fail(at, "must be an absolute path");
    out.push_back(std::move(path));
  }
  return out;
}

void parse_sandbox(const cJSON* item, SandboxSpec& sandbox) {
  if (!cJSON_IsObject(item))
    spec_fail("sandbox", "must be an object of \"write\", \"read\", \"exec\", \"network\", \"strict\", \"tmp\"");
  sandbox.given = true;
  std::set<std::string> seen;
  for (const cJSON* e = item->child; e != nullptr; e = e->next) {
    const std::string name = e->string;
    const std::string key = "sandbox." + name;
    if (!seen.insert(name).second) spec_fail(key, "appears twice");
    if (name == "write") {
      sandbox.write = paths(e, key);
    } else if (name == "read" || name == "exec") {
      std::optional<std::vector<std::string>> list;
      if (!cJSON_IsNull(e)) list = paths(e, key);
      (name == "read" ? sandbox.read : sandbox.exec) = std::move(list);
    } else if (name == "network") {
      sandbox.network = boolean(e, key);
    } else if (name == "strict") {
      sandbox.strict = boolean(e, key);
    } else if (name == "tmp") {
      sandbox.tmp = boolean(e, key);
    } else {
      spec_fail(key, "unknown key (\"write\", \"read\", \"exec\", \"network\", \"strict\" or \"tmp\")");
    }
  }
}

// A uid or gid: a whole number below (uid_t)-1, which means "unchanged" to
// setresuid; or a non-empty name.
IdSpec id(const cJSON* item, const std::string& key, const char* what) {
  IdSpec out;
  if (cJSON_IsNumber(item)) {
    double v = item->valuedouble;
    if (v != std::floor(v) || v < 0 || v >= 4294967295.0) spec_fail(key, std::string("must be a ") + what + " id from 0 to 4294967294 or a name");
    out.id = static_cast<uint32_t>(v);
  } else if (cJSON_IsString(item)) {
    out.name = item->valuestring;
    if (out.name.empty()) spec_fail(key, "must not be empty");
  } else {
    spec_fail(key, std::string("must be a ") + what + " name or a numeric id");
  }
  return out;
}

}  // namespace

bool parse_confine_key(const cJSON* item, ConfineSpec& spec) {
  const std::string key = item->string;
  if (key == "limits") {
    parse_limits(item, spec.limits);
  } else if (key == "sandbox") {
    parse_sandbox(item, spec.sandbox);
  } else if (key == "user") {
    spec.user = id(item, key, "user");
  } else if (key == "group") {
    spec.group = id(item, key, "group");
  } else if (key == "groups") {
    if (!cJSON_IsArray(item)) spec_fail(key, "must be an array of group names or numeric ids");
    std::vector<IdSpec> groups;
    int index = 0;
    for (const cJSON* g = item->child; g != nullptr; g = g->next, ++index)
      groups.push_back(id(g, key + "[" + std::to_string(index) + "]", "group"));
    // setgroups(2) takes at most NGROUPS_MAX (65536).
    if (groups.size() > 65536) spec_fail(key, "at most 65536 groups");
    spec.groups = std::move(groups);
  } else {
    return false;
  }
  return true;
}

}  // namespace sup
