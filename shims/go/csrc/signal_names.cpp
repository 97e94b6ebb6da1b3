#include "signal_names.hpp"

#include <signal.h>
#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sup {
namespace {

struct NamedSignal {
  const char* name;
  int number;
};

// The first name of a number is the one printed; the others are aliases.
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

constexpr int kMaxSignal = 64;

// Every name, made once (SIGRTMIN is glibc's run-time value: it keeps 32
// and 33 for its threads, which bash then prints as numbers).
struct NameTable {
  char names[kMaxSignal + 1][24] = {};
  NameTable() {
    const int rtmin = SIGRTMIN, rtmax = SIGRTMAX;
    for (int sig = 1; sig <= kMaxSignal && sig <= rtmax; ++sig) {
      char* out = names[sig];
      const size_t size = sizeof names[sig];
      const NamedSignal* named = nullptr;
      for (const auto& s : kSignals)
        if (s.number == sig) {
          named = &s;
          break;
        }
      if (named != nullptr)
        std::snprintf(out, size, "SIG%s", named->name);
      else if (sig < rtmin)
        std::snprintf(out, size, "SIG%d", sig);
      else if (sig == rtmin)
        std::snprintf(out, size, "SIGRTMIN");
      else if (sig == rtmax)
        std::snprintf(out, size, "SIGRTMAX");
      // bash: SIGRTMIN+N up to the middle of the range, SIGRTMAX-N above.
      else if (sig - rtmin <= (rtmax - rtmin) / 2)
        std::snprintf(out, size, "SIGRTMIN+%d", sig - rtmin);
      else
        std::snprintf(out, size, "SIGRTMAX-%d", rtmax - sig);
    }
  }
};

const NameTable& table() {
  static const NameTable names;
  return names;
}

// "" -> 0, "+N" / "-N" (sign as given) -> N; -1 if malformed.
int offset(const char* text, char sign) {
  if (*text == '\0') return 0;
  if (*text != sign || text[1] < '0' || text[1] > '9') return -1;
  char* end = nullptr;
  long n = std::strtol(text + 1, &end, 10);
  return *end == '\0' && n <= kMaxSignal ? static_cast<int>(n) : -1;
}

}  // namespace

int parse_signal(const std::string& text) noexcept {
  if (text.empty() || text.size() != std::strlen(text.c_str())) return 0;
  const char* name = text.c_str();
  if (strncasecmp(name, "SIG", 3) == 0) name += 3;
  const int rtmin = SIGRTMIN, rtmax = SIGRTMAX;
  if (*name >= '0' && *name <= '9') {
    char* end = nullptr;
    long n = std::strtol(name, &end, 10);
    if (*end != '\0' || n < 1 || n > rtmax || n > kMaxSignal) return 0;
    return static_cast<int>(n);
  }
  for (const auto& s : kSignals)
    if (strcasecmp(name, s.name) == 0) return s.number;
  // Every RTMIN+N and RTMAX-N inside the range, not only the printed ones.
  if (strncasecmp(name, "RTMIN", 5) == 0) {
    int n = offset(name + 5, '+');
    return n >= 0 && rtmin + n <= rtmax ? rtmin + n : 0;
  }
  if (strncasecmp(name, "RTMAX", 5) == 0) {
    int n = offset(name + 5, '-');
    return n >= 0 && rtmax - n >= rtmin ? rtmax - n : 0;
  }
  return 0;
}

const char* signal_name_or_null(int sig) noexcept {
  if (sig < 1 || sig > kMaxSignal || sig > SIGRTMAX) return nullptr;
  return table().names[sig];
}

std::string signal_name(int sig) {
  const char* name = signal_name_or_null(sig);
  return name != nullptr ? std::string(name) : "SIG" + std::to_string(sig);
}

}  // namespace sup
