// One output stream's own state: reading its pipe, its reader's readiness and lease, its tee.
#include "output_stream.hpp"

#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace sup {
namespace {

// Half a default pipe (64 KiB): a read this big found the pipe well filled.
constexpr ssize_t kBehindBytes = 32 * 1024;

}  // namespace

void OutputStream::set_route(const char* routed, std::unique_ptr<TeeSink> tee) noexcept {
  routed_ = routed;
  tee_ = std::move(tee);
}

ssize_t OutputStream::read_some(char* buf, size_t cap) noexcept {
  ssize_t n;
  while ((n = read(fd_.get(), buf, cap)) < 0 && errno == EINTR) {
  }
  return n;
}

UniqueFd OutputStream::close() noexcept {
  take_back(/*lapse=*/false);
  watch_.close();
  return std::move(fd_);
}

int OutputStream::make_ready_fd() noexcept {
  int fd = make_event_fd();
  if (fd < 0) return -errno;
  ready_fd_.reset(fd);
  return 0;
}

void OutputStream::signal_ready(bool final) noexcept {
  if (!ready_fd_.valid() || ready_signaled_) return;
  if (unread() > 0 || final) {
    set_readable(ready_fd_.get());
    ready_signaled_ = true;
  }
}

void OutputStream::clear_ready_if_caught_up(bool final) noexcept {
  if (!ready_signaled_ || unread() > 0 || final) return;
  clear_readable(ready_fd_.get());
  ready_signaled_ = false;
}

bool OutputStream::make_reader_set() noexcept {
  int ep = fd_above_stdio(epoll_create1(EPOLL_CLOEXEC));
  if (ep < 0) return false;
  UniqueFd set(ep);
  epoll_event ready{};
  ready.events = EPOLLIN;
  ready.data.u32 = 0;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, ready_fd_.get(), &ready) != 0) return false;
  reader_set_ = std::move(set);
  return true;
}

bool OutputStream::lend() noexcept {
  epoll_event bytes{};
  bytes.events = EPOLLIN;
  bytes.data.u32 = 1;
  if (epoll_ctl(reader_set_.get(), EPOLL_CTL_ADD, fd_.get(), &bytes) != 0 && errno != EEXIST) return false;
  // A read for the sweep: a new lease is not in doubt at the first look.
  count_read(0, 1);
  read_full_.store(false, std::memory_order_relaxed);
  holder_.store(PipeHolder::reader, std::memory_order_release);
  return true;
}

bool OutputStream::take_back(bool lapse) noexcept {
  if (holder_.load(std::memory_order_relaxed) != PipeHolder::reader) return false;
  holder_.store(lapse ? PipeHolder::lapsed : PipeHolder::loop, std::memory_order_release);
  // Level-triggered: a pipe left in the set would wake its reader for
  // bytes it may no longer take, a busy loop.
  if (reader_set_.valid() && fd_.valid()) epoll_ctl(reader_set_.get(), EPOLL_CTL_DEL, fd_.get(), nullptr);
  return true;
}

void OutputStream::count_read(ssize_t n, size_t cap) noexcept {
  // Under work_mu_, the counter's only writers: no read-modify-write needed.
  reads_.store(reads_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // Big reads: the pipe was well filled, the reader perhaps behind.
  if (n > 0 && (static_cast<size_t>(n) == cap || n >= kBehindBytes)) read_full_.store(true, std::memory_order_relaxed);
}

bool OutputStream::lease_in_doubt() noexcept {
  const uint64_t reads = reads_.load(std::memory_order_relaxed);
  if (reads == reads_at_sweep_ || read_full_.load(std::memory_order_relaxed)) return true;
  reads_at_sweep_ = reads;
  unread_seen_ = false;
  return false;
}

bool OutputStream::reader_left_bytes() noexcept {
  const uint64_t reads = reads_.load(std::memory_order_relaxed);
  const bool idle = reads == reads_at_sweep_;
  const bool full = read_full_.exchange(false, std::memory_order_relaxed);
  reads_at_sweep_ = reads;
  if (!idle) unread_seen_ = false;
  if (!idle && !full) return false;
  int unread = 0;
  if (ioctl(fd_.get(), FIONREAD, &unread) != 0) return false;
  // Half a default pipe still unread after big reads: the reader keeps
  // the child waiting.
  if (!idle) return unread >= kBehindBytes;
  // Bytes waiting at two sweeps with no read between: the reader has gone,
  // or polls slower than the child writes. (At one, they may have come a
  // moment before, the reader on its way.)
  const bool left = unread > 0 && unread_seen_;
  unread_seen_ = unread > 0;
  return left;
}

bool OutputStream::tee_ended() const noexcept { return tee_errno_ == EPIPE; }

bool OutputStream::copies_pending() const noexcept { return tee_ && tee_watch_ && tee_->pending() > 0; }

void OutputStream::close_tee() noexcept {
  tee_watch_.close();
  if (!tee_) return;
  tee_->flush();
  tee_.reset();
}

}  // namespace sup
