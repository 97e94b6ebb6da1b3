/*
 * sup.h: run child processes under supervision.
 *
 * sup starts a child from a JSON spec, captures its stdout and stderr, ends it
 * when it falls silent (idle timeout) or runs too long (max runtime), escalates
 * from an interrupt signal to SIGKILL after a grace period, ends whatever it
 * left behind in its process group, and hands back one immutable result.
 *
 * THREAD MODEL
 *   The library owns one event-loop thread, started by the first sup_spawn.
 *   Timers fire and pipes drain on it whether or not the host calls in; the
 *   calls below only hand requests to it or wait for it.
 *
 *   - sup_interrupt and sup_abort may be called from any thread at any time,
 *     concurrently with every other call on the same handle except
 *     sup_release, and are async-signal-safe: a host may call them from its
 *     SIGINT handler. Requests are latched: none is lost, whenever it lands.
 *   - Every other function on a handle may be called from any thread, and
 *     concurrently, except sup_release, which must be the last call on the
 *     handle (as with free(3)).
 *   - The library installs no signal handler and changes no process-wide
 *     signal disposition. Its thread blocks every signal.
 *   - Children are spawned with a vfork-style clone: the cost of a spawn does
 *     not grow with the host's heap. Handles do not survive fork(2) of the host.
 *   - Children are the host's children. A host that sets SIGCHLD to SIG_IGN or
 *     reaps any child (waitpid(-1)) takes their exit status; sup then reports
 *     it as lost and no longer signals the group, whose id may be reused.
 *
 * ERRORS
 *   Functions that can fail return a negative code from enum sup_error, whose
 *   values are -errno as on Linux (like libuv's UV_E* codes) and never change.
 *   sup_strerror names any code. Human detail for a failed spawn (which spec
 *   field is wrong and why, which path failed) is written into a buffer the
 *   caller passes to sup_spawn_ex: there is no thread-local "last error".
 *
 * Requires Linux >= 5.9 (pidfd, CLONE_PIDFD, close_range).
 */
#ifndef SUP_H
#define SUP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SUP_BUILDING) && defined(__GNUC__)
#define SUP_API __attribute__((visibility("default")))
#else
#define SUP_API
#endif

#define SUP_VERSION_MAJOR 0
#define SUP_VERSION_MINOR 1
#define SUP_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, comparable with sup_version(). */
#define SUP_VERSION_NUMBER \
  (SUP_VERSION_MAJOR * 10000 + SUP_VERSION_MINOR * 100 + SUP_VERSION_PATCH)

/* Error codes: -errno values on Linux, fixed forever. */
enum sup_error {
  SUP_OK = 0,
  SUP_EPERM = -1,     /* the kernel refused (e.g. a signal to the group) */
  SUP_ENOENT = -2,    /* argv[0] not found, or a path in the spec does not exist */
  SUP_E2BIG = -7,     /* argv plus environment too large for exec */
  SUP_ENOEXEC = -8,   /* argv[0] is not in an executable format */
  SUP_EBADF = -9,     /* sup_fd: the descriptor could not be created */
  SUP_EAGAIN = -11,   /* out of processes (RLIMIT_NPROC, pid_max), try later */
  SUP_ENOMEM = -12,   /* out of memory */
  SUP_EACCES = -13,   /* argv[0] or cwd not accessible / not executable */
  SUP_EBUSY = -16,    /* the result is not final yet */
  SUP_ENOTDIR = -20,  /* cwd, or a component of a path, is not a directory */
  SUP_EISDIR = -21,   /* argv[0] is a directory */
  SUP_EINVAL = -22,   /* bad argument: NULL handle or pointer, malformed spec */
  SUP_EMFILE = -24,   /* the host is out of file descriptors */
  SUP_ENOSYS = -38,   /* the kernel lacks pidfd / CLONE_PIDFD support */
  SUP_ENODATA = -61,  /* no such value: exit code of a signaled child, ... */
  SUP_EINTERNAL = -4096 /* a bug in sup: please report it */
};

/* What ended the main process. Decided once, by priority:
 * aborted > idle_timeout / max_runtime > interrupted > signaled > exited.
 * A deadline or request that lands after the main process has exited on its
 * own does not change the outcome. */
enum sup_outcome {
  SUP_OUTCOME_EXITED = 1,       /* exited by itself; see sup_result_exit_code */
  SUP_OUTCOME_SIGNALED = 2,     /* died from a signal sup did not send */
  SUP_OUTCOME_IDLE_TIMEOUT = 3, /* ended after idle_timeout_ms of silence */
  SUP_OUTCOME_MAX_RUNTIME = 4,  /* ended after max_runtime_ms */
  SUP_OUTCOME_INTERRUPTED = 5,  /* ended by sup_interrupt */
  SUP_OUTCOME_ABORTED = 6       /* ended by sup_abort or sup_release */
};

/* The two captured streams; the values are the child's fd numbers. */
enum sup_stream { SUP_STDOUT = 1, SUP_STDERR = 2 };

typedef struct sup_proc sup_proc; /* opaque */

/* Returns SUP_VERSION_NUMBER of the library actually loaded. Thread-safe. */
SUP_API int sup_version(void);

/* Returns a static string naming `err` ("invalid argument", ...); for codes
 * sup does not know, a static "unknown error". Never NULL. Thread-safe and
 * async-signal-safe. */
SUP_API const char *sup_strerror(int err);

/* Returns the static name of an outcome ("exited", "idle_timeout", ...), or
 * NULL for a value outside enum sup_outcome. Thread-safe. */
SUP_API const char *sup_outcome_name(int outcome);

/* Parses a signal as the spec's "interrupt_signal" does: a name with or
 * without "SIG", in any case ("TERM", "SIGint"), or a decimal number.
 * Returns the signal number (> 0).
 * Errors: SUP_EINVAL (NULL, or no such signal on this system).
 * Thread-safety: any thread. */
SUP_API int sup_signal_parse(const char *text);

/* sup_spawn: validate the JSON spec and start the child.
 *
 * Spec keys (unknown keys, wrong types, empty argv, negative durations are
 * rejected with SUP_EINVAL):
 *   argv              array of strings, required, non-empty; argv[0] is
 *                     searched in the child's PATH unless it holds a '/'
 *   cwd               string: working directory of the child (default: the
 *                     host's)
 *   env               object: a string value sets a variable, null removes
 *                     it; everything else is inherited (default: inherit all)
 *   stdin             "null" (default), "inherit", or {"data": "..."}: the
 *                     bytes are written to the child's stdin, which is then
 *                     closed
 *   idle_timeout_ms   end the child after this long with no byte on stdout or
 *                     stderr; 0 = off (default)
 *   max_runtime_ms    end the child this long after spawn; 0 = off (default)
 *   grace_ms          between the interrupt signal and SIGKILL (default 5000)
 *   interrupt_signal  "SIGTERM", "TERM" or a number (default SIGTERM)
 *   on_timeout        "interrupt" (default): interrupt signal, SIGKILL after
 *                     grace; "kill": SIGKILL at once
 *   max_output_bytes  per stream, bytes kept: past it the first half and the
 *                     newest half are kept, all bytes are counted
 *                     (default 16 MiB; 0 keeps nothing)
 *   backpressure_bytes  0 (default): sup drains both pipes at all times. N > 0:
 *                     sup stops reading a stream while more than N of its
 *                     bytes have not been read through sup_output_read, so
 *                     the child blocks on write as it would on a slow
 *                     terminal and a live reader loses nothing; the idle
 *                     clock does not run while a stream is held back
 *   tty_foreground    true: the child's process group is made the foreground
 *                     group of the host's controlling terminal (stdin must be
 *                     "inherit"), so that an interactive child can read it;
 *                     the host's group gets the terminal back when the child
 *                     ends. Ignored when the host is not in the foreground.
 *                     Default false.
 *
 * The child runs in a process group of its own with an empty signal mask,
 * default signal dispositions and no descriptor but 0, 1 and 2. It receives
 * SIGKILL if the library's thread dies (the host exits).
 *
 * Returns 0 and stores a handle in *out, or a negative code with *out set to
 * NULL. A command that cannot be started fails here, synchronously.
 * Errors: SUP_EINVAL (NULL argument, malformed spec), SUP_ENOENT, SUP_EACCES,
 *   SUP_ENOTDIR, SUP_EISDIR, SUP_ENOEXEC, SUP_E2BIG (exec or cwd failures;
 *   other exec errnos are returned as -errno), SUP_EMFILE, SUP_EAGAIN,
 *   SUP_ENOMEM, SUP_ENOSYS.
 * Thread-safety: any thread, concurrently. Not async-signal-safe.
 */
SUP_API int sup_spawn(const char *spec_json, sup_proc **out);

/* sup_spawn_ex: sup_spawn that also explains a failure. On error, writes a
 * NUL-terminated message (truncated to fit) into errbuf, e.g.
 * "spec: idle_timeout_ms: must be a non-negative integer" or
 * "exec \"frobnicate\": not found in PATH". errbuf may be NULL when
 * errbuf_size is 0. On success errbuf is set to "" if it has room.
 * Returns and thread-safety as sup_spawn. */
SUP_API int sup_spawn_ex(const char *spec_json, sup_proc **out, char *errbuf,
                         size_t errbuf_size);

/* sup_poll: wait up to timeout_ms (0: do not wait, -1: forever) for the result
 * to become final.
 * Returns 1 when final, 0 when still running when the time is up.
 * Errors: SUP_EINVAL (NULL handle, timeout_ms < -1).
 * Thread-safety: any thread, concurrently. */
SUP_API int sup_poll(sup_proc *p, int timeout_ms);

/* sup_interrupt: graceful stop. Sends the interrupt signal and SIGCONT to the
 * child's process group, and SIGKILL if the main process has not exited
 * grace_ms later. A second call does not restart the grace period.
 * Returns 0 when the request was latched, 1 when the result was already
 * final (nothing changes: a final result is immutable).
 * Errors: SUP_EINVAL (NULL handle).
 * Thread-safety: any thread, any time before sup_release; async-signal-safe. */
SUP_API int sup_interrupt(sup_proc *p);

/* sup_abort: hard stop. SIGKILL to the child's process group now.
 * Returns 0 when the request was latched, 1 when the result was already
 * final (nothing changes).
 * Errors: SUP_EINVAL (NULL handle).
 * Thread-safety: any thread, any time before sup_release; async-signal-safe. */
SUP_API int sup_abort(sup_proc *p);

/* sup_result: the final result as a JSON object, owned by the handle and
 * valid until sup_release:
 *   {"outcome": "idle_timeout", "exit_code": null, "term_signal": "SIGTERM",
 *    "forced_kill": false, "pid": 4242, "duration_ms": 2003.1,
 *    "stdout": {"bytes": 1234, "captured": "...", "truncated": false,
 *               "omitted_bytes": 0},
 *    "stderr": {...}, "signals_sent": [{"signal": "SIGTERM", "at_ms": 2000.4}],
 *    "rusage": {"user_ms": 1.2, "sys_ms": 0.8, "max_rss_kb": 3100}}
 * "bytes" counts everything the child wrote to the stream, "omitted_bytes"
 * what was dropped from the middle. "duration_ms" runs from spawn to the
 * final result, "at_ms" from spawn. "forced_kill" says SIGKILL was needed.
 * "exit_code" is null when the child died from a signal, "term_signal" null
 * when it exited; both are null when the host reaped the child itself
 * (SIGCHLD set to SIG_IGN, or waitpid(-1)): its status is then lost.
 * "captured" is text: invalid UTF-8 is replaced by U+FFFD, and where bytes
 * were dropped (truncated) a line "[sup: N bytes omitted]" marks the gap; use
 * sup_result_output for the exact bytes.
 * Returns NULL while running, for a NULL handle, or when out of memory.
 * Thread-safety: any thread, concurrently. */
SUP_API const char *sup_result(sup_proc *p);

/* sup_release: free the handle. If the child still runs it is aborted and it
 * and its group are reaped first: no orphan, no zombie. This waits for the
 * SIGKILL to take effect (milliseconds). NULL is a harmless no-op.
 * Thread-safety: must be the last call on the handle; no other thread may use
 * it concurrently or afterwards. */
SUP_API void sup_release(sup_proc *p);

/* sup_fd: a descriptor, owned by the handle, that becomes readable once the
 * result is final and stays readable; for hosts with their own event loop
 * (epoll, Go's netpoller, a Lua loop), which then call sup_poll(p, 0). Do not
 * read from it or close it. Created on first call; the same fd afterwards.
 * Returns the descriptor (>= 0).
 * Errors: SUP_EINVAL (NULL handle), SUP_EMFILE, SUP_ENOMEM.
 * Thread-safety: any thread, concurrently. */
SUP_API int sup_fd(sup_proc *p);

/* sup_pid: the child's pid, for display. Do not signal it yourself: after the
 * result is final the pid may belong to another process.
 * Returns the pid (> 0). Errors: SUP_EINVAL (NULL handle).
 * Thread-safety: any thread. */
SUP_API int sup_pid(sup_proc *p);

/* ---- Live output, while the child runs (pull-based) ------------------- */

/* sup_output_read: copy bytes the child wrote to `stream` so far, starting at
 * byte *pos of everything it wrote, into buf (up to cap bytes); *nread gets
 * the count and *pos advances by it. Does not block. When the bytes at *pos
 * were dropped (output beyond max_output_bytes keeps only head and tail),
 * *pos first jumps to the oldest byte still kept: the jump is what was lost.
 * Works while running and after the result is final.
 * Returns 0; *nread == 0 means nothing new yet (or, once final, the end).
 * Errors: SUP_EINVAL (NULL handle, pos or nread, buf NULL with cap > 0, bad
 * stream).
 * Thread-safety: any thread, concurrently; one reader per stream keeps
 * backpressure_bytes meaningful. */
SUP_API int sup_output_read(sup_proc *p, int stream, uint64_t *pos, void *buf,
                            size_t cap, size_t *nread);

/* sup_output_wait: wait up to timeout_ms (0: do not wait, -1: forever) until
 * stdout has more than stdout_pos bytes, stderr more than stderr_pos bytes, or
 * the result is final.
 * Returns 1 when one of those holds, 0 when the time ran out.
 * Errors: SUP_EINVAL (NULL handle, timeout_ms < -1).
 * Thread-safety: any thread, concurrently. */
SUP_API int sup_output_wait(sup_proc *p, uint64_t stdout_pos,
                            uint64_t stderr_pos, int timeout_ms);

/* sup_output_total: bytes the child has written to `stream` so far (all of
 * them, kept or not). Running or final.
 * Returns the count (>= 0). Errors: SUP_EINVAL (NULL handle, bad stream).
 * Thread-safety: any thread. */
SUP_API int64_t sup_output_total(sup_proc *p, int stream);

/* ---- Typed access to the final result (no JSON parser needed) --------- */

/* Returns the outcome (enum sup_outcome, > 0).
 * Errors: SUP_EINVAL (NULL handle), SUP_EBUSY (still running).
 * Thread-safety: any thread. */
SUP_API int sup_result_outcome(sup_proc *p);

/* Returns the main process's exit code (0..255).
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ENODATA (it died from a signal).
 * Thread-safety: any thread. */
SUP_API int sup_result_exit_code(sup_proc *p);

/* Returns the signal number that killed the main process.
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ENODATA (it exited).
 * Thread-safety: any thread. */
SUP_API int sup_result_term_signal(sup_proc *p);

/* Returns 1 when sup had to send SIGKILL (after grace, on_timeout "kill",
 * abort, or to end what the main process left behind), else 0.
 * Errors: SUP_EINVAL, SUP_EBUSY. Thread-safety: any thread. */
SUP_API int sup_result_forced_kill(sup_proc *p);

/* Returns the milliseconds from spawn until the result became final, or a
 * negative value (SUP_EINVAL, SUP_EBUSY). Thread-safety: any thread. */
SUP_API double sup_result_duration_ms(sup_proc *p);

/* sup_result_output: the captured bytes of `stream`, exactly as written
 * (head and newest tail joined when truncated; see
 * sup_result_omitted_bytes for the gap), owned by the handle until
 * sup_release. *len gets the length. Not NUL-terminated.
 * Returns NULL while running, for a NULL handle or len, or a bad stream.
 * Thread-safety: any thread. */
SUP_API const char *sup_result_output(sup_proc *p, int stream, size_t *len);

/* Returns the bytes of `stream` that were written but not kept (0 when not
 * truncated). The gap sits after the first half of max_output_bytes.
 * Errors: SUP_EINVAL, SUP_EBUSY. Thread-safety: any thread. */
SUP_API int64_t sup_result_omitted_bytes(sup_proc *p, int stream);

#ifdef __cplusplus
}
#endif

#endif /* SUP_H */
