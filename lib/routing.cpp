// Routing the child's stdout and stderr, and the "tee" copy to the host's fd.
#include "routing.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "errno_text.hpp"
#include "poll_watch.hpp"
#include "process.hpp"
#include "sup.h"

namespace sup {
namespace {

// After the main process has exited, the result waits for the host's fd to
// take the tee's last copies as long as it takes some byte within this.

[[noreturn]] void fail_errno(const char* what) {
  int err = errno;
  throw LaunchError{-err, std::string(what) + ": " + errno_text(err)};
}

// The host's fd, or /dev/null when the host has it closed.
int host_or_null(int fd, int dev_null) { return fcntl(fd, F_GETFD) >= 0 ? fd : dev_null; }

UniqueFd duplicate(int fd) {
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) fail_errno("fcntl(F_DUPFD_CLOEXEC)");
  return UniqueFd(copy);
}

}  // namespace

const char* route_name(Route route) noexcept {
  switch (route) {
    case Route::pipe: return "pipe";
    case Route::tee: return "tee";
    case Route::inherit: return "inherit";
    case Route::null_device: return "null";
    case Route::stdout_stream: return "stdout";
    case Route::fd: return "fd";
  }
  return "pipe";
}

bool route_is_read(Route route) noexcept { return route == Route::pipe || route == Route::tee; }

void check_routes(const Spec& spec) {
  const bool err_read = spec.stderr_route == Route::stdout_stream ? route_is_read(spec.stdout_route)
                                                                   : route_is_read(spec.stderr_route);
  if (route_is_read(spec.stdout_route) || err_read) return;
  for (const auto& [key, ms] : {std::pair<const char*, int64_t>{"idle_timeout_ms", spec.idle_timeout_ms},
                                 {"first_output_timeout_ms", spec.first_output_timeout_ms}})
    if (ms > 0)
      throw SpecError{std::string("spec: ") + key +
                      ": sup reads neither stream (\"stdout\" and \"stderr\" are neither \"pipe\" nor "
                      "\"tee\"), so the child can never be heard"};
}

void plan_output(const Spec& spec, int dev_null, SpawnFds& fds) {
  auto route_one = [&](Route route, int host_fd, UniqueFd& child_end, UniqueFd& read_end) {
    switch (route) {
      case Route::pipe:
      case Route::tee: {
        PipeEnds p = make_pipe();
        // Our read end never blocks, from the start: several callers in
        // sup_poll may wake on one byte, and the loop may not have the child
        // yet. A read that blocked would hold the process (work_mu_) and,
        // with it, the loop. The child's end stays blocking, as a child
        // expects of its stdout.
        set_nonblocking(p.read_end.get());
        child_end = std::move(p.write_end);
        read_end = std::move(p.read_end);
        return child_end.get();
      }
      case Route::inherit: return host_or_null(host_fd, dev_null);
      // The host's descriptor named, as it is (check_host_fds saw it open):
      // the child gets a copy in its own table, the host's entry and its
      // flags are not touched.
      case Route::fd: return spec.host_fd[host_fd];
      case Route::null_device:
      case Route::stdout_stream: return dev_null;
    }
    return dev_null;
  };
  fds.stdio.fd[1] = route_one(spec.stdout_route, 1, fds.child_out, fds.out_read);
  // The same descriptor as the child's stdout, so that the two keep the
  // order they were written in.
  if (spec.stderr_route == Route::stdout_stream)
    fds.stdio.fd[2] = fds.stdio.fd[1];
  else
    fds.stdio.fd[2] = route_one(spec.stderr_route, 2, fds.child_err, fds.err_read);
}

TeeSink::TeeSink(UniqueFd fd, Kind kind, bool pollable) noexcept
    : fd_(std::move(fd)), kind_(kind), pollable_(pollable) {}

TeeSink::~TeeSink() = default;

std::unique_ptr<TeeSink> TeeSink::open(int host_fd) {
  struct stat st;
  if (fcntl(host_fd, F_GETFD) < 0 || fstat(host_fd, &st) != 0) return nullptr;
  if (S_ISSOCK(st.st_mode)) return std::unique_ptr<TeeSink>(new TeeSink(duplicate(host_fd), Kind::socket, true));
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    char path[40];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", host_fd);
    int own = ::open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (own >= 0) return std::unique_ptr<TeeSink>(new TeeSink(above_stdio(UniqueFd(own)), Kind::own, true));
    // A terminal reports POLLOUT with any room at all, and a blocking write
    // then waits for every byte: on the loop thread, with nobody reading,
    // that was for good, every other child's deadline with it.
    std::unique_ptr<TeeSink> sink(new TeeSink(UniqueFd(), Kind::threaded, true));
    sink->writer_ = std::make_unique<TeeWriter>(duplicate(host_fd));
    return sink;
  }
  return std::unique_ptr<TeeSink>(new TeeSink(duplicate(host_fd), Kind::plain, false));
}

int TeeSink::fd() const noexcept { return writer_ ? writer_->progress_fd() : fd_.get(); }

size_t TeeSink::pending() const noexcept {
  return writer_ ? writer_->pending() : pending_.size() - pending_at_;
}

void TeeSink::fail(int err) noexcept {
  error_ = err != 0 ? err : EIO;
  give_up();
}

ssize_t TeeSink::write_some(const char* data, size_t len) noexcept {
  if (failed()) return -1;
  for (;;) {
    ssize_t n;
    if (kind_ == Kind::socket)
      n = send(fd_.get(), data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    else
      n = write(fd_.get(), data, len);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return 0;
    const int err = errno;
    if (err == EPIPE) {
      // The loop thread blocks every signal: the SIGPIPE this write raised
      // is pending on it, and taken back so that it stays nobody's.
      sigset_t pipe_only;
      sigemptyset(&pipe_only);
      sigaddset(&pipe_only, SIGPIPE);
      timespec zero{0, 0};
      while (sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    fail(err);
    return -1;
  }
}

void TeeSink::copy(const char* data, size_t len) noexcept {
  if (failed()) return;
  if (writer_) {
    if (!writer_->queue(data, len, kMaxPending)) fail(writer_->error());
    return;
  }
  size_t done = 0;
  if (pending() == 0) {
    while (done < len) {
      ssize_t n = write_some(data + done, len - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  if (done == len || failed() || pending() + (len - done) > kMaxPending) return;
  try {
    pending_.append(data + done, len - done);
  } catch (...) {
    // Out of memory: this copy is dropped, the capture has it.
  }
}

bool TeeSink::flush() noexcept {
  if (writer_) {
    const bool progress = writer_->take_progress();
    if (!failed() && writer_->error() != 0) fail(writer_->error());
    return progress;
  }
  bool progress = false;
  while (pending() > 0) {
    ssize_t n = write_some(pending_.data() + pending_at_, pending());
    if (n <= 0) break;
    pending_at_ += static_cast<size_t>(n);
    progress = true;
  }
  if (pending() == 0) {
    pending_.clear();
    pending_at_ = 0;
  } else if (pending_at_ > kHoldBack && pending_at_ * 2 > pending_.size()) {
    pending_.erase(0, pending_at_);
    pending_at_ = 0;
  }
  return progress;
}

void TeeSink::give_up() noexcept {
  if (writer_) writer_->drop_queued();
  std::string().swap(pending_);
  pending_at_ = 0;
}

// ---- The process's side (loop thread) ------------------------------------

void Process::on_tee_ready(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<Process*>(handle->data);
  std::lock_guard<std::mutex> work(self->work_mu_);
  if (self->final_on_loop()) return;
  Streams& streams = self->streams_;
  self->tee_writable(handle == streams.out().tee_watch().get() ? streams.out() : streams.err(), status);
}

void Process::tee_copy(OutputStream& pipe, const char* data, size_t len) {
  TeeSink& tee = *pipe.tee();
  UvHandle<uv_poll_t>& watch = pipe.tee_watch();
  tee.copy(data, len);
  if (tee.failed()) {
    // read_pipe ends the stream at EPIPE (OutputStream::tee_ended).
    pipe.tee_failed(tee.error());
    if (watch) uv_poll_stop(watch.get());
    return;
  }
  if (tee.pending() == 0 || !tee.pollable()) return;
  const int events = tee.watch_readable() ? UV_READABLE : UV_WRITABLE;
  if (!watch) {
    try {
      start_poll(loop_, watch, tee.fd(), events, on_tee_ready, this, "tee");
    } catch (...) {
      // The host's fd cannot be watched: what it did not take is dropped.
      tee.give_up();
      return;
    }
  } else if (uv_poll_start(watch.get(), events, on_tee_ready) != 0) {
    tee.give_up();
    return;
  }
  streams_.hold_for_tee(pipe, /*ending=*/lifecycle_ != Lifecycle::running);
}

void Process::tee_writable(OutputStream& pipe, int status) {
  TeeSink& tee = *pipe.tee();
  if (status < 0) tee.give_up();
  const bool progress = tee.flush();
  // The host's reader took a copy: activity for a held-back stream's idle
  // clock, as a live reader's read is.
  if (progress) pipe.note_read(now_ns());
  if (tee.pending() == 0 || tee.failed()) uv_poll_stop(pipe.tee_watch().get());
  if (tee.failed() && pipe.tee_errno() == 0) {
    pipe.tee_failed(tee.error());
    // The tee's reader has gone: the stream ends as the descriptor's own
    // would, the child's next write failing with EPIPE (or SIGPIPE), and the
    // capture keeps what was read.
    if (pipe.tee_ended() && pipe.open()) {
      pipe.set_tee_held(false);
      pipe_ended(pipe);
      return;
    }
  }
  if (pipe.tee_held() && tee.pending() <= TeeSink::kHoldBack / 2) {
    // Still over the backpressure window: resume_held_back's to resume.
    if (!streams_.release_tee_hold(pipe)) return;
    if (pipe.open()) {
      try {
        watch_pipe(pipe, /*probe=*/true);
      } catch (...) {
        end_unwatched(/*drain=*/true);
        return;
      }
    }
    // The child was blocked by the host's fd, not silent.
    deadlines_.note_activity(now_ns());
    arm_deadline();
  }
  if (lifecycle_ != Lifecycle::draining) return;
  if (progress) escalation_.copies_progressed(now_ns());
  if (copies_pending())
    arm_deadline();
  else
    maybe_finish();
}

// Copies the host's fd has yet to take, which the result waits for (up
// to kTeeStall without progress) once the main process has exited.
bool Process::copies_pending() const noexcept {
  // After sup_abort or sup_release nothing waits for the host's fd.
  if (escalation_.cause() == Cause::aborted) return false;
  return streams_.copies_pending();
}

// finish(), or, while copies_pending(), once they are written.
void Process::finish_after_copies() {
  if (!copies_pending()) {
    finish();
    return;
  }
  // The pidfd stays readable and the pipes are at EOF: only the copies'
  // watches are left.
  main_.watch().close();
  close_pipe(streams_.out());
  close_pipe(streams_.err());
  escalation_.copies_wait_from(now_ns());
  arm_deadline();
}

}  // namespace sup
