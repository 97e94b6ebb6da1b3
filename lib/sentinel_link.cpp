// The loop's watch on the sentinel, which starts another when one dies.
#include "sentinel_link.hpp"

#include <memory>
#include <new>

#include "sentinel.hpp"
#include "spawner.hpp"

namespace sup {

bool SentinelLink::sentinel_running() const noexcept { return sentinel_.running(); }

void SentinelLink::watch(uv_loop_t* loop) noexcept {
  watched_ = true;
  uv_poll_t* poll;
  try {
    poll = watch_.create();
  } catch (const std::bad_alloc&) {
    return;  // unwatched: a sentinel that dies is not replaced
  }
  int code = uv_poll_init(loop, poll, sentinel_.fd());
  if (code != 0) {
    watch_.discard();
    return;
  }
  poll->data = this;
  // It never writes: readable is its end closing.
  code = uv_poll_start(poll, UV_READABLE | UV_DISCONNECT, [](uv_poll_t* h, int, int) {
    static_cast<SentinelLink*>(h->data)->on_gone(h->loop);
  });
  if (code != 0) watch_.close();
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
