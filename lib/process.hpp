// One supervised child, composed of parts that own their state: the handle
// the API holds (handle_pins.hpp), the main process (main_process.hpp), its
// output streams (streams.hpp), the clock (deadlines.hpp), the escalation
// (escalation_state.hpp) and what callers send without the loop
// (caller_signals.hpp), what they ask of it (loop_requests.hpp), the callers
// driving it (caller_drivers.hpp), containment (containment.hpp), the host's
// terminal (foreground.hpp), the child's stdin (child_input.hpp), waiting
// for input (input_wait.hpp), confinement (confine.hpp) and the result
// (result_builder.hpp); its life's stage is a Lifecycle (lifecycle.hpp).
// The loop thread drives it (output.cpp reads the pipes, escalation.cpp
// arms the deadline and sends the signals, result.cpp gathers the end from
// the parts and publishes it); API threads read its shared state under mu_
// or latch requests through atomics. A caller waiting in sup_poll watches
// the exit and reads the pipes itself meanwhile, while the loop stands back
// (caller_wait.cpp), and finishes the process under work_mu_ when it sees
// the main process exit first.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "caller_drivers.hpp"
#include "caller_signals.hpp"
#include "child_setup.hpp"
#include "child_input.hpp"
#include "clock.hpp"
#include "confine.hpp"
#include "containment.hpp"
#include "deadlines.hpp"
#include "engine.hpp"
#include "escalation_state.hpp"
#include "foreground.hpp"
#include "handle_pins.hpp"
#include "input_wait.hpp"
#include "lifecycle.hpp"
#include "loop_requests.hpp"
#include "main_process.hpp"
#include "output_stream.hpp"
#include "result_builder.hpp"
#include "spec.hpp"
#include "streams.hpp"
#include "unique_fd.hpp"
#include "uv_handle.hpp"

namespace sup {

class Process {
 public:
  // called_at: when sup_spawn was called (process.cpp says why).
  Process(Engine& engine, const Spec& spec, Nanos called_at, ChildSetup setup);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // ---- API threads ----------------------------------------------------
  // The handle's validity and its pins (api_call.hpp).
  HandlePins& handle() noexcept { return handle_; }
  bool forked_away() const noexcept { return handle_.forked_away(Engine::fork_generation()); }
  // Prefetches what a read touches of a handle not yet validated.
  static void prefetch_for_read(const void* handle, int stream) noexcept;
  pid_t pid() const noexcept { return main_.pid(); }
  // For the loop to act on; at once, or by wake_by (monotonic ns) if not 0.
  // Async-signal-safe. Returns 1 if already final, else 0.
  int request(unsigned bits, Nanos wake_by = 0) noexcept;
  // Every signal sup sends (MainProcess::signal). Async-signal-safe.
  bool send_to_child(int sig, bool answer = true) noexcept { return main_.signal(sig, answer); }
  // sup_abort's first step: SIGKILL to the group from the caller's thread.
  bool kill_from_caller() noexcept;
  // sup_interrupt's first step: the interrupt signal from the caller's thread.
  Nanos interrupt_from_caller() noexcept;
  // sup_signal, recorded for signals_sent.
  int signal_from_caller(int sig) noexcept;
  // sup_interrupt's second step: the loop arms the grace's kill.
  int request_interrupt(Nanos sent_at) noexcept;
  // sup_poll and sup_output_wait (caller_wait.cpp). wait_final returns 1
  // when final, 0 on time-out, SUP_ECANCELED when released meanwhile.
  int wait_final(int timeout_ms);
  int wait_output(uint64_t out_pos, uint64_t err_pos, int timeout_ms);
  // sup_output_read and sup_output_fd (direct_read.cpp). read_output
  // returns the count, or SUP_EINVAL for a position past the end.
  int64_t read_output(int stream, uint64_t* pos, char* buf, size_t cap);
  int output_fd(int stream);
  uint64_t output_total(int stream) { return streams_.total(stream); }
  int event_fd();
  // "stdin": "pipe", or the terminal's master with "pty" (input.cpp,
  // child_input.hpp).
  int input_write(const char* buf, size_t len, size_t* written);
  int input_wait(int timeout_ms);
  int input_fd();
  int input_close();
  // sup_input_wanted (input_watch.cpp): 1, 0, or a code.
  int input_wanted();
  // sup_pty_resize (input.cpp).
  int pty_resize(int rows, int cols);
  // What the sentinel covers should the host die (set at the clone).
  HostDeath host_death() const noexcept { return containment_.host_death(); }
  bool is_final() const noexcept { return result_.published(); }
  // Valid only once is_final(): the result never changes afterwards.
  const Result& result() const noexcept { return result_.record(); }
  const std::string& result_json();
  std::string_view kept_output(int stream);
  uint64_t omitted_bytes(int stream) { return streams_.omitted(stream); }
  // sup_release, the caller's part of the end.
  void release();
  // sup_release in a forked child: forgets what is the parent's loop's.
  void abandon() noexcept;
  // The engine this process belongs to (Engine::dispose).
  Engine& engine() const noexcept { return engine_; }

  // ---- Spawner thread (or the caller's: Engine::spawn) -----------------
  // The one step from a clone to the process; returns when the loop must
  // have started it (0: now).
  Nanos adopt_child(Launched& child, SpawnFds& fds, HostDeath covered) noexcept;
  static constexpr Nanos kLazyStart = 5'000'000;
  // Any thread, once queued: the loop is to start the process now.
  void need_loop() noexcept;

  // ---- Loop thread: one entry per event, each called by the engine -----
  // (The watches' own events, a pipe readable or the exit, come through
  // libuv's callbacks: on_pipe_readable, on_watch.)
  // The start (Lifetimes::start_queued): the watches, stdin, the deadline.
  void start(uv_loop_t* loop, bool tracked) noexcept;
  // What callers latched (request, Engine::wake_for; LoopWake::drain_requests).
  void handle_requests();
  // The deadline armed through Engine::set_deadline is due, or within
  // Engine::kTimerLead (DeadlineTimer).
  void on_deadline();
  // ReaderLeases' sweep: takes back the pipes readers left behind.
  bool check_reader_leases();
  // Before the engine frees a released process: what is left is closed.
  void before_disposal() noexcept;
  // Library shutdown (Lifetimes::end_all): kill, reap and publish now.
  void shutdown();

  // The engine's, carried for it (engine_links.hpp); nothing in Process reads it.
  EngineLinks engine_links{this};

 private:
  // ---- Taking the child over (process.cpp) ----------------------------
  void fall_back_to_group(std::string why) noexcept;  // contain.cpp
  Nanos loop_needed_by(Nanos now) const noexcept;
  // First in every loop-thread entry, under work_mu_: true (and torn down) if final.
  bool final_on_loop() noexcept;
  void handle_requests_locked();

  // ---- The loop's watches and the pipes (output.cpp) --------------------
  void end_unwatched(bool drain) noexcept;  // a child the loop cannot watch ends now
  static void on_pipe_readable(uv_poll_t* handle, int status, int events);
  template <void (Process::*handler)()>
  static void on_watch(uv_poll_t* handle, int status, int events);
  void watch_pipe(OutputStream& pipe, bool probe);
  void watch_exit_and_pipes(bool probe);
  void sync_watches();  // the loop stands back while a caller drives
  bool can_drive() const noexcept;
  void on_output_ready(OutputStream& pipe);
  void pipe_ended(OutputStream& pipe);
  // Return false at EOF.
  bool read_pipe(OutputStream& pipe, int max_reads, bool until_empty = false);
  bool read_pipe(OutputStream& pipe, char* buf, size_t cap, int max_reads, bool until_empty);
  bool drain_pipe(OutputStream& pipe);  // true at EOF
  void close_pipe(OutputStream& pipe);
  void resume_held_back();
  void lift_backpressure();
  void feed_stdin();
  void on_stdin_writable();
  void close_stdin() noexcept { input_.end_feed(); }
  void note_output() noexcept;  // a byte was read: the idle clock restarts

  // ---- A caller waiting for the end (caller_wait.cpp) -------------------
  int wait_leader_exit(int timeout_ms);
  bool drive_to_exit(int timeout_ms, Nanos start);
  bool wait_on_pidfd(int timeout_ms);
  bool finish_from_caller();

  // ---- Live readers reading the pipes themselves (direct_read.cpp) -------
  int64_t read_direct(OutputStream& pipe, uint64_t* pos, char* buf, size_t cap);
  void hand_back_direct(OutputStream& pipe);
  bool leasable(const OutputStream& pipe) const noexcept;
  bool can_read_directly(const OutputStream& pipe) const noexcept;
  void offer_direct(OutputStream& pipe) noexcept;
  bool take_lease(OutputStream& pipe) noexcept;
  bool retake_lease(OutputStream& pipe);
  void sync_reader_watches();

  // ---- Waiting for input (input_watch.cpp) -------------------------------
  void look_for_input(Nanos now);
  bool caller_stopped_on_terminal() const noexcept;

  // ---- sup_signal's records (host_signal.cpp) ----------------------------
  void adopt_host_signals() noexcept;
  void order_signals_sent();

  // ---- "tee" (routing.cpp) -----------------------------------------------
  static void on_tee_ready(uv_poll_t* handle, int status, int events);
  void tee_copy(OutputStream& pipe, const char* data, size_t len);
  void tee_writable(OutputStream& pipe, int status);
  bool copies_pending() const noexcept;
  void finish_after_copies();

  // ---- Deadlines, signals, the exit (escalation.cpp) ---------------------
  bool act_on_deadline();  // true if nothing is left to arm
  Nanos next_deadline() const noexcept;
  bool await_deadline(Nanos now, Nanos deadline) const noexcept;
  void arm_deadline();
  void on_leader_exit();
  void leader_gone();
  void after_leader_exit();
  void timed_out(TimeoutKind kind);
  void interrupt_group(Nanos now);
  void kill_group(Nanos now);
  void group_killed(Nanos now, bool delivered);
  bool signal_group(int sig, Nanos now, bool record);
  // First in every loop-thread entry that decides anything.
  void adopt_caller_signals();
  void adopt_caller_interrupt(Nanos at);

  // ---- The tree in cgroup mode (contain.cpp) -----------------------------
  void tree_after_exit() noexcept;
  void signal_tree_on_loop(int sig) noexcept;
  int signal_tree(int sig, int then_sig, bool group_signalled) noexcept;  // async-signal-safe

  // ---- The end (result.cpp) ----------------------------------------------
  void maybe_finish();
  void finish();  // publish_final, then tear_down
  void publish_final();
  void tear_down() noexcept;
  void reap() noexcept;
  void publish(Result&& result);
  void build_result_json();

  // Each part says at its type who may touch what, under which lock; the
  // comments here say which of Process's locks that is.
  HandlePins handle_;  // first: valid() reads it before the handle is known
  Engine& engine_;
  const Nanos called_at_;  // when sup_spawn was called
  MainProcess main_;       // pid immutable; pidfd retired under mu_; status under work_mu_

  // Held by the loop thread in every entry, and by a caller reading the
  // pipes or finishing the process (drive_to_exit, finish_from_caller),
  // from start() on; never taken while holding mu_. libuv handles and the
  // engine's deadline set are the loop thread's alone.
  std::mutex work_mu_;
  uv_loop_t* loop_ = nullptr;  // null until start(): nothing is finished before
  CallerDrivers drivers_;      // under work_mu_; its exit waiters atomic
  Lifecycle lifecycle_ = Lifecycle::running;
  bool ended() const noexcept { return lifecycle_ >= Lifecycle::final; }

  // Shared with API threads.
  LoopRequests requests_;  // atomics
  CallerSignals signals_;  // atomics: what callers sent without work_mu_
  std::mutex mu_;
  std::condition_variable changed_;
  Streams streams_;                       // as streams.hpp says, with this mu_
  ResultBuilder result_;                  // published once under mu_, then immutable; its eventfd under mu_
  Containment containment_;               // set at construction, the end under work_mu_
  std::unique_ptr<Confinement> confine_;  // set at construction; remove_tmp at release
  Deadlines deadlines_;                   // under work_mu_
  EscalationState escalation_;            // under work_mu_; what callers send waits in signals_
  HostTerminal host_terminal_;            // set at construction, then under work_mu_
  InputWait input_wait_;                  // its own lock
  ChildInput input_;                      // the host's writes under its own lock; the feed the loop's
};

}  // namespace sup
