// What every parser of a spec's keys shares: the error that names the key.
#pragma once

#include <cjson/cJSON.h>

#include <string>

#include "spec.hpp"

namespace sup {

// Throws SpecError "spec: KEY: PROBLEM": every bad input names its key.
[[noreturn]] inline void spec_fail(const std::string& key, const std::string& problem) {
  throw SpecError{"spec: " + key + ": " + problem};
}

inline std::string string_value(const cJSON* item, const std::string& key) {
  if (!cJSON_IsString(item)) spec_fail(key, "must be a string");
  return item->valuestring;
}

}  // namespace sup
