#include "signal_names.hpp"

#include <signal.h>
#include <strings.h>

#include <cstdlib>

namespace sup {
namespace {

struct NamedSignal {
  const char* name;
  int number;
};

constexpr NamedSignal kSignals[] = {
    {"HUP", SIGHUP},     {"INT", SIGINT},       {"QUIT", SIGQUIT},   {"ILL", SIGILL},
    {"TRAP", SIGTRAP},   {"ABRT", SIGABRT},     {"IOT", SIGIOT},     {"BUS", SIGBUS},
    {"FPE", SIGFPE},     {"KILL", SIGKILL},     {"USR1", SIGUSR1},   {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},     {"ALRM", SIGALRM},   {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD},   {"CONT", SIGCONT},   {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN},     {"TTOU", SIGTTOU},   {"URG", SIGURG},
    {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},     {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH}, {"IO", SIGIO},         {"POLL", SIGPOLL},   {"PWR", SIGPWR},
    {"SYS", SIGSYS},
};

}  // namespace

int parse_signal(const std::string& text) noexcept {
  if (text.empty()) return 0;
  if (text[0] >= '0' && text[0] <= '9') {
    char* end = nullptr;
    long n = std::strtol(text.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > SIGRTMAX) return 0;
    return static_cast<int>(n);
  }
  const char* name = text.c_str();
  if (strncasecmp(name, "SIG", 3) == 0) name += 3;
  for (const auto& s : kSignals)
    if (strcasecmp(name, s.name) == 0) return s.number;
  return 0;
}

std::string signal_name(int sig) {
  for (const auto& s : kSignals)
    if (s.number == sig) return std::string("SIG") + s.name;
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) {
    if (sig == SIGRTMIN) return "SIGRTMIN";
    return "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  }
  return "SIG" + std::to_string(sig);
}

}  // namespace sup
