// The child's stdout and stderr together (streams.hpp).
#include "streams.hpp"

#include <uv.h>

#include <algorithm>

#include "routing.hpp"
#include "spec.hpp"
#include "sup.h"

namespace sup {
namespace {

// How many unread bytes a held-back stream can have: the window, plus one
// read that may land just before the check, plus what a pipe holds when the
// main process has exited and sup drains it regardless (escalation.cpp).
uint64_t unread_limit(uint64_t backpressure_bytes, size_t read_buffer) {
  return backpressure_bytes == 0 ? 0 : backpressure_bytes + 4 * read_buffer;
}

// A held stream is not read: its watch, if the loop has made one, stops.
void stop_watch(OutputStream& pipe) noexcept {
  if (pipe.watch()) uv_poll_stop(pipe.watch().get());
}

}  // namespace

// "max_output_bytes": null reaches the captures as their own keep-all limit.
static_assert(kKeepAllOutput == Capture::kKeepAll);

Streams::Streams(const Spec& spec, size_t read_buffer, std::mutex& mu, std::condition_variable& changed)
    : mu_(mu),
      changed_(changed),
      backpressure_(spec.backpressure_bytes),
      out_(SUP_STDOUT, spec.max_output_bytes, unread_limit(spec.backpressure_bytes, read_buffer)),
      err_(SUP_STDERR, spec.max_output_bytes, unread_limit(spec.backpressure_bytes, read_buffer)) {
  // One terminal carries both streams: read as stdout, stderr empty.
  out_.set_route(spec.pty ? "pty" : route_name(spec.stdout_route),
                 spec.stdout_route == Route::tee ? TeeSink::open(1) : nullptr);
  err_.set_route(spec.pty ? "pty" : route_name(spec.stderr_route),
                 spec.stderr_route == Route::tee ? TeeSink::open(2) : nullptr);
  if (spec.pty) out_.set_terminal();
}

uint64_t Streams::total(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return of(stream).capture().total();
}

uint64_t Streams::omitted(int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  return of(stream).capture().omitted();
}

uint64_t Streams::total_read() {
  std::lock_guard<std::mutex> lock(mu_);
  return out_.capture().total() + err_.capture().total();
}

void Streams::keep(OutputStream& pipe, const char* data, size_t len) {
  std::lock_guard<std::mutex> lock(mu_);
  pipe.keep(data, len);
  wake_waiters();
}

void Streams::hold_back_if_needed(OutputStream& pipe) {
  if (!backpressure_.applies() || pipe.held()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!backpressure_.over(pipe.unread())) return;
    pipe.set_held(true);
  }
  stop_watch(pipe);
}

void Streams::hold_for_tee(OutputStream& pipe, bool ending) {
  // The host's fd is slower than the child: the child is made to wait, as
  // it would writing to that fd itself.
  if (pipe.tee()->pending() <= TeeSink::kHoldBack || pipe.held() || backpressure_.lifted() || ending) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pipe.set_held(true);
  }
  pipe.set_tee_held(true);
  stop_watch(pipe);
}

bool Streams::release_tee_hold(OutputStream& pipe) {
  pipe.set_tee_held(false);
  std::lock_guard<std::mutex> lock(mu_);
  // Still over the backpressure window: resume()'s to free.
  if (backpressure_.applies() && !backpressure_.may_resume(pipe.unread())) return false;
  pipe.set_held(false);
  return true;
}

bool Streams::resume(OutputStream& pipe) {
  if (!pipe.held() || pipe.tee_held()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!backpressure_.may_resume(pipe.unread())) return false;
  pipe.set_held(false);
  return true;
}

std::array<bool, 2> Streams::lift() {
  std::array<bool, 2> rewatch{false, false};
  // Also what a tee's slow host fd holds back.
  if (!backpressure_.lift()) return rewatch;
  for (int i = 0; i < 2; ++i) {
    OutputStream& pipe = i == 0 ? out_ : err_;
    // A pipe its reader reads itself is the loop's again, and watched.
    const bool was_lent = pipe.take_back(/*lapse=*/false);
    if (!pipe.held() && !was_lent) continue;
    pipe.set_tee_held(false);
    free(pipe);
    rewatch[i] = true;
  }
  return rewatch;
}

Nanos Streams::held_back_read() const noexcept { return std::max(out_.held_back_read(), err_.held_back_read()); }

void Streams::free(OutputStream& pipe) {
  std::lock_guard<std::mutex> lock(mu_);
  pipe.set_held(false);
}

UniqueFd Streams::close(OutputStream& pipe) {
  UniqueFd fd = pipe.close();
  free(pipe);
  return fd;
}

void Streams::signal_final() noexcept {
  out_.signal_ready(/*final=*/true);
  err_.signal_ready(/*final=*/true);
}

void Streams::flatten(bool final) {
  if (!final) return;
  // The loop flattens after publishing, which a caller asking at once can
  // overtake: it would then copy the kept bytes instead (16 MiB, 15 ms at
  // the default limit). Once final nothing is appended, so whichever thread
  // comes first flattens.
  out_.capture().flatten();
  err_.capture().flatten();
}

void Streams::append_json(std::string& j, OutputStream& pipe, StreamJson& text) {
  // A large stream moves into the text instead of being copied: its buffer
  // is freed page by page as it is read, and the bytes exist once, as text,
  // until a reader asks for them again (bring_back). Not once a caller
  // holds them (sup_result_output), nor for the few KiB of most results.
  constexpr size_t kMoveFrom = 1 << 20;
  Capture& c = pipe.capture();
  if (c.lendable() && text.lossless() && c.kept_size() >= kMoveFrom) {
    MallocBuffer lent = c.lend_flat();
    text.append_moving(j, lent.get());
    kept_in_text_[slot(pipe.stream())] = text.where();
  } else {
    text.append(j);
  }
}

void Streams::bring_back(OutputStream& pipe, const std::string* text) {
  // Lent only into a text that was made.
  if (!pipe.capture().lent() || text == nullptr) return;
  pipe.capture().return_flat(kept_in_text_[slot(pipe.stream())].bytes(*text, pipe.capture().kept_size()));
}

std::string_view Streams::kept(int stream, const std::string* text) {
  OutputStream& pipe = of(stream);
  bring_back(pipe, text);
  Capture& capture = pipe.capture();
  if (auto flat = capture.flat()) {
    capture.hand_out();
    return *flat;
  }
  auto& kept = kept_[slot(stream)];
  if (!kept) kept = capture.kept();
  return *kept;
}

}  // namespace sup
