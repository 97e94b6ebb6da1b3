// One child's result: the outcome decided once from why and how it ended,
// the record as published, and the record's JSON text around the two
// streams, whose text the captures give (json_text.hpp).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "clock.hpp"
#include "containment.hpp"
#include "deadlines.hpp"
#include "escalation_state.hpp"
#include "foreground.hpp"
#include "unique_fd.hpp"

namespace sup {

// The final result. Its containment keys are the containment's
// (containment.hpp).
struct Result : ContainOutcome {
  int outcome = 0;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  bool status_lost = false;
  bool forced_kill = false;
  Nanos duration = 0;
  std::vector<SignalSent> signals_sent;
  struct rusage usage {};
  int phase = 0;  // enum sup_phase
  // Asked for (input_watch.cpp): whether it was waiting for input at its
  // end; nullopt where sup could not see, or nobody asked.
  std::optional<bool> waiting_for_input;
  // The limit that ended the child (Confinement::limit_hit), or nullptr.
  const char* limit = nullptr;
  // "tty_foreground" (foreground.hpp).
  ForegroundGrant foreground;
};

// Locking: a member of Process (result_). publish() is called once, under
// the process's mu_, by whichever thread publishes (the loop, or a caller
// finishing the process under work_mu_): the record, then the flag
// (release); from then on record() is immutable and read by any thread
// that saw the flag (acquire). The text, and sup_fd's eventfd, are made and
// kept under mu_.
class ResultBuilder {
 public:
  // Between the two streams' text.
  static constexpr const char* kBetweenStreams = ", \"stderr\": ";

  // The outcome, the phase, and the main process's exit code or signal.
  // cause and kind: why sup ended it (Cause::none: nothing did). status:
  // how the main process ended (waitid's); status_lost: the host reaped it
  // and took its status.
  static void decide(Result& r, Cause cause, TimeoutKind kind, const siginfo_t& status, bool status_lost) noexcept;

  // The record, then the flag, and sup_fd's eventfd readable.
  void publish(Result&& r) noexcept;
  bool published() const noexcept { return published_.load(std::memory_order_acquire); }
  const Result& record() const noexcept { return record_; }
  // sup_fd's eventfd, made at its first call: readable for good once
  // published (nobody reads its counter). The descriptor, or -errno.
  int event_fd() noexcept;
  // What a live reader's call touches first (Process::prefetch_for_read).
  const void* published_at() const noexcept { return &published_; }

  // The text before the streams, to "\"stdout\": ". May throw
  // std::bad_alloc.
  std::string head(pid_t pid) const;
  // The text after them: the signals, the rusage, the terminal's, the
  // containment's keys (Containment::append_json), confined (its JSON,
  // "null" for none), the limit. May throw std::bad_alloc.
  std::string rest(const Containment& containment, const std::string& confined) const;

  bool has_text() const noexcept { return text_.has_value(); }
  // The whole text, once: made by Process, which puts the streams in.
  void set_text(std::string text) noexcept { text_ = std::move(text); }
  const std::string& text() const noexcept { return *text_; }
  // The text if made, else null.
  const std::string* text_if_made() const noexcept { return text_ ? &*text_ : nullptr; }

 private:
  Result record_;
  std::atomic<bool> published_{false};
  UniqueFd event_fd_;
  std::optional<std::string> text_;
};

}  // namespace sup
