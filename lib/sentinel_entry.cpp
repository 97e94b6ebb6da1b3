#include "sentinel_entry.hpp"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

#include "sentinel_run.hpp"

extern char** environ;

#ifndef SUP_LIBEXECDIR
#define SUP_LIBEXECDIR "/usr/local/libexec"
#endif

namespace sup {
namespace {

constexpr const char* kMarker = "SUP_SENTINEL_OF";
// The ready status of "self" and "preload": not 0, which a true(1) that
// ran without the preloaded object also exits with.
constexpr int kEntryReady = 86;

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// Where this copy of the library's code lives.
bool own_object(Dl_info& info) {
  return dladdr(reinterpret_cast<void*>(&sentinel_ways), &info) != 0 && info.dli_fname != nullptr;
}

// dl_iterate_phdr's first object is the executable: is addr in one of its
// loaded segments? (1: yes, 2: no; either stops the walk there.)
int in_executable(dl_phdr_info* info, size_t, void* data) {
  const auto addr = *static_cast<uintptr_t*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (addr >= start && addr < start + ph.p_memsz) return 1;
  }
  return 2;
}

bool linked_into_executable() {
  auto addr = reinterpret_cast<uintptr_t>(&sentinel_ways);
  return dl_iterate_phdr(in_executable, &addr) == 1;
}

// The program: next to the library (a build tree), else SUP_LIBEXECDIR.
std::string program_path(const Dl_info* self) {
  if (self != nullptr) {
    std::string lib = self->dli_fname;
    size_t slash = lib.rfind('/');
    if (slash != std::string::npos) {
      std::string beside = lib.substr(0, slash + 1) + kSentinelProgram;
      if (executable(beside)) return beside;
    }
  }
  std::string installed = std::string(SUP_LIBEXECDIR) + "/" + kSentinelProgram;
  return executable(installed) ? installed : std::string();
}

// The host's environment with `extra` first and none of the names it sets.
std::vector<std::string> environment_with(std::initializer_list<std::string> extra) {
  std::vector<std::string> env(extra);
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    bool replaced = false;
    for (const std::string& x : extra)
      if (strncmp(*e, x.c_str(), x.find('=') + 1) == 0) replaced = true;
    if (!replaced) env.emplace_back(*e);
  }
  return env;
}

// Runs in every process that has this object, before main where the
// object is part of the executable or preloaded: a host re-executed as its
// own sentinel (see sentinel_entry.hpp) becomes it here and never returns.
// Priority 101: before the executable's other constructors, so that as
// little of the host as possible runs first. The environment, not the
// arguments: musl passes a constructor none.
__attribute__((constructor(101))) void sentinel_entry() {
  const char* host = getenv(kMarker);
  if (host == nullptr || host[0] < '1' || host[0] > '9') return;
  // Never the sentinel of whoever set the variable, and never a second copy
  // of a privileged program's main either (sentinel_ways() does not re-run
  // such a host).
  if (getauxval(AT_SECURE) != 0) _exit(127);
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(0, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) return;
  _exit(sup_sentinel_run(kEntryReady));
}

}  // namespace

std::vector<SentinelWay> sentinel_ways(pid_t host, std::string& why_none) {
  std::vector<SentinelWay> ways;
  Dl_info self{};
  const bool have_self = own_object(self);
  const std::string marker = std::string(kMarker) + "=" + std::to_string(host);
  const bool in_exe = linked_into_executable();
  // Run again, a set-user-ID or otherwise privileged host would be a
  // secure execution, where the entry refuses to act (AT_SECURE).
  const bool privileged = getauxval(AT_SECURE) != 0 || getuid() != geteuid() || getgid() != getegid();
  const std::string program = program_path(have_self ? &self : nullptr);
  if (in_exe && !privileged) ways.push_back({"self", "/proc/self/exe", environment_with({marker}), kEntryReady});
  if (!program.empty()) ways.push_back({"program", program, {}, 0});
  // LD_PRELOAD splits its list at spaces and colons.
  if (!in_exe && !privileged && have_self && self.dli_fname[0] == '/' && strpbrk(self.dli_fname, " :") == nullptr) {
    for (const char* tru : {"/bin/true", "/usr/bin/true"}) {
      if (!executable(tru)) continue;
      ways.push_back(
          {"preload", tru, environment_with({marker, std::string("LD_PRELOAD=") + self.dli_fname}), kEntryReady});
      break;
    }
  }
  if (ways.empty())
    why_none = std::string("no ") + kSentinelProgram + " beside libsup or in " + SUP_LIBEXECDIR +
               (privileged ? ", and a privileged (set-user-ID) host is not run again"
                           : ", and libsup is in a shared object that cannot be preloaded into true(1)");
  return ways;
}

}  // namespace sup
