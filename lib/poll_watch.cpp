// A libuv poll watch on a child's descriptor whose refusal shows at once
// (poll_watch.hpp).
#include "poll_watch.hpp"

#include <sys/epoll.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "launch_plan.hpp"
#include "loop_watch.hpp"

namespace sup {
namespace {

void check_uv(int rc, const char* call, const char* what) {
  if (rc == 0) return;
  throw LaunchError{rc, std::string(call) + "(" + what + "): " + uv_strerror(rc)};
}

}  // namespace

void make_poll(uv_loop_t* loop, UvHandle<uv_poll_t>& watch, int fd, void* data, const char* what) {
  check_uv(make_watch(loop, watch, fd, data), "uv_poll_init", what);
}

void start_poll(uv_loop_t* loop, UvHandle<uv_poll_t>& watch, int fd, int events, uv_poll_cb on_ready, void* data,
                const char* what) {
  make_poll(loop, watch, fd, data, what);
  check_uv(uv_poll_start(watch.get(), events, on_ready), "uv_poll_start", what);
}

void restart_poll(uv_loop_t* loop, UvHandle<uv_poll_t>& watch, uv_poll_cb on_ready, bool probe, const char* what) {
  if (probe) {
    // libuv adds a started watch's fd to its epoll only in the loop's next
    // step, and aborts the whole host if epoll_ctl refuses it then
    // (uv__io_poll); uv_poll_stop took the fd out. The fd is tried now, as
    // uv_poll_init does, so that a refusal (ENOMEM; ENOSPC, past
    // max_user_watches) ends this child instead. The probe's data is libuv's
    // own for "no watcher", should an event of it ever be seen.
    int fd = -1;
    check_uv(uv_fileno(reinterpret_cast<uv_handle_t*>(watch.get()), &fd), "uv_fileno", what);
    const int epfd = uv_backend_fd(loop);
    epoll_event probe_event{};
    probe_event.events = EPOLLIN;
    probe_event.data.u64 = ~uint64_t{0};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &probe_event) == 0)
      epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &probe_event);
    else if (errno != EEXIST)
      check_uv(-errno, "epoll_ctl", what);
  }
  check_uv(uv_poll_start(watch.get(), UV_READABLE, on_ready), "uv_poll_start", what);
}

}  // namespace sup
