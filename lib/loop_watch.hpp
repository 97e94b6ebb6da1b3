// The engine parts' two small tools: a readable watch on the loop, and an absolute timerfd.
#pragma once

#include <sys/timerfd.h>
#include <uv.h>

#include "clock.hpp"
#include "uv_handle.hpp"

namespace sup {

// Watches fd for readability on loop, handle->data = data. Returns 0, or
// libuv's error with nothing left watched.
inline int poll_readable(uv_loop_t* loop, UvHandle<uv_poll_t>& handle, int fd, void* data,
                         uv_poll_cb on_ready) noexcept {
  uv_poll_t* poll = nullptr;
  try {
    poll = handle.create();
  } catch (...) {
    return UV_ENOMEM;
  }
  int code = uv_poll_init(loop, poll, fd);
  if (code != 0) {
    handle.discard();  // never initialized: uv_close would corrupt the loop
    return code;
  }
  poll->data = data;
  code = uv_poll_start(poll, UV_READABLE, on_ready);
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
