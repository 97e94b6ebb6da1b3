// The loop's watch on the sentinel, which starts another when one dies.
#pragma once

#include <uv.h>

#include "unique_fd.hpp"
#include "uv_handle.hpp"

namespace sup {

class Sentinel;
class Spawner;

// Loop thread only, but for forget (a forked child). The sentinel itself,
// the stacks its restart clones on and /dev/null are the engine's, lent.
class SentinelLink {
 public:
  SentinelLink(Sentinel& sentinel, Spawner& stacks, const UniqueFd& dev_null) noexcept
      : sentinel_(sentinel), stacks_(stacks), dev_null_(dev_null) {}

  // Whenever the loop wakes: once the sentinel runs, its end of the socket
  // is watched for the hang-up of a sentinel that died.
  void watch_once_running(uv_loop_t* loop) noexcept {
    if (!watched_ && sentinel_running()) watch(loop);
  }
  void close() noexcept { watch_.close(); }
  // In a forked child: leaves libuv's handle alone.
  void forget() noexcept { watch_.forget(); }

 private:
  bool sentinel_running() const noexcept;
  void watch(uv_loop_t* loop) noexcept;
  // The sentinel died: starts another (Sentinel::restart).
  void on_gone(uv_loop_t* loop) noexcept;

  Sentinel& sentinel_;
  Spawner& stacks_;
  const UniqueFd& dev_null_;
  UvHandle<uv_poll_t> watch_;
  bool watched_ = false;  // watched, or given up on
};

}  // namespace sup
