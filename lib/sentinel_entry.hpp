// How the sentinel is started, whatever the link (Sentinel::launch_program
// tries each way in turn), and the library's own entry for the ways that
// run it from a copy of the library rather than from sup-sentinel.
//
// 1. "program": sup-sentinel beside the library (a build tree) or in
//    libexecdir, exec'd as ever. The way of a shared libsup, tried first
//    there: nothing changes for an installed build.
// 2. "self": libsup is part of the host's own executable (libsup.a, or its
//    sources compiled in by cgo or the cc crate): /proc/self/exe is exec'd
//    again with SUP_SENTINEL_OF=HOSTPID in its environment. A constructor in
//    this file's object, which the static linker always pulls in (it
//    defines what Sentinel::launch_program calls), sees the variable before
//    main runs, and the process becomes the sentinel and _exits: the host's
//    own code never runs. Tried first there, as it needs nothing installed
//    and is this very build of the sentinel.
// 3. "preload": libsup is in a shared object that is not the executable
//    (a libsup.so without its program, or sources compiled into a module a
//    Lua or Node interpreter dlopen()s, whose constructors run long after
//    main): /bin/true is exec'd with that object in LD_PRELOAD and the
//    same variable; the object's constructor runs before true's main. Where
//    the object cannot be preloaded (a symbol only its interpreter defines
//    bound at load time, a sanitizer runtime), true simply exits 0.
//
// Each way's first half exits with its own ready status once the sentinel
// runs; any other exit is that way failing, and the next is tried. The
// alternative of a sealed memfd holding the sentinel's program was weighed
// and not taken: builds that compile the sources (cgo, cc, luarocks) have
// no program to carry, and vm.memfd_noexec=2 refuses it anyway. Where no
// way works, each child dies with the host by PR_SET_PDEATHSIG alone, and
// its result says "host_death": "main_process".
//
// The variable is honoured only with fd 0 a SOCK_SEQPACKET socket, and
// never in a set-user-ID or otherwise secure execution (AT_SECURE), which
// exits at once instead: a privileged program linking sup can be made
// neither to kill what its caller names nor to run its main as a would-be
// sentinel. A privileged host (AT_SECURE, or real and effective ids that
// differ) is therefore never run again: "self" and "preload" are not tried
// there.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sup {

// The sentinel's program's name, as installed and as its argv[0].
inline constexpr const char* kSentinelProgram = "sup-sentinel";

struct SentinelWay {
  const char* name;               // "program", "self", "preload"
  std::string path;               // what is exec'd
  std::vector<std::string> env;   // its whole environment; empty: the host's
  int ready_status;               // the first half's exit once the sentinel runs
};

// The ways to try for this host, in order; why_none says what was looked
// for when the list is empty. Throws std::bad_alloc.
std::vector<SentinelWay> sentinel_ways(pid_t host, std::string& why_none);

}  // namespace sup
