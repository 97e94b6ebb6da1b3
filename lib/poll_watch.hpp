// A libuv poll watch on one of a child's descriptors, made and started so
// that a refusal (out of memory, epoll's watch limit) shows where sup can
// still end the child, instead of aborting the host in the loop's next step.
#pragma once

#include <uv.h>

#include "uv_handle.hpp"

namespace sup {

// Makes watch on fd (uv_poll_init, which tries fd on the loop's epoll),
// watch->data = data. what names the descriptor in the error. Throws
// LaunchError. Loop thread.
void make_poll(uv_loop_t* loop, UvHandle<uv_poll_t>& watch, int fd, void* data, const char* what);

// make_poll, then started for events. Throws LaunchError. Loop thread.
void start_poll(uv_loop_t* loop, UvHandle<uv_poll_t>& watch, int fd, int events, uv_poll_cb on_ready, void* data,
                const char* what);

// Starts for readability a watch made earlier. probe: it was stopped
// since, so its fd is tried on the loop's epoll first. Throws LaunchError.
// Loop thread.
void restart_poll(uv_loop_t* loop, UvHandle<uv_poll_t>& watch, uv_poll_cb on_ready, bool probe, const char* what);

}  // namespace sup
