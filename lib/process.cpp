// A Process's life as API threads see it: latching requests, waiting, reading
// live output, and handing the process back at release.
#include "process.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "engine.hpp"
#include "sup.h"

namespace sup {
namespace {

template <class Pred>
bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int timeout_ms, Pred pred) {
  if (timeout_ms < 0) {
    cv.wait(lock, pred);
    return true;
  }
  return cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), pred);
}

// How many unread bytes a held-back stream can have: the window, plus one
// read that may land just before the check.
uint64_t unread_limit(uint64_t backpressure_bytes, const Engine& engine) {
  return backpressure_bytes == 0 ? 0 : backpressure_bytes + engine.read_buffer_size();
}

}  // namespace

Process::Process(Engine& engine, const Spec& spec)
    : engine_(engine),
      idle_timeout_(spec.idle_timeout_ms * kNanosPerMs),
      max_runtime_(spec.max_runtime_ms * kNanosPerMs),
      grace_(spec.grace_ms * kNanosPerMs),
      interrupt_signal_(spec.interrupt_signal),
      on_timeout_(spec.on_timeout),
      backpressure_bytes_(spec.backpressure_bytes),
      stdin_data_(spec.stdin_mode == StdinMode::data ? spec.stdin_data : std::string()),
      out_(SUP_STDOUT, spec.max_output_bytes, unread_limit(spec.backpressure_bytes, engine)),
      err_(SUP_STDERR, spec.max_output_bytes, unread_limit(spec.backpressure_bytes, engine)) {}

Process::~Process() {
  // Only the loop thread frees a process (or the releasing thread once the
  // engine is gone), after it became final: every handle is closed already.
  magic_ = 0;
}

int Process::request(unsigned bits) noexcept {
  if (published_.load(std::memory_order_acquire)) return 1;
  requests_.fetch_or(bits);
  engine_.wake_for(*this);
  return 0;
}

bool Process::wait_final(int timeout_ms) {
  if (is_final()) return true;
  std::unique_lock<std::mutex> lock(mu_);
  return wait_until(changed_, lock, timeout_ms, [this] { return is_final(); });
}

bool Process::wait_output(uint64_t out_pos, uint64_t err_pos, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  ++waiters_;
  bool ready = wait_until(changed_, lock, timeout_ms, [&] {
    return is_final() || out_.capture.total() > out_pos || err_.capture.total() > err_pos;
  });
  --waiters_;
  return ready;
}

size_t Process::read_output(int stream, uint64_t* pos, char* buf, size_t cap) {
  OutputPipe& pipe = pipe_for(stream);
  bool resume = false;
  size_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = pipe.capture.read_at(pos, buf, cap);
    if (*pos > pipe.consumer_pos) pipe.consumer_pos = *pos;
    resume = pipe.paused && pipe.capture.total() - pipe.consumer_pos <= backpressure_bytes_;
  }
  if (resume && !is_final()) request(kResume);
  return n;
}

uint64_t Process::output_total(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return pipe_for(stream).capture.total();
}

int Process::event_fd() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!event_fd_.valid()) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) return -errno;
    event_fd_.reset(fd);
    // Readable for good once final: nobody ever reads the counter.
    if (is_final()) {
      uint64_t one = 1;
      (void)!write(fd, &one, sizeof one);
    }
  }
  return event_fd_.get();
}

uint64_t Process::omitted_bytes(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return pipe_for(stream).capture.omitted();
}

const std::string& Process::kept_output(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& kept = kept_[stream == SUP_STDOUT ? 0 : 1];
  if (!kept) kept = pipe_for(stream).capture.kept();
  return *kept;
}

const std::string& Process::result_json() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!result_json_) result_json_ = build_result_json();
  return *result_json_;
}

void Process::release() {
  if (!is_final()) {
    request(kAbort);
    wait_final(-1);
  }
  if (Engine::alive())
    engine_.dispose(*this);
  else
    delete this;
}

}  // namespace sup
