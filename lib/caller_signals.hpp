// What API threads send the child without the loop's lock (sup_abort, sup_interrupt, sup_signal), latched for the loop to adopt.
#pragma once

#include <atomic>
#include <cstdint>

#include "clock.hpp"

namespace sup {

// Callers signal the child's group from their own thread (a signal handler
// among them), so that an abort or an interrupt does not wait for the loop
// to wake; the loop then takes what they sent as its own
// (Process::adopt_caller_signals). Everything here is an atomic, lock-free
// and async-signal-safe, but host_adopted_ (the loop's, under work_mu_).
// Process does the sending (send_to_child, with the pidfd); this holds:
// - the window: callers inside it may signal the group, until the loop,
//   about to reap the main process (whose pid, so the group id, may then go
//   to a stranger), closes it and waits for them to leave;
// - the caller's SIGKILL: its time, 0 until there is one;
// - the interrupt latch: the interrupt signal is sent once, by whoever
//   takes it first;
// - sup_signal's sends, for signals_sent, in slots claimed by index.
class CallerSignals {
 public:
  // ---- The window ----------------------------------------------------------
  // Every caller that may signal enters, and leaves whatever enter returned:
  // true while the loop has not begun to reap the main process.
  bool enter() noexcept { return (inside_.fetch_add(1, std::memory_order_acq_rel) & kReaping) == 0; }
  void leave() noexcept { inside_.fetch_sub(1, std::memory_order_acq_rel); }
  // The loop, before it may reap: no caller enters from now on, and those
  // inside have left when this returns (each within a system call).
  void close_for_reap() noexcept;
  // A caller inside the window for a scope: entered at construction, left
  // at destruction, whatever open() says.
  class Window {
   public:
    explicit Window(CallerSignals& signals) noexcept : signals_(signals), open_(signals.enter()) {}
    ~Window() { signals_.leave(); }
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;
    // The loop has not begun to reap the main process.
    bool open() const noexcept { return open_; }

   private:
    CallerSignals& signals_;
    const bool open_;
  };

  // ---- The caller's SIGKILL ------------------------------------------------
  Nanos kill_at() const noexcept { return kill_at_.load(std::memory_order_acquire); }
  // Stamped before the signal, so that the loop never sees the death
  // without it; false if another caller's kill is on record (two callers
  // racing send one kill).
  bool stamp_kill(Nanos at) noexcept {
    Nanos none = 0;
    return kill_at_.compare_exchange_strong(none, at, std::memory_order_acq_rel);
  }
  // The kill reached nobody (the main process ended meanwhile): not on
  // record, and the loop decides the end as for any exit.
  void unstamp_kill() noexcept { kill_at_.store(0, std::memory_order_release); }

  // ---- The interrupt latch -------------------------------------------------
  // 0 while free; the time a caller sent the interrupt, until the loop
  // adopts it; then closed, as once the loop sent it or anyone killed the
  // group (no interrupt follows a kill).
  static constexpr Nanos kLatchClosed = -1;
  Nanos latch() const noexcept { return latch_.load(std::memory_order_acquire); }
  // Takes a free latch for an interrupt sent at `at`; false if taken.
  bool take_latch(Nanos at) noexcept {
    Nanos free = 0;
    return latch_.compare_exchange_strong(free, at, std::memory_order_acq_rel);
  }
  // Closes a free latch: true when it was free (the loop may send the
  // interrupt), false when a caller sent it first or a kill closed it.
  bool close_free_latch() noexcept { return take_latch(kLatchClosed); }
  // Closed whatever it held: adopted by the loop, or the caller's interrupt
  // reached nobody.
  void close_latch() noexcept { latch_.store(kLatchClosed, std::memory_order_release); }

  // ---- sup_signal's sends ----------------------------------------------------
  // Claims a slot and writes it, the signal last; past the slots, sent but
  // not listed.
  void record_host(int sig, Nanos at) noexcept;
  // The loop: each send not yet adopted, in the order claimed, up to the
  // first slot claimed but not yet written (taken at a later look).
  template <class Adopt>
  void adopt_host(Adopt&& adopt) {
    const unsigned claimed = host_claimed();
    while (host_adopted_ < claimed) {
      const HostSignal& s = host_[host_adopted_];
      const int sig = s.signal.load(std::memory_order_acquire);
      if (sig == 0) break;
      adopt(sig, s.at.load(std::memory_order_relaxed));
      ++host_adopted_;
    }
  }
  bool any_host_adopted() const noexcept { return host_adopted_ > 0; }
  // Whether the last of the sends that stop or continue (SIGSTOP, SIGTSTP,
  // SIGTTIN, SIGTTOU, SIGCONT) was SIGTTIN or SIGTTOU.
  bool last_stop_on_terminal() const noexcept;

 private:
  static constexpr unsigned kReaping = 1u << 31;
  static constexpr unsigned kHostSlots = 64;
  unsigned host_claimed() const noexcept;

  // Callers inside the window, plus kReaping once the loop closed it.
  std::atomic<unsigned> inside_{0};
  std::atomic<Nanos> kill_at_{0};
  std::atomic<Nanos> latch_{0};
  struct HostSignal {
    std::atomic<int> signal{0};
    std::atomic<Nanos> at{0};
  };
  HostSignal host_[kHostSlots];
  std::atomic<unsigned> host_count_{0};
  unsigned host_adopted_ = 0;
};

}  // namespace sup
