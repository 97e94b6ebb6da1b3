// The loop's small tools: a watch of a descriptor, and an absolute timerfd.
#pragma once

#include <sys/timerfd.h>
#include <uv.h>

#include "clock.hpp"
#include "uv_handle.hpp"

namespace sup {

// Makes handle a watch of fd on loop (uv_poll_init, which tries fd on the
// loop's epoll), handle->data = data. Returns 0, or libuv's error with
// nothing made.
inline int make_watch(uv_loop_t* loop, UvHandle<uv_poll_t>& handle, int fd, void* data) noexcept {
  uv_poll_t* poll = nullptr;
  try {
    poll = handle.create();
  } catch (...) {
    return UV_ENOMEM;
  }
  const int code = uv_poll_init(loop, poll, fd);
  if (code != 0) {
    handle.discard();  // never initialized: uv_close would corrupt the loop
    return code;
  }
  poll->data = data;
  return 0;
}

// make_watch, then started for events. Returns 0, or libuv's error with
// nothing left watched.
inline int watch_fd(uv_loop_t* loop, UvHandle<uv_poll_t>& handle, int fd, int events, void* data,
                    uv_poll_cb on_ready) noexcept {
  int code = make_watch(loop, handle, fd, data);
  if (code != 0) return code;
  code = uv_poll_start(handle.get(), events, on_ready);
  if (code != 0) handle.close();
  return code;
}

// Arms a timerfd for `when`, absolute monotonic ns (0 disarms).
inline void raise_timer(int fd, Nanos when) noexcept {
  itimerspec spec{};
  spec.it_value.tv_sec = when / 1000000000;
  spec.it_value.tv_nsec = when % 1000000000;
  timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, nullptr);
}

}  // namespace sup
