// The spec's keys for the child's descriptors: "stdin", "stdout", "stderr",
// "fds" and "pty" (spec.cpp's table of keys calls these).
#pragma once

#include <cstddef>
#include <string>

#include "spec.hpp"

struct cJSON;

namespace sup {

// Each parses its key's value into spec; throws SpecError naming the key.
void parse_stdin(const cJSON* item, Spec& spec);
void parse_pty(const cJSON* item, Spec& spec);
// "stdout" or "stderr" (key): where the stream goes; {"fd": N} sets
// spec.host_fd[1] or [2].
Route parse_route(const cJSON* item, const std::string& key, Spec& spec);
void parse_fds(const cJSON* item, Spec& spec);

// Decodes RFC 4648 base64, padded or not. Returns false on any byte outside
// the alphabet, misplaced padding or an impossible length.
bool decode_base64(const char* text, size_t len, std::string& out);

}  // namespace sup
