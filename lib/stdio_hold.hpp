// Holding the host's closed 0, 1 and 2 while libuv makes its descriptors.
#pragma once

namespace sup {

// A host that closed 0, 1 or 2 would otherwise get the loop's epoll, libuv's
// signal pipes or the engine's eventfd there, which it may later dup2 its own
// descriptor over (sup would then close the host's as its own), and a child
// inheriting "stdin" would read from them. sup's own descriptors are moved
// above 2 as they are made (fd_above_stdio), but libuv's cannot be: while it
// makes them, the free low slots are held by /dev/null, then freed again,
// so that the host's stdio is left as the host left it.
struct StdioHold {
  bool held[3] = {false, false, false};

  // Fills every free slot of 0, 1 and 2 with /dev/null.
  void hold() noexcept;
  // Only what is still ours: a host thread may have dup2'd its own
  // descriptor into a held slot meanwhile (it would not be close-on-exec,
  // or not /dev/null).
  void release() noexcept;
};

}  // namespace sup
