// Signal numbers <-> names, as bash's `kill -l` prints them ("SIGTERM",
// "SIGRTMIN+1", "SIGRTMAX-2", "SIG32"), for the spec, the result and the C
// API (sup_signal_name, sup_signal_parse).
#pragma once

#include <string>

namespace sup {

// Parses a name with or without "SIG", in any case ("TERM", "SIGint",
// "rtmin+3", "SIGRTMAX-2", "SIG32"), an alias ("IOT", "POLL"), or a decimal
// number. Returns the signal number (1..SIGRTMAX), or 0 when it names none.
int parse_signal(const std::string& text) noexcept;

// The static name for 1..SIGRTMAX, nullptr otherwise. Thread-safe.
const char* signal_name_or_null(int sig) noexcept;

// signal_name_or_null, or "SIG<n>" outside that range.
std::string signal_name(int sig);

}  // namespace sup
