// Signal numbers <-> names ("SIGTERM"), for the spec and the result.
#pragma once

#include <string>

namespace sup {

// Parses "SIGTERM", "TERM" (any case) or a decimal number. Returns the signal
// number, or 0 when it names no signal this system has.
int parse_signal(const std::string& text) noexcept;

// "SIGTERM" for 15; "SIGRTMIN+3" for real-time signals; "SIG<n>" otherwise.
std::string signal_name(int sig);

}  // namespace sup
