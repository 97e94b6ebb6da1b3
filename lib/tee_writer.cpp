// The "tee" writer thread for a blocking descriptor (tee_writer.hpp).
#include "tee_writer.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "errno_text.hpp"
#include "event_fd.hpp"
#include "launch.hpp"

namespace sup {
namespace {

// Taken off the queue per write: the host's descriptor gets the copies in
// pieces, as it would from the child itself.
constexpr size_t kChunk = 64 * 1024;

// A writer thread may sit in write() for good, and return from it whenever
// the fd's reader comes back: the library's code must still be mapped
// then. Once one exists, dlclose no longer unloads the library.
void pin_library() noexcept {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] {
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&pin_library), &self) != 0 && self.dli_fname != nullptr)
      (void)dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  });
}

}  // namespace

// Shared by the loop's side and the thread, which may outlive the sink (a
// write that never returns). Under mu, except the descriptors.
struct TeeWriter::State {
  std::mutex mu;
  std::condition_variable more;
  std::string queued;
  size_t in_flight = 0;  // taken by the thread, not yet written
  uint64_t written = 0;
  uint64_t written_seen = 0;  // the loop's, for take_progress
  int error = 0;
  bool stop = false;
  UniqueFd fd;
  UniqueFd progress;

  void tell() noexcept {
    uint64_t one = 1;
    (void)!write(progress.get(), &one, sizeof one);
  }

  void run() noexcept {
    prctl(PR_SET_NAME, "sup-tee", 0, 0, 0);
    std::string chunk;
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      more.wait(lock, [&] { return stop || !queued.empty(); });
      if (stop) return;
      const size_t take = std::min(kChunk, queued.size());
      try {
        chunk.assign(queued, 0, take);
      } catch (...) {
        queued.clear();  // out of memory: these copies are dropped
        continue;
      }
      queued.erase(0, take);
      in_flight = take;
      size_t done = 0;
      while (done < take) {
        lock.unlock();
        ssize_t n = write(fd.get(), chunk.data() + done, take - done);
        const int err = errno;
        lock.lock();
        if (stop) return;
        if (n > 0) {
          done += static_cast<size_t>(n);
          in_flight -= static_cast<size_t>(n);
          written += static_cast<uint64_t>(n);
          tell();
          continue;
        }
        if (n < 0 && err == EINTR) continue;
        if (err == EPIPE) {
          // Every signal is blocked here: the SIGPIPE this write raised is
          // pending on this thread, and taken back so that it stays nobody's.
          sigset_t pipe_only;
          sigemptyset(&pipe_only);
          sigaddset(&pipe_only, SIGPIPE);
          timespec zero{0, 0};
          while (sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
          }
        }
        error = n == 0 ? EIO : err;
        in_flight = 0;
        std::string().swap(queued);
        tell();
        return;
      }
    }
  }
};

TeeWriter::TeeWriter(UniqueFd fd) : state_(std::make_shared<State>()) {
  state_->fd = std::move(fd);
  int progress = make_event_fd();
  if (progress < 0) throw LaunchError{-errno, "eventfd: " + errno_text(errno)};
  state_->progress.reset(progress);
  progress_fd_ = progress;
  pin_library();
  // Born with every signal blocked: host signals go to host threads, and a
  // SIGPIPE of its writes stays its own.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    std::thread([state = state_] { state->run(); }).detach();
  } catch (const std::system_error& e) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw LaunchError{-EAGAIN, std::string("tee: no thread for a blocking descriptor: ") + e.what()};
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

TeeWriter::~TeeWriter() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
    std::string().swap(state_->queued);
  }
  state_->more.notify_one();
}

bool TeeWriter::queue(const char* data, size_t len, size_t max_queued) noexcept {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->error != 0) return false;
    if (state_->queued.size() + state_->in_flight + len > max_queued) return true;
    try {
      state_->queued.append(data, len);
    } catch (...) {
      return true;  // out of memory: this copy is dropped, the capture has it
    }
  }
  state_->more.notify_one();
  return true;
}

size_t TeeWriter::pending() const noexcept {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->queued.size() + state_->in_flight;
}

bool TeeWriter::take_progress() noexcept {
  uint64_t count;
  (void)!read(progress_fd_, &count, sizeof count);
  std::lock_guard<std::mutex> lock(state_->mu);
  const bool progress = state_->written != state_->written_seen;
  state_->written_seen = state_->written;
  return progress;
}

int TeeWriter::error() const noexcept {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->error;
}

void TeeWriter::drop_queued() noexcept {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::string().swap(state_->queued);
}

}  // namespace sup
