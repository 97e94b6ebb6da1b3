// NUL in a spec's strings: cJSON cuts a string at its first NUL, so the JSON
// text itself is walked for the escapes it would cut at.
#pragma once

#include "spec.hpp"

namespace sup {

// Only stdin.data may hold a NUL (its bytes are sent as they are, and are
// decoded here into spec.stdin_data); anywhere else a NUL would silently
// cut an argument, a variable or a path: throws SpecError naming the key.
// json: the text parse_spec was given, already accepted by cJSON.
void check_nul_strings(const char* json, Spec& spec);

}  // namespace sup
