// The loop's watch on the sentinel, which starts another when one dies.
#include "sentinel_link.hpp"

#include <memory>
#include <new>

#include "loop_watch.hpp"
#include "sentinel.hpp"
#include "spawner.hpp"

namespace sup {

bool SentinelLink::sentinel_running() const noexcept { return sentinel_.running(); }

void SentinelLink::watch(uv_loop_t* loop) noexcept {
  watched_ = true;
  // It never writes: readable is its end closing. Unwatched if that fails:
  // a sentinel that dies is not replaced.
  watch_fd(loop, watch_, sentinel_.fd(), UV_READABLE | UV_DISCONNECT, this,
           [](uv_poll_t* h, int, int) { static_cast<SentinelLink*>(h->data)->on_gone(h->loop); });
}

void SentinelLink::on_gone(uv_loop_t* loop) noexcept {
  // Unwatched before the descriptor's number gets the new socket.
  watch_.close();
  bool restarted = false;
  try {
    std::unique_ptr<ChildStack> stack = stacks_.take_stack();
    // The loop waits for the new sentinel's exec, a millisecond or so; a
    // caller's clone would wait as long for a spawner thread. A few tries:
    // whatever killed the last one may catch the next as it starts.
    constexpr int kTries = 3;
    for (int i = 0; i < kTries && !restarted; ++i) restarted = sentinel_.restart(*stack, dev_null_.get());
    stacks_.give_back_stack(std::move(stack));
  } catch (const std::bad_alloc&) {
  }
  // Without a sentinel the spawner thread clones, and PR_SET_PDEATHSIG
  // ties each main process to the host.
  if (restarted) watch(loop);
}

}  // namespace sup
