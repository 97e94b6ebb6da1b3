/*
 * sup.h: run child processes under supervision.
 *
 * sup starts a child from a JSON spec, captures its stdout and stderr, ends it
 * when it falls silent (idle timeout) or runs too long (max runtime), escalates
 * from an interrupt signal to SIGKILL after a grace period, ends whatever it
 * left behind in its process group, and hands back one immutable result.
 *
 * THREAD MODEL
 *   The library owns two threads, started by the first sup_spawn: an event
 *   loop, on which timers fire and pipes drain whether or not the host calls
 *   in, and a spawner. sup_spawn clones the child on the caller's own thread,
 *   as posix_spawn does, where the sentinel runs (see Host death): a slow
 *   exec (a network cwd, a huge argv) then holds up that call alone. Where
 *   the sentinel could not start, the spawner clones every child, one at a
 *   time, with PR_SET_PDEATHSIG tied to its own life: a slow exec then holds
 *   up later spawns, never the supervision of running children. The calls
 *   below only hand requests to the threads or wait for them. A caller
 *   waiting in sup_poll watches, reads and finishes the child itself, so
 *   the loop takes a new child on up to 5 ms later (a short child is then
 *   done before the loop wakes at all), or at once where it has work from
 *   the start (stdin to feed, a pty, a tee, backpressure, a deadline less
 *   than 7 ms away) or the caller waits any other way (sup_fd, the
 *   sup_output_* calls, sup_result, a sup_poll that does not block).
 *
 *   - sup_interrupt, sup_abort, sup_expire and sup_signal may be called
 *     from any thread at any time,
 *     concurrently with every other call on the same handle except
 *     sup_release, and are async-signal-safe: a host may call them from its
 *     SIGINT handler. Requests are latched: none is lost, whenever it lands.
 *   - Every other function on a handle may be called from any thread, and
 *     concurrently. sup_release may be called while other threads are inside
 *     any call on the same handle: calls that wait (sup_poll,
 *     sup_output_wait, sup_input_wait) return SUP_ECANCELED promptly (never
 *     1, although release's own kill makes the result final), and the
 *     memory is freed after the last call has returned (by the loop, when
 *     it next wakes: within 5 ms). No call may *begin*
 *     on a handle after sup_release has begun (as with free(3)).
 *   - The library installs no signal handler and changes no process-wide
 *     signal disposition. Its threads block every signal.
 *   - Children are spawned with a vfork-style clone: the cost of a spawn does
 *     not grow with the host's heap.
 *   - Host death: the first sup_spawn also starts the sentinel, a tiny
 *     process that is not the host's child (it forks and its first half
 *     exits at once, so a host's
 *     waitpid(-1) may reap that half, never the sentinel) and leads its own
 *     session (a host's kill(0, ...) never reaches it). It holds one end of a
 *     socket whose other end the library keeps close-on-exec. When that end
 *     closes without the library's goodbye (the host died, SIGKILL
 *     included, or exec'd), it kills every cgroup sup made for the host
 *     (cgroup.kill) and every group-mode child's process group, removes the
 *     cgroups, and exits: within a second. A group-mode spawn sends it one
 *     record (the child itself sends it before its exec, so no moment of
 *     the child's life is beyond the sentinel's reach), and one more just
 *     before the child is reaped; cgroup mode sends none. It needs nothing of the library, so
 *     it outlives dlclose; unloading the library ends every child first
 *     and sends the goodbye. A sentinel killed while the host lives is
 *     started again and told every group and cgroup still listed. The
 *     sentinel runs, whatever the link, as the first of these that works:
 *     with libsup linked into the host's executable (libsup.a, or the
 *     sources compiled in by cgo or the cc crate), the host's own
 *     executable run again through /proc/self/exe with SUP_SENTINEL_OF in
 *     its environment, which the library's constructor turns into the
 *     sentinel before main runs; the sup-sentinel program beside the
 *     library or in libexecdir (a shared libsup, as installed); with
 *     libsup in a shared object without the program (a module an
 *     interpreter loads), /bin/true with that object in LD_PRELOAD.
 *     Where none works (no /proc, the object cannot be preloaded), only
 *     the main processes die with the host (PR_SET_PDEATHSIG): each
 *     result says which ("host_death"), and "require_sentinel" refuses
 *     such a spawn.
 *   - fork(2): the library's threads do not exist in a forked child. There,
 *     handles inherited from the parent are inert: every call on them
 *     returns SUP_ECHILD (NULL for pointer results) and sup_release frees
 *     memory only; the parent's children are the parent's. A new sup_spawn
 *     in the forked child starts a fresh engine and works.
 *   - Children are the host's children. A host that sets SIGCHLD to SIG_IGN or
 *     reaps any child (waitpid(-1)) takes their exit status; sup then reports
 *     it as lost and no longer signals the group, whose id may be reused.
 *
 * ERRORS
 *   Functions that can fail return a negative code from enum sup_error, whose
 *   values are -errno as on Linux (like libuv's UV_E* codes) and never change.
 *   Each function's Errors line lists every code it can return, except two
 *   that any call on a handle may: SUP_EINTERNAL (a bug in sup), and
 *   SUP_ECANCELED for a call begun after sup_release began (a misuse, as a
 *   call after free(3), caught while the memory is still there).
 *   tests/unit/check_errors.py holds these lines to the implementation.
 *   sup_strerror names any code. Human detail for a failed spawn (which spec
 *   field is wrong and why, which path failed) is written into a buffer the
 *   caller passes to sup_spawn_ex: there is no thread-local "last error".
 *
 * Requires Linux >= 5.9 (pidfd, CLONE_PIDFD, close_range).
 *
 * THE THREADS IN DETAIL
 *   The library owns two threads, started by the first sup_spawn: an event
 *   loop (libuv), on which pipes drain and deadlines fire whether or not the
 *   host calls in, and a spawner. sup_spawn clones the child on the caller's
 *   own thread, as posix_spawn does, and returns once it has exec'd, not
 *   through the loop: a child whose chdir or exec is slow (a network or FUSE
 *   cwd, an automount) holds up that call alone, never another thread's spawn
 *   nor any child's deadlines or aborts. A caller that waits in sup_poll
 *   watches and finishes the child itself (below), so the loop takes a new
 *   child on up to 5 ms later: a short child is done before the loop wakes at
 *   all, and a host that spawns and waits in a loop wakes it about once per 5
 *   ms, not once per child. It takes the child on at once where it has work
 *   from the start (stdin to feed, a pty, a tee, backpressure, a deadline less
 *   than 7 ms away), and as soon as the caller waits any other way (sup_fd,
 *   the sup_output_* calls, sup_result, a sup_poll that does not block). A
 *   call that reaches the handle first (sup_abort at once, say) is carried out
 *   as soon as it has. Released handles are freed the same way, when the loop
 *   next wakes, within 5 ms. Nothing ties the child to the caller's thread,
 *   which may end first: the sentinel (below) ends the tree if the host dies.
 *   Until the sentinel has started, and where it cannot, the spawner clones
 *   instead, one child at a time, with PR_SET_PDEATHSIG tied to its own life;
 *   sup_spawn then wakes it as soon as it has parsed the spec (the wake-up
 *   overlaps making the pipes). A caller in sup_poll watches the process
 *   itself for the call's length: it sleeps on the main process's pidfd and
 *   both pipes, reads what the child writes into the capture (under a per-
 *   process lock, as the loop does), and the loop stops watching them
 *   meanwhile and starts again once no caller waits. Even asleep, a second
 *   thread waiting on a child costs its end: the exit wakes every thread
 *   sleeping on the child's pipes or pidfd, and waking one on another CPU is
 *   an interprocessor interrupt that the dying child pays before its exit
 *   shows to anyone (measured below). Deadlines, signals and the stdin feed
 *   stay with the loop. With a terminal to hand back, or with backpressure
 *   set, sup_poll leaves the pipes to the loop and sleeps on the pidfd alone.
 *   Once the main process has exited, the thread that gets there first ends
 *   the process: the caller, unless the loop is at it already, reads what is
 *   left in the pipes to EOF, decides the outcome and publishes the result
 *   itself, and the loop reaps and closes the rest afterwards; otherwise the
 *   caller yields for at most 50 µs for the loop's result before it sleeps on
 *   it. The caller leaves the work to the loop where it needs the loop: a
 *   terminal to hand back, a stream held back, or pipes that something the
 *   main process left still holds. sup_release reaps the zombie itself if the
 *   loop has not yet, or waits for the loop's reap the same way. sup_abort
 *   sends SIGKILL to the group from the caller's thread and does not wake the
 *   loop: the loop adopts the kill (the outcome, the signal and its time) when
 *   it sees the main process exit. sup_interrupt sends its signal the same way
 *   and leaves the loop asleep too, with a timer armed for the end of the
 *   grace period: the loop takes the interrupt on when the main process exits,
 *   or at the latest then, to send SIGKILL (with backpressure set it is woken
 *   at once, so that a held-back child's last words are read). When both pipes
 *   reach EOF and no caller is in sup_poll for the process (one waiting on
 *   sup_fd, or none), the loop waits awake up to 30 µs for the exit, which the
 *   kernel shows on the pidfd a few microseconds later, and handles it in the
 *   same wake-up.
 *
 *   Host death is covered by a third party, not a thread: the first sup_spawn
 *   starts sup-sentinel (a 200-line C program installed in libexecdir, or
 *   found next to libsup.so in a build tree), from the spawner thread with the
 *   same vfork-style clone as a child, so nothing of a large host's memory is
 *   copied. It forks once and the first half exits: it is then nobody's child
 *   in the host (a waitpid(-1) never sees it) and leads a session of its own
 *   (a host's kill(0, ...) or its terminal's Ctrl-C never reach it). It holds
 *   one end of a SOCK_SEQPACKET socket pair; the library keeps the other,
 *   close-on-exec (and closes it in a forked child), so an exec counts as a
 *   death. The library sends it one record per cgroup directory it makes for
 *   the host and, in group mode, one per spawn (the child's process group,
 *   which the child sends itself before its exec, or the spawner right after
 *   its clone) and one just before the child is reaped (while the zombie still
 *   pins the group id); cgroup mode adds nothing per spawn. Sends never block:
 *   a sentinel that stopped reading costs a record, never the host's progress.
 *   The sentinel reads them in batches (every 10 ms while they come, every 100
 *   ms when idle) from a poll that asks for no event, so a record wakes nobody
 *   and only the host's end does: measured on the spawn row, the sentinel that
 *   woke for each record cost 15-19 µs of host CPU per spawn, the batched one
 *   nothing measurable (2-CPU VM, two runs each way). When its end of the
 *   socket reaches end of file without the library's goodbye, it writes
 *   cgroup.kill of every directory, sends SIGKILL to every group still listed,
 *   waits for the directories to empty, removes them depth first, and exits:
 *   every tree is ended within a second of the host's death, and nothing of
 *   the host is left. It needs nothing of the library once started, so it
 *   outlives dlclose; unloading the library ends every child and removes every
 *   directory itself, then says goodbye. The library's loop watches its own
 *   end for the sentinel's: a sentinel that dies while the host lives is
 *   replaced by a new one, on a new socket under the same descriptor number,
 *   which is sent every group and directory still listed (a child cloned at
 *   that moment sends its record again). Where the program cannot be found,
 *   only the main processes die with the host (PR_SET_PDEATHSIG).
 *
 *   - sup_interrupt and sup_abort: any thread, any time before sup_release,
 *     async-signal-safe (a host calls them from its SIGINT handler). Requests
 *     are latched; a second interrupt does not restart the grace period. While
 *     the main process runs, the signal leaves from the calling thread before
 *     the call returns (the loop thread then takes it as its own); the
 *     interrupt signal goes out once, whoever asks first, and never after a
 *     SIGKILL.
 *
 *   - Every other call: any thread, concurrently. sup_release may be called
 *     while other threads wait on the handle (sup_poll, sup_output_wait,
 *     sup_input_wait then return SUP_ECANCELED, never 1); the memory goes when
 *     the last call has left. No call may *begin* once sup_release has begun.
 *
 *   - The library's thread blocks every signal; no signal handler is
 *     installed, no disposition changed; exits are watched through pidfds.
 *
 *   - Children are the host's children. A host that sets SIGCHLD to SIG_IGN or
 *     reaps any child (waitpid(-1)) takes their exit status: the result is
 *     still final and prompt, with exit_code and term_signal both null, and
 *     sup stops signaling that group, since its id may then be reused.
 *
 *   - Unloading the library (dlclose, or exit) kills and reaps every child
 *     still running and stops the thread: load/unload loops leak no thread or
 *     fd.
 *
 *   - If the host dies, however (SIGKILL included), or execs, the sentinel
 *     ends every child's tree within a second: in cgroup mode every process of
 *     it, in group mode the main process and its group; nothing of the host
 *     remains.
 *
 *   - fork() without exec: in the child, handles inherited from the parent are
 *     inert (every call returns SUP_ECHILD, sup_release frees memory only) and
 *     a new sup_spawn starts a fresh engine. The library's static state never
 *     waits for threads that do not exist in the child.
 *
 *   - A host that closed fd 0, 1 or 2 gets /dev/null there when the library
 *     starts, so that neither libuv's descriptors nor a child's stdin land in
 *     those slots.
 *
 * HOW A PROCESS ENDS
 *   - Every signal goes to the child's process group and, when the main
 *     process has left that group (setpgid, a shell doing job control), to the
 *     main process through its pidfd as well (pidfd_send_signal): it is still
 *     interrupted, killed and reaped, and sup_release still returns in
 *     milliseconds. The leader is kept as an unreaped zombie (waitid(WNOWAIT))
 *     until the group has been dealt with, so kill(-pgid) can never reach a
 *     recycled pid. Its status and rusage come from that waitid, so the result
 *     is published first and the zombie reaped right after (it took 8-9 µs of
 *     the time from exit to result); sup_release returns only once it is
 *     reaped.
 *
 *   - One deadline per process carries the earliest of idle, max-runtime,
 *     grace and drain deadlines; reads only move the last-activity time, and
 *     the timer recomputes when it fires. One timerfd holds the earliest
 *     deadline of all processes, in absolute monotonic nanoseconds: never
 *     early, never rounded to libuv's milliseconds. It wakes the loop 250 µs
 *     before a deadline (a thread's wake-up from a long sleep takes about 130
 *     µs here) and the process waits the rest awake, unless the loop has other
 *     work. Bytes already waiting in a pipe count as activity: they are read
 *     before a child is called idle.
 *
 *   - Once an interrupt or abort is latched, a deadline neither changes the
 *     outcome nor cuts the grace short.
 *
 *   - With backpressure_bytes, a stream is held back only while the main
 *     process runs and sup is not ending it; then the pipes are drained at
 *     full speed (every byte counted), so a timeout never waits out its grace
 *     on a dead child.
 *
 *   - When the main process exits and something it left behind still holds
 *     stdout or stderr, that group gets the interrupt signal, then SIGKILL
 *     after grace; 100 ms after SIGKILL the result is published even if a
 *     process that left the group still holds a pipe. sh -c 'sleep 30 & echo
 *     hi' gives its result within milliseconds and leaves no sleep.
 *
 *   - In cgroup mode the end is the cgroup's: once the main process has
 *     exited, the processes left in the cgroup and its sub-cgroups are
 *     counted, killed together with cgroup.kill (no grace, unless an interrupt
 *     sent earlier is still in its grace: then at its end), and waited for
 *     through cgroup.events (populated 0, at most 100 ms); the tree's CPU is
 *     read from cpu.stat and the cgroup removed, deepest first (a sup running
 *     inside the child makes sub-cgroups), all before the result is final.
 *     SIGKILL from sup (abort, release, the end of a grace) is cgroup.kill
 *     too, so nothing in the tree outlives it.
 *
 * VERSIONS
 *   0.2 adds, without changing any 0.1 symbol: sup_spawn_v2 (which part of a
 *   spawn failed), SUP_ERRBUF_SIZE, the output readiness fd, SUP_POS_IGNORE,
 *   "stdin": {"base64": ...} and "stdin": "pipe" with sup_input_*,
 *   "status_lost" and sup_result_status_lost, sup_result_rusage,
 *   sup_result_signals, release while others wait, fork safety.
 *
 *   0.3 adds, without changing any 0.2 symbol: stdio routing ("stdout" and
 *   "stderr": "pipe", "tee", "inherit", "null"; "stderr": "stdout") with
 *   "routed" in each stream's result; "env_clear"; "first_output_timeout_ms"
 *   with "phase" in the result, enum sup_phase and sup_result_phase;
 *   sup_signal (any signal to the child's group) and SUP_ESRCH; signal names
 *   as bash's `kill -l` prints them, sup_signal_name, and every such name
 *   accepted by sup_signal_parse and "interrupt_signal"; "pty" (the child on
 *   a pseudo-terminal of its own, "routed": "pty"), sup_pty_resize and
 *   SUP_ENOSPC; containment ("contain" and "cgroup_parent", SUP_ENOTSUP,
 *   sup_result_contained, sup_result_leftovers_ended, sup_result_tree_cpu)
 *   and the sentinel that ends every tree when the host dies.
 *
 *   0.4 adds: any descriptor of the host's as a stream ("stdin", "stdout",
 *   "stderr": {"fd": N}, "routed": "fd"; SUP_EBADF when it is not open),
 *   "fds" (more descriptors for the child), "max_output_bytes": null.
 *   Waiting for input: "input_wait_timeout_ms", "phase": "input" and
 *   SUP_PHASE_INPUT, "waiting_for_input" in the result, sup_input_wanted.
 *   Host death whatever the link (libsup.a and sources compiled into the
 *   host run the sentinel from the host's own executable), "host_death" in
 *   the result with enum sup_host_death and sup_result_host_death, and the
 *   spec's "require_sentinel".
 *   sup_expire; "keep_ignored_signals" and "reset_signals"; "limits",
 *   "sandbox", "user", "group", "groups" with "confined" and "limit" in the
 *   result; "tee_error", "tty_foreground" and "tty_refused" in the result.
 *   0.4 changes what 0.3 documented: a "tee" whose fd's reader has gone
 *   (EPIPE) ends that stream as the fd itself would, the child's next write
 *   to it failing with EPIPE or SIGPIPE, and says "tee_error": "EPIPE"
 *   (0.3 dropped the copies and the child went on, `yes` forever); a stream
 *   held back by backpressure_bytes or a slow "tee" fd no longer stops the
 *   idle clock: a reader's read is activity, no reader is silence;
 *   "tty_foreground" is given only to a host in the terminal's foreground,
 *   and the result says whether it was ("tty_foreground", "tty_refused");
 *   "contain": "auto" falls back to group mode also when the kernel refuses
 *   to start the child in its cgroup; a name found on PATH only as a
 *   directory is SUP_EACCES (was SUP_ENOENT); sup never keeps a descriptor
 *   of its own at 0, 1 or 2, and no longer fills a host's closed 0-2 with
 *   /dev/null; without backpressure_bytes a live reader on sup_output_fd
 *   reads a plain pipe itself too (the pipe lent, see sup_output_fd), so
 *   the descriptor is an epoll set there as well, and a reader that falls
 *   behind loses at most what the capture dropped (bytes it read from the
 *   pipe before are its own).
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
#define SUP_VERSION_MINOR 4
#define SUP_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, comparable with sup_version(). */
#define SUP_VERSION_NUMBER \
  (SUP_VERSION_MAJOR * 10000 + SUP_VERSION_MINOR * 100 + SUP_VERSION_PATCH)

/* Error codes: -errno values on Linux, fixed forever. */
enum sup_error {
  SUP_OK = 0,
  SUP_EPERM = -1,     /* the kernel refused (e.g. a signal to the group);
                         sup_input_wanted: a process of the tree that sup
                         may not inspect */
  SUP_ESRCH = -3,     /* sup_signal, sup_pty_resize: the result is final,
                         the child is gone */
  SUP_ENOENT = -2,    /* argv[0] not found, or a path in the spec does not exist */
  SUP_E2BIG = -7,     /* argv plus environment too large for exec */
  SUP_ENOEXEC = -8,   /* argv[0] is not in an executable format */
  SUP_EBADF = -9,     /* sup_spawn: a host descriptor the spec names
                         ({"fd": N}, "fds") is not open;
                         sup_fd: the descriptor could not be created;
                         sup_input_*: stdin is neither "pipe" nor "pty",
                         or was closed */
  SUP_ECHILD = -10,   /* the handle was inherited through fork(2): inert here */
  SUP_EAGAIN = -11,   /* out of processes (RLIMIT_NPROC, pid_max), try later;
                         sup_input_write: the stdin pipe (or the
                         terminal's input queue) is full */
  SUP_ENOMEM = -12,   /* out of memory */
  SUP_EACCES = -13,   /* argv[0] or cwd not accessible / not executable;
                         a name found on PATH only as a directory ("."
                         included), as execvp says */
  SUP_EBUSY = -16,    /* the result is not final yet */
  SUP_ENOTDIR = -20,  /* cwd, or a component of a path, is not a directory */
  SUP_EISDIR = -21,   /* argv[0] is a path (has a '/') to a directory */
  SUP_EINVAL = -22,   /* bad argument: NULL handle or pointer, malformed spec */
  SUP_EMFILE = -24,   /* the host is out of file descriptors */
  SUP_ENOSPC = -28,   /* "pty": no pseudo-terminal left (/dev/ptmx exhausted:
                         kernel.pty.max) */
  SUP_EPIPE = -32,    /* sup_input_write: the child closed its stdin or ended */
  SUP_ENOSYS = -38,   /* the kernel lacks pidfd / CLONE_PIDFD support */
  SUP_ENODATA = -61,  /* no such value: exit code of a signaled child, ... */
  SUP_ENOTSUP = -95,  /* "contain": "cgroup" where no writable cgroup v2
                         hierarchy is available (the detail says why); a
                         "strict" sandbox the kernel cannot fully enforce;
                         sup_pty_resize on a child without "pty" */
  SUP_ECANCELED = -125, /* sup_release was called while this call waited */
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
  SUP_OUTCOME_ABORTED = 6       /* ended by sup_abort or sup_release, or
                                   killed at once because sup could not
                                   watch it (out of memory, or epoll's
                                   watch limit): see sup_spawn */
};

/* Which silence limit ended an "idle_timeout" child (sup_result_phase, the
 * result's "phase"). */
enum sup_phase {
  SUP_PHASE_NONE = 0,         /* the outcome is not idle_timeout */
  SUP_PHASE_FIRST_OUTPUT = 1, /* first_output_timeout_ms: no byte yet */
  SUP_PHASE_IDLE = 2,         /* idle_timeout_ms: silent since a byte (or,
                                 without first_output_timeout_ms, since the
                                 exec) */
  SUP_PHASE_INPUT = 3         /* input_wait_timeout_ms: waiting for input
                                 (see sup_input_wanted), or
                                 tty_stop_timeout_ms: stopped on the
                                 terminal */
};

/* The two captured streams; the values are the child's fd numbers. */
enum sup_stream { SUP_STDOUT = 1, SUP_STDERR = 2 };

/* Which part of a spawn failed (sup_spawn_v2). With the code it tells a
 * binding what to raise: SUP_ENOENT with SUP_PART_EXEC is "program not
 * found" (Go's exec.ErrNotFound, Python's FileNotFoundError on argv[0]),
 * SUP_ENOENT with SUP_PART_CWD is a missing working directory. */
enum sup_part {
  SUP_PART_NONE = 0,   /* no failure */
  SUP_PART_SPEC = 1,   /* the spec: malformed JSON, a bad key or value, a
                          host descriptor it names not open; the detail
                          starts with "spec: KEY: " */
  SUP_PART_EXEC = 2,   /* argv[0]: not found in PATH, not executable, not an
                          executable format, a directory, or argv+env too big;
                          the detail starts with "exec " */
  SUP_PART_CWD = 3,    /* the working directory; the detail starts "cwd " */
  SUP_PART_SYSTEM = 4  /* the host or kernel: out of fds, processes or
                          memory, no pidfd support, the library unloading */
};

/* A buffer of this size always holds sup_spawn_ex's whole detail: longer
 * paths and PATH lists are shortened in the middle ("...") to fit. */
#define SUP_ERRBUF_SIZE 4096

/* Pass as a position to sup_output_wait to not wait on that stream. */
#define SUP_POS_IGNORE UINT64_MAX

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
 * without "SIG", in any case ("TERM", "SIGint", "IOT"), every name
 * sup_signal_name prints ("SIGRTMIN+3", "rtmax-2", "SIG32"), any
 * "RTMIN+N" / "RTMAX-N" within the real-time range, or a decimal number
 * (1..64). Returns the signal number (> 0).
 * Errors: SUP_EINVAL (NULL, or no such signal on this system), SUP_ENOMEM.
 * Thread-safety: any thread. */
SUP_API int sup_signal_parse(const char *text);

/* sup_signal_name: the name bash's `kill -l` prints for sig, with "SIG":
 * "SIGTERM"; "SIGRTMIN", "SIGRTMIN+N" up to the middle of the real-time
 * range, "SIGRTMAX-N" above it, "SIGRTMAX"; "SIG32" and "SIG33" for the two
 * glibc keeps for itself. The names the result prints; sup_signal_parse
 * gives the number back.
 * Returns a static string for 1..64, NULL for any other value.
 * Thread-safety: any thread. */
SUP_API const char *sup_signal_name(int sig);

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
 *   env_clear         true: nothing is inherited, the environment is exactly
 *                     env (a null there is a no-op); argv[0] is then searched
 *                     in env's PATH, or in "/bin:/usr/bin" when env has none
 *                     (execvp's default). Default false
 *   stdout            where the child's stdout goes: "pipe" (default): sup
 *                     reads and keeps it; "tee": the same, and every byte is
 *                     also copied to the host's fd 1 as it arrives; "inherit":
 *                     the host's fd 1 itself (not read by sup: nothing is
 *                     captured, and it does not feed the idle clock); "null":
 *                     /dev/null; {"fd": N}: the host's descriptor N itself,
 *                     as "inherit" passes the host's 1 ("routed": "fd"; not
 *                     read by sup). The child gets a copy in its own
 *                     descriptor table: the host's entry and its
 *                     FD_CLOEXEC are untouched, what belongs to the open
 *                     file itself (offset, O_NONBLOCK, O_APPEND) is shared
 *                     as with any inherited descriptor, so a file can be
 *                     seeked and fstat'ed by the child. N must be open at
 *                     the call (SUP_EBADF, the detail "spec: stdout.fd: host
 *                     descriptor N is not open")
 *   stderr            the same for fd 2, or "stdout": the same pipe or
 *                     descriptor as stdout (its routing, its capture, the
 *                     order written kept; the stderr stream is then empty;
 *                     with "stdout": {"fd": N} the child's 2 is N too).
 *                     A "tee" copy never blocks sup: it is written through a
 *                     non-blocking description of sup's own (a pipe, FIFO or
 *                     terminal is opened anew through /proc/self/fd; a socket
 *                     is sent to with MSG_DONTWAIT; a regular file is written
 *                     as it is), or, where the reopen is refused (a host
 *                     that dropped privileges, on another user's terminal),
 *                     by a thread of its own that writes a duplicate of the
 *                     host's blocking fd (that thread, and the duplicate, may
 *                     outlive the handle if nobody ever reads the fd, and
 *                     dlclose no longer unloads the library once one has
 *                     existed, so that its code stays mapped). What
 *                     the host's fd cannot take at once waits in sup (in
 *                     order), and while more than 256 KiB waits, sup stops
 *                     reading the stream, so that the child blocks on write
 *                     as it would on the host's fd itself (the idle clock
 *                     counts the host's fd taking bytes as activity, as
 *                     backpressure_bytes does a reader). Once the main
 *                     process has exited, or sup is ending it, nothing is
 *                     held back; the result then waits for the host's fd as
 *                     long as it takes some bytes each second; past that,
 *                     and after sup_abort or sup_release, copies it has not
 *                     taken are dropped. Once the fd's reader is gone
 *                     (EPIPE; sup takes back the SIGPIPE), the stream ends
 *                     as it would with the child writing to that fd itself:
 *                     sup stops reading it and closes its pipe, so the
 *                     child's next write to it fails with EPIPE or SIGPIPE
 *                     (`yes` ends), and the stream's result says
 *                     "tee_error": "EPIPE" (another failure of the fd: its
 *                     errno's name, and the copies are dropped). The capture
 *                     keeps every byte sup read.
 *   stdin             "null" (default), "inherit", {"data": "..."} or
 *                     {"base64": "..."}: the bytes (the string's UTF-8, or
 *                     the decoded base64, RFC 4648 with or without padding)
 *                     are written to the child's stdin, which is then
 *                     closed; or "pipe": the host writes with
 *                     sup_input_write and closes with sup_input_close; or
 *                     {"fd": N}: the host's descriptor N itself, as for
 *                     "stdout" (the child reads, and may seek, it directly)
 *   fds               object: more descriptors for the child, child number
 *                     (a key, in decimal: "3") -> host descriptor, e.g.
 *                     {"3": 7, "4": 4}: the child's 3 is the host's 7, its
 *                     4 the host's 4 (Python's pass_fds: same numbers; Go's
 *                     ExtraFiles: 3, 4, ...), each as {"fd": N} passes one.
 *                     Child numbers are >= 3, unique and below the host's
 *                     RLIMIT_NOFILE; host numbers are open (SUP_EBADF, the
 *                     detail naming "fds.3" and the number). Any host number
 *                     may go anywhere, 0-2 and each other's numbers
 *                     included: "stdout": {"fd": 3} with "fds": {"3": 1}
 *                     swaps them (a host number that is also a child number
 *                     is first copied above the highest child number, so
 *                     that needs a free number there below RLIMIT_NOFILE;
 *                     else the spawn fails, the detail starting "fds: ").
 *                     Every other descriptor is closed in the child, as
 *                     always. Works with every "contain" mode and
 *                     with "pty". Default {}
 *   idle_timeout_ms   end the child after this long with no byte on stdout or
 *                     stderr (the first period from its exec, or from the
 *                     first byte with first_output_timeout_ms); 0 = off
 *                     (default). Only streams sup reads count ("pipe",
 *                     "tee"): with neither, SUP_EINVAL
 *   first_output_timeout_ms  end the child (outcome "idle_timeout", "phase":
 *                     "first_output") when neither stream has produced a
 *                     byte this long after its exec; 0 = off (default).
 *                     When set, the idle clock starts at the first byte:
 *                     before it only this limit applies, after it only
 *                     idle_timeout_ms. With neither stream read, SUP_EINVAL
 *   max_runtime_ms    end the child this long after the sup_spawn call
 *                     (time queued behind other spawns included); 0 = off
 *                     (default)
 *   input_wait_timeout_ms  end the child (outcome "idle_timeout", "phase":
 *                     "input", interrupt signal then SIGKILL as any
 *                     timeout; a stopped process is sent SIGCONT after the
 *                     interrupt signal) once it has waited this long for
 *                     input it cannot get, as sup_input_wanted sees it
 *                     (counted from the first of the loop's looks that saw
 *                     the reader: up to ~50 ms after a wait that began
 *                     within 1 s of the start or of the last output, later
 *                     after a longer silence, as sup_input_wanted says; and
 *                     ending within ~50 ms after the limit); 0 = off
 *                     (default). Works with
 *                     every stdin (with "null" or data, only a SIGTTIN or
 *                     SIGTTOU stop can count, and when the host's session
 *                     has no controlling terminal nothing can: see
 *                     sup_input_wanted) and every contain mode
 *   tty_stop_timeout_ms  end the child as input_wait_timeout_ms does (outcome
 *                     "idle_timeout", "phase": "input", "waiting_for_input":
 *                     true) once its main process has been stopped by
 *                     SIGTTIN or SIGTTOU this long: it read, wrote or
 *                     configured its controlling terminal (/dev/tty
 *                     opened by a password prompt: sudo, ssh) from a
 *                     group that is not the terminal's foreground, and
 *                     can never go on by itself. 0 = off (default). Only
 *                     that stop counts, never a reader waiting on its
 *                     stdin (a child a caller leaves waiting on a "pipe"
 *                     stdin on purpose is not ended), nor a stop by
 *                     SIGSTOP or SIGTSTP, nor a SIGTTIN or SIGTTOU the
 *                     caller sent itself with sup_signal (until a SIGCONT,
 *                     SIGSTOP or SIGTSTP it sends after it). The main
 *                     process only: the kernel tells which signal stopped a
 *                     process to its parent alone (waitid), and /proc shows
 *                     a stop without its signal; a terminal read stops the
 *                     reader's whole process group, so a reader in the main
 *                     process's group counts, one that made a group or
 *                     session of its own does not (input_wait_timeout_ms
 *                     sees those, at the cost of reading /proc). Cost: no
 *                     /proc read; one waitid(WSTOPPED | WNOHANG | WNOWAIT)
 *                     on the pidfd per check, and checks only while output
 *                     is quiet (the pidfd shows exits alone, and the stop's
 *                     only other notice is the host's SIGCHLD): the first
 *                     30 ms after the last output, then every 50 ms for the
 *                     first second of quiet, then half the quiet time
 *                     apart, at most half the limit (>= 50 ms, <= 4 s). So
 *                     a stop is ended between the limit and the limit plus
 *                     a check's gap after it began (within 100 ms + the
 *                     limit for a stop in the first second of quiet), plus
 *                     what the scheduler adds. No check at all when the
 *                     child's session can have no terminal (without "pty",
 *                     a host session with none: tty_nr in /proc/self/stat,
 *                     read once at the spawn). A host that collects its
 *                     children's stops itself (waitpid with WUNTRACED)
 *                     takes the notice first: the stop is then not seen.
 *                     With input_wait_timeout_ms too, the earlier limit
 *                     ends it
 *   grace_ms          between the interrupt signal and SIGKILL (default 5000)
 *   interrupt_signal  a name or number as sup_signal_parse takes it
 *                     ("SIGTERM", "TERM", "SIGRTMIN+3", 10; default SIGTERM)
 *   on_timeout        "interrupt" (default): interrupt signal, SIGKILL after
 *                     grace; "kill": SIGKILL at once
 *   max_output_bytes  per stream, bytes kept: past it the first half and the
 *                     newest half are kept, all bytes are counted
 *                     (default 16 MiB; 0 keeps nothing). null keeps every
 *                     byte: memory grows with the output, and bounding it
 *                     is then the caller's (a ulimit, a cgroup, a
 *                     max_runtime_ms, or reading it live); if the host runs
 *                     out of memory, less is kept as the result says
 *   backpressure_bytes  0 (default): sup drains both pipes at all times. N > 0:
 *                     sup stops reading a stream while more than N of its
 *                     bytes have not been read through sup_output_read
 *                     (and reads it again once half of them have been), so
 *                     the child blocks on write as it would on a slow
 *                     terminal and a live reader loses nothing. While a
 *                     stream is held back the idle clock counts from the
 *                     child's last byte or the reader's last read, whichever
 *                     is later: with nobody reading, its silence is silence
 *                     and idle_timeout_ms ends it. (With no idle limit, a
 *                     held-back stream nobody reads waits as a child
 *                     writing to a full pipe would: forever.)
 *                     A reader waiting on sup_output_fd then reads the
 *                     pipe itself (see there): the pipe's own buffer
 *                     (64 KiB) is the window while it does
 *   tty_foreground    true: the child's process group is made the foreground
 *                     group of the host's controlling terminal (stdin must be
 *                     "inherit"), so that an interactive child can read it;
 *                     the host's group gets the terminal back when the child
 *                     ends, and before sup_spawn returns when the child
 *                     fails to start (exec or cwd error). Given only when
 *                     stdin is the host's controlling terminal and the
 *                     host's process group is its foreground group (checked
 *                     again by the child just before it takes it): a
 *                     background host (`prog &`) never takes the terminal
 *                     from the shell. The result says how it went:
 *                     "tty_foreground" true (given), false (not, with the
 *                     reason in "tty_refused"), or null (not asked).
 *                     Default false.
 *   contain           what sup ends with the child. "group" (default): its
 *                     process group, which every signal goes to; a process
 *                     that leaves it (setsid, setpgid, a daemon's double
 *                     fork) is beyond sup. "cgroup": the child starts inside
 *                     a new cgroup v2 of its own (clone3 CLONE_INTO_CGROUP),
 *                     so every process it ever starts is in it whatever its
 *                     group or session: the interrupt signal reaches all of
 *                     them (the cgroup is frozen, each is signalled, then
 *                     thawed), and once the main process has ended what is
 *                     left is killed at once (cgroup.kill; within the grace
 *                     of an interrupt already sent, when the grace ends),
 *                     counted in "leftovers_ended", and the cgroup removed
 *                     before the result is final. SUP_ENOTSUP, with the
 *                     reason in the detail, where no writable cgroup v2
 *                     hierarchy is available. "auto": "cgroup" where
 *                     possible, else "group", and "contain_fallback" in the
 *                     result says why; also where the cgroup can be made but
 *                     the kernel refuses to start the child in it (clone3
 *                     CLONE_INTO_CGROUP: EACCES for an unprivileged host
 *                     whose delegated cgroup_parent is outside its own
 *                     cgroup), the child then running in group mode.
 *   cgroup_parent     with "cgroup" or "auto": the cgroup v2 directory in
 *                     which sup makes its own (an absolute path). Default:
 *                     the environment variable SUP_CGROUP_PARENT, else the
 *                     host's own cgroup (/proc/self/cgroup). sup makes one
 *                     directory per host there, sup-PID-STARTTIME, holding
 *                     one per running child, and writes into no cgroup it
 *                     did not make.
 *   pty               true, or {"rows": R, "cols": C} (each 1..65535; the
 *                     default size is 24 rows of 80 columns): the child's
 *                     stdin, stdout and stderr are the slave side of a new
 *                     pseudo-terminal, which is its controlling terminal;
 *                     the child leads a new session, whose process group
 *                     is its own (pgid == pid), so signals reach its group
 *                     as without a terminal. What the master reads is the
 *                     "stdout" stream (captured, live-readable, feeding the
 *                     idle clock, head and tail, backpressure); "stderr"
 *                     stays empty. Both streams' objects in the result say
 *                     "routed": "pty". The host writes the child's input with
 *                     sup_input_write ("\x03" is a Ctrl-C: the terminal
 *                     sends SIGINT to the child's foreground group, as at a
 *                     keyboard) and ends it with sup_input_close (VEOF, a
 *                     Ctrl-D); sup_pty_resize changes the size. The modes
 *                     are the kernel's defaults: "\n" written by the child
 *                     arrives as "\r\n", and input is echoed, so what the
 *                     host writes appears in the output (and counts as
 *                     output for the idle clock) unless the child turns
 *                     echo off. At the child's end, what it wrote last is
 *                     read to the end before the result is final. "stdin",
 *                     "stdout", "stderr" and "tty_foreground" are refused
 *                     beside it. Default false. Errors: SUP_ENOSPC when no
 *                     pseudo-terminal is left (the detail names
 *                     kernel.pty.max).
 *   keep_ignored_signals  false (default): the child starts with every signal
 *                     at its default disposition, whatever the host's. true:
 *                     a signal the host ignores (SIG_IGN when the child is
 *                     cloned) stays ignored in the child, as fork and exec
 *                     pass it on in a shell (nohup's SIGHUP, a trap '' PIPE),
 *                     except those of reset_signals and the signal of a
 *                     limit the spec sets (SIGXCPU with "cpu_seconds",
 *                     SIGXFSZ with "file_bytes": see "limits"). Handlers
 *                     never pass on: a handled signal is at its default in
 *                     the child
 *   reset_signals     an array of signal names or numbers as
 *                     interrupt_signal takes them (["PIPE", "XFSZ"]): these
 *                     are at their default in the child even with
 *                     keep_ignored_signals (CPython's restore_signals, GNU
 *                     timeout's own signals). Default []. An unknown name
 *                     is SUP_EINVAL naming the element (reset_signals[1])
 *   limits            {"memory_bytes": N, "cpu_seconds": N, "processes": N,
 *                     "file_bytes": N, "open_files": N, "core_dump": false},
 *                     each optional (positive integers; unset: the host's
 *                     own limit). Set by the child on itself before exec,
 *                     as rlimits with soft == hard unless said:
 *                     memory_bytes RLIMIT_DATA (never RLIMIT_AS, which
 *                     stops runtimes that reserve large address ranges;
 *                     a process's data, not the tree's), cpu_seconds
 *                     RLIMIT_CPU with the hard limit one second above
 *                     (SIGXCPU, then SIGKILL), processes RLIMIT_NPROC
 *                     (the user's processes, not the tree's; root is
 *                     exempt, so for a child running as root it is not
 *                     applied), file_bytes RLIMIT_FSIZE (SIGXFSZ),
 *                     open_files RLIMIT_NOFILE, core_dump false
 *                     RLIMIT_CORE 0. SIGXCPU (with cpu_seconds) and
 *                     SIGXFSZ (with file_bytes) start at their default in
 *                     the child even with keep_ignored_signals, so the
 *                     limit ends the child and "limit" says so; a program
 *                     that ignores SIGXFSZ itself sees its write fail
 *                     with EFBIG instead ("limit" null unless it dies of
 *                     it), one that ignores SIGXCPU gets the SIGKILL of
 *                     the hard limit ("limit": "cpu"). In cgroup mode ("contain") where the
 *                     host's cgroup offers the memory and pids controllers,
 *                     memory_bytes is the cgroup's memory.max (and
 *                     memory.swap.max 0) and processes its pids.max, which
 *                     bound the whole tree, instead. The result's
 *                     "confined" says which applied.
 *   sandbox           {"write": [paths], "read": [paths] | null,
 *                     "exec": [paths] | null, "network": true,
 *                     "strict": false, "tmp": false}, each optional: a
 *                     Landlock ruleset (built by the caller, applied by the
 *                     child after no_new_privs) under which nothing is
 *                     writable but the "write" paths (every write right
 *                     the kernel's Landlock ABI has: write, truncate,
 *                     make, remove, link and rename across them) and
 *                     /dev/null, /dev/tty and the child's own "pty" (with
 *                     device ioctls); everything is readable and
 *                     executable unless "read" or "exec" lists what is.
 *                     Descriptors the child is given keep their rights.
 *                     "network": false adds a seccomp filter refusing
 *                     socket(2) with EACCES for every family but AF_UNIX,
 *                     io_uring_setup and (x86_64) every x32 call with
 *                     EPERM, and killing a process that makes a system
 *                     call of another architecture; and, where Landlock
 *                     has ABI 4, refuses TCP bind and connect on any
 *                     socket. "tmp": true makes a private directory (mode
 *                     0700, the child's user's) under the host's $TMPDIR
 *                     or /tmp, writable, named in the child's TMPDIR and
 *                     the result, and removed with everything in it by
 *                     sup_release (on the releasing thread). Best effort:
 *                     what the kernel cannot enforce is listed in the
 *                     result; with "strict": true such a spec fails with
 *                     SUP_ENOTSUP and a detail naming what is missing. A
 *                     listed path that cannot be opened fails the spawn
 *                     (its errno, the detail naming the key). The sandbox
 *                     sets no_new_privs: set-user-ID programs (sudo) fail.
 *   user              a user name or numeric uid the child runs as
 *                     (setresuid), with that user's primary group and
 *                     groups (getgrouplist) unless "group" or "groups" say
 *                     otherwise. Names are resolved before the clone; an
 *                     unknown one is SUP_EINVAL naming the key. Needs a
 *                     privileged host (else SUP_EPERM, the detail naming
 *                     the step). The host's dumpable flag is kept.
 *   group             a group name or numeric gid (setresgid); alone, the
 *                     supplementary groups are unchanged.
 *   groups            an array of group names or gids: exactly the child's
 *                     supplementary groups (setgroups).
 *   The child applies, in this order: rlimits, groups, gid, uid,
 *   no_new_privs, the Landlock ruleset, the seccomp filter, then execs.
 *   require_sentinel  true: SUP_ENOTSUP (the detail starts "require_sentinel: "
 *                     and says why) where no sentinel runs, so that only the
 *                     main process, not its tree, would die with the host
 *                     (see Host death in THREAD MODEL). Default false: such
 *                     a spawn goes on, and its result says "host_death":
 *                     "main_process".
 *
 * Strings: argv, env names and values and cwd are passed to the kernel as
 * the bytes of their JSON text, decoded: escapes (\n, \u00e9, surrogate
 * pairs) become UTF-8, and raw bytes >= 0x80 pass through unchanged, valid
 * UTF-8 or not, so any byte string but NUL can be sent. A NUL ("\u0000")
 * in argv, env or cwd is SUP_EINVAL naming the key; in stdin.data it is
 * sent like any other byte.
 *
 * The child runs in a process group of its own with an empty signal mask,
 * default signal dispositions and no descriptor but 0, 1, 2 and "fds". If the host
 * dies (SIGKILL included) or execs, every child's tree is ended within a
 * second (see THREAD MODEL): in cgroup mode every process of it, in group
 * mode the main process and its group.
 *
 * Returns 0 and stores a handle in *out, or a negative code with *out set to
 * NULL. A command that cannot be started fails here, synchronously. The call
 * returns once the child has exec'd; the library's loop thread takes it on
 * meanwhile, and any call on the handle may come first (it is carried out
 * when the loop has the child). Should the loop fail to watch the child's
 * pidfd or pipes then (out of memory, or fs.epoll.max_user_watches reached),
 * the child's group gets SIGKILL at once and its result is "aborted" with
 * forced_kill and the SIGKILL in signals_sent.
 * Errors: SUP_EINVAL (NULL argument, malformed spec), SUP_ENOENT, SUP_EACCES,
 *   SUP_ENOTDIR, SUP_EISDIR, SUP_ENOEXEC, SUP_E2BIG (exec or cwd failures;
 *   other exec errnos are returned as -errno), SUP_EMFILE, SUP_EAGAIN,
 *   SUP_ENOMEM, SUP_ENOSYS, SUP_ENOTSUP ("contain": "cgroup" impossible
 *   here, the detail starting "contain: "; a "strict" sandbox the kernel
 *   cannot enforce, "sandbox.strict: "; "require_sentinel" with no
 *   sentinel, "require_sentinel: "), SUP_EPERM ("user", "group", "groups"
 *   or a limit above the host's own, without the privilege; the detail
 *   names the key), SUP_EBADF (a host descriptor the spec names is not
 *   open; SUP_PART_SPEC), SUP_ENOSPC ("pty": no pseudo-terminal left),
 *   -ESHUTDOWN (-108: the library is being unloaded, dlclose or exit under
 *   way); other system errnos of pipe(2), fcntl(2) or clone(2) as -errno.
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

/* sup_spawn_v2: sup_spawn_ex that also says which part failed: on error
 * *failed_part (may be NULL) gets an enum sup_part value, on success
 * SUP_PART_NONE. Returns and thread-safety as sup_spawn. */
SUP_API int sup_spawn_v2(const char *spec_json, sup_proc **out, char *errbuf,
                         size_t errbuf_size, int *failed_part);

/* sup_poll: wait up to timeout_ms (0: do not wait, -1: forever) for the result
 * to become final.
 * Returns 1 when final, 0 when still running when the time is up.
 * The calling thread sleeps on the main process's exit itself (a duplicate
 * of its pidfd, for the call's length), so that it wakes together with the
 * library's thread rather than after it, and then waits out the last
 * microseconds awake (yielding, at most 50 us) before it sleeps on the
 * result.
 * Errors: SUP_EINVAL (NULL handle, timeout_ms < -1), SUP_ECANCELED
 * (sup_release began meanwhile: returned even if the result is final),
 * SUP_ECHILD.
 * Thread-safety: any thread, concurrently: any number of threads may wait on
 * one handle, from the moment sup_spawn returns, and none of them ever holds
 * up another, the library's thread or any other child's supervision. */
SUP_API int sup_poll(sup_proc *p, int timeout_ms);

/* sup_interrupt: graceful stop. Sends the interrupt signal and SIGCONT to the
 * child's process group (cgroup mode: to every process of its tree, the
 * cgroup frozen meanwhile), and SIGKILL if the main process has not exited
 * grace_ms later. Every signal sup sends also reaches the main process
 * through its pidfd when it has left its group (setpgid), so it is never
 * out of reach. A second call does not restart the grace period. While the
 * main process runs the signal is sent from the calling thread, before the
 * call returns; the interrupt signal is sent once, whoever asks first (this
 * call, another thread's, or a timeout), and never after a SIGKILL.
 * Returns 0 when the request was latched, 1 when the result was already
 * final (nothing changes: a final result is immutable).
 * Errors: SUP_EINVAL (NULL handle), SUP_ECHILD.
 * Thread-safety: any thread, any time before sup_release; async-signal-safe. */
SUP_API int sup_interrupt(sup_proc *p);

/* sup_signal: sends sig to the child's process group (which its main
 * process leads unless it left it), as kill(2) to the group would, from any
 * thread or a signal handler; the main process also gets it through its
 * pidfd when it has left its group. A host's signal, not an ending: it never
 * changes the outcome (a child that dies of it is "signaled") nor starts
 * the escalation, and is listed in signals_sent when it reached at least
 * one process (the first 64 sup_signal calls of a handle are listed). After
 * the main process exits, until the result is final, what it left in the
 * group still gets it. sig 0 sends nothing: 0 while the result is not
 * final, SUP_ESRCH once it is (a liveness probe).
 * Returns 0.
 * Errors: SUP_EINVAL (NULL handle, sig < 0 or > 64), SUP_ESRCH (the result
 * is final, or the host reaped the main process itself, or no process is
 * left in the group), SUP_EPERM (the kernel refused), SUP_ECHILD.
 * Thread-safety: any thread, any time before sup_release; async-signal-safe. */
SUP_API int sup_signal(sup_proc *p, int sig);

/* sup_abort: hard stop. SIGKILL to the child's process group (and to the
 * main process, if it left the group) now; cgroup mode: to its whole tree,
 * by cgroup.kill.
 * Returns 0 when the request was latched, 1 when the result was already
 * final (nothing changes).
 * Errors: SUP_EINVAL (NULL handle), SUP_ECHILD.
 * Thread-safety: any thread, any time before sup_release; async-signal-safe. */
SUP_API int sup_abort(sup_proc *p);

/* sup_expire: the child's maximum runtime as if it had come now: the child
 * is ended as max_runtime_ms would end it (on_timeout: the interrupt signal,
 * then SIGKILL after grace_ms; or SIGKILL at once) and the outcome is
 * "max_runtime", whether max_runtime_ms is set or not. For a supervisor
 * whose own timer fires outside sup (GNU timeout's SIGALRM, a harness's
 * budget). Like a deadline, it changes nothing once sup is ending the child
 * for another reason (an interrupt, an abort, another timeout): the first
 * cause stands, and the signals already on their way are not repeated. The
 * request is latched and acted on by the library's thread at once; a main
 * process that has already exited by then is not ended by it.
 * Returns 0 when the request was latched, 1 when the result was already
 * final (nothing changes: a final result is immutable).
 * Errors: SUP_EINVAL (NULL handle), SUP_ECHILD.
 * Thread-safety: any thread, any time before sup_release; async-signal-safe
 * (errno is kept). */
SUP_API int sup_expire(sup_proc *p);

/* sup_result: the final result as a JSON object, owned by the handle and
 * valid until sup_release:
 *   {"outcome": "idle_timeout", "phase": "idle", "exit_code": null,
 *    "term_signal": "SIGTERM",
 *    "status_lost": false, "forced_kill": false, "pid": 4242,
 *    "duration_ms": 2003.1,
 *    "stdout": {"bytes": 1234, "captured": "...", "truncated": false,
 *               "omitted_bytes": 0, "routed": "pipe", "tee_error": null},
 *    "stderr": {...}, "signals_sent": [{"signal": "SIGTERM", "at_ms": 2000.4}],
 *    "rusage": {"user_ms": 1.2, "sys_ms": 0.8, "max_rss_kb": 3100},
 *    "waiting_for_input": null, "tty_foreground": null, "tty_refused": null,
 *    "contained": "cgroup", "leftovers_ended": 1,
 *    "tree_cpu": {"user_ms": 5.1, "sys_ms": 2.0}, "contain_fallback": null,
 *    "cgroup_left": null,
 *    "confined": {"cpu_seconds": {"value": 60, "mechanism": "rlimit",
 *                                 "scope": "process"},
 *                 "sandbox": {"landlock_abi": 7, "filesystem": true,
 *                             "network": true, "landlock_tcp": true,
 *                             "no_new_privs": true, "not_enforced": []},
 *                 "user": {"uid": 65534, "gid": 65534, "groups": [65534]}},
 *    "limit": "cpu", "host_death": "tree"}
 * "bytes" counts everything the child wrote to the stream, "omitted_bytes"
 * what was dropped from the middle. If the host runs out of memory while
 * the child writes, less is kept (the head ends, keeping half of what it
 * has, and the newest bytes are kept in the memory already held) and more
 * is omitted; the count stays exact. "duration_ms" runs from the sup_spawn
 * call to the final result, "at_ms" from that call too. "forced_kill" says
 * a SIGKILL sup sent reached a process. "signals_sent" lists only signals
 * that reached at least one living process of the child's group, its main
 * process or (cgroup mode) its tree.
 * "phase" is "first_output", "idle" or "input" for an idle_timeout outcome
 * (which limit fired), null for every other. "waiting_for_input" (after
 * "rusage") is true when the child was waiting for input (sup_input_wanted's
 * 1) at its end, whatever ended it: the last look before the first signal
 * sent to it (or before its exit) saw it waiting, and no byte was read from
 * it and none written to its stdin since; false when it was not; null when
 * nobody asked (neither input_wait_timeout_ms nor sup_input_wanted), when
 * sup could not see (sup_input_wanted's SUP_EPERM), or when it was ended
 * before any look (within ~30 ms of its last output). With
 * tty_stop_timeout_ms it is also true when the last check found the main
 * process stopped by SIGTTIN or SIGTTOU (a check that did not find it so
 * answers nothing: null unless a look answers).
 * "routed" is each stream's routing: "pipe", "tee", "inherit", "null",
 * "stdout" (stderr into stdout) or "fd" (a host descriptor the spec named).
 * "tee_error" is null unless a "tee" copy's fd failed: then its errno's
 * name, "EPIPE" when its reader had gone (see the spec's "stdout").
 * "tty_foreground" and "tty_refused": see the spec's "tty_foreground".
 * Signal names are sup_signal_name's.
 * "exit_code" is null when the child died from a signal, "term_signal" null
 * when it exited; both are null, and "status_lost" true, when the host
 * reaped the child itself (SIGCHLD set to SIG_IGN, or waitpid(-1)).
 * "contained" is "group" or "cgroup" (see the spec's "contain");
 * "leftovers_ended" and "tree_cpu" are null in group mode (see
 * sup_result_leftovers_ended, sup_result_tree_cpu); "contain_fallback" is
 * why an "auto" spec ran in group mode, else null; "cgroup_left" is null
 * unless the child's cgroup could not be removed (a process stuck in
 * uninterruptible sleep): then its path, which sup tries again when the
 * host's engine ends. "host_death" says what would have ended with the host
 * had it died while the child ran: "tree" where the sentinel held the
 * child's record (its cgroup, or its process group in group mode),
 * "main_process" where no sentinel ran and PR_SET_PDEATHSIG alone tied the
 * child to the host (see sup_result_host_death).
 * "confined" is null without "limits", "sandbox" or "user"/"group"/
 * "groups"; else one entry per limit given, with its "value", the
 * "mechanism" that applied it ("rlimit", "cgroup", or null with a "reason"),
 * its "scope" ("process": each process; "user": all the processes of the
 * child's user; "tree": the child's whole cgroup) and, where the tree-wide
 * cgroup could not be used, a "reason" (a cgroup without the controller, or
 * "\"contain\": \"auto\" ran in group mode: " and contain_fallback's text:
 * then the child has the rlimits instead, also when the kernel refused to
 * start it in a cgroup whose files were already written); "sandbox" with
 * the kernel's Landlock ABI (0: none), whether the filesystem rules and
 * the network refusal
 * ("network": null when the spec allows the network) were applied, whether
 * Landlock's TCP rules were, "not_enforced" listing what the kernel could
 * not enforce, and "tmp" (the private directory) when asked; "user" with
 * the ids the child was given (null: unchanged). "limit" names the limit
 * that ended the child, else null: "memory" (its cgroup's memory.events
 * oom_kill count rose), "processes" (its cgroup's pids.events max rose),
 * "cpu" (the main process died of SIGXCPU, or of SIGKILL once its CPU time
 * reached cpu_seconds), "file_size" (it died of SIGXFSZ). The outcome is
 * unchanged ("signaled", "exited"). Without a cgroup a memory or process
 * limit shows as a failed allocation or fork, which the program reports.
 * "captured" is text: invalid UTF-8 is replaced by U+FFFD, and where bytes
 * were dropped (truncated) a line "[sup: N bytes omitted]" marks the gap; use
 * sup_result_output for the exact bytes.
 * Memory: the text is built at the first call. A stream's kept bytes of
 * 1 MiB or more whose text gives them back exactly (valid UTF-8, however
 * escaped) move into it unless sup_result_output already gave them out:
 * they then exist once, as text, and are rebuilt from it (a copy) only if
 * sup_result_output or sup_output_read asks for them afterwards.
 * Returns NULL while running, for a NULL handle, or when out of memory.
 * Thread-safety: any thread, concurrently. */
SUP_API const char *sup_result(sup_proc *p);

/* sup_release: free the handle. If the child still runs it is aborted and it
 * and its group are reaped first: no orphan, no zombie. This waits for the
 * SIGKILL to take effect (milliseconds, also for a main process that left
 * its group: it is reached through its pidfd). (The result is published just
 * before the main process is reaped, so a pid seen right after sup_poll may
 * still be a zombie for microseconds; never after sup_release.) NULL is a
 * harmless no-op.
 * Memory: a stream's capture buffer of 1 to 32 MiB (16 MiB at the default
 * max_output_bytes, once the child wrote more than 64 KiB) is kept for the
 * next capture of the same size instead of freed, one for the process (as
 * an allocator keeps freed memory): the next capture reuses its pages
 * without a page fault, and until then they stay in the host's RSS.
 * Thread-safety: other threads may be inside any call on the handle: those
 * that wait return SUP_ECANCELED (never 1), and the memory is freed when the last call
 * has returned. No call may begin on the handle once sup_release has begun.
 * In a forked child, on a handle of the parent's: frees memory only. */
SUP_API void sup_release(sup_proc *p);

/* sup_fd: a descriptor, owned by the handle, that becomes readable once the
 * result is final and stays readable; for hosts with their own event loop
 * (epoll, Go's netpoller, a Lua loop), which then call sup_poll(p, 0). Do not
 * read from it or close it; it may be dup(2)ed (a binding handing an owned
 * fd to os.NewFile or tokio's AsyncFd does so), and the duplicate stays
 * readable once final. Created on first call; the same fd afterwards.
 * Returns the descriptor (>= 0).
 * Errors: SUP_EINVAL (NULL handle), SUP_EMFILE (out of descriptors, the
 * host's or the system's), SUP_ENOMEM, SUP_ECHILD.
 * Thread-safety: any thread, concurrently. */
SUP_API int sup_fd(sup_proc *p);

/* sup_pid: the child's pid, for display. Do not signal it yourself: after the
 * result is final the pid may belong to another process.
 * Returns the pid (> 0). Errors: SUP_EINVAL (NULL handle), SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_pid(sup_proc *p);

/* ---- Live output, while the child runs (pull-based) ------------------- */

/* sup_output_read: copy bytes the child wrote to `stream` so far, starting at
 * byte *pos of everything it wrote, into buf (up to cap bytes); *nread gets
 * the count and *pos advances by it. Does not block. When the bytes at *pos
 * were dropped (output beyond max_output_bytes keeps only head and tail),
 * *pos first jumps to the oldest byte still kept: the jump is what was lost.
 * Works while running and after the result is final.
 * Returns 0; *nread == 0 means nothing new yet, or the end when the result
 * was already final before this call: the last bytes may land between a
 * read that finds nothing and a sup_poll that returns 1, so a reader that
 * sees final after an empty read reads once more.
 * Errors: SUP_EINVAL (NULL handle, pos or nread, buf NULL with cap > 0, bad
 * stream, *pos past the bytes written so far), SUP_ENOMEM (after sup_result
 * moved the bytes into its text: no memory to rebuild them), SUP_ECHILD.
 * Thread-safety: any thread, concurrently; one reader per stream keeps
 * backpressure_bytes meaningful. */
SUP_API int sup_output_read(sup_proc *p, int stream, uint64_t *pos, void *buf,
                            size_t cap, size_t *nread);

/* sup_output_wait: wait up to timeout_ms (0: do not wait, -1: forever) until
 * stdout has more than stdout_pos bytes, stderr more than stderr_pos bytes, or
 * the result is final. Pass SUP_POS_IGNORE for a stream not to wait on.
 * Returns 1 when one of those holds, 0 when the time ran out.
 * Errors: SUP_EINVAL (NULL handle, timeout_ms < -1), SUP_ECANCELED
 * (sup_release began meanwhile, as for sup_poll), SUP_ECHILD.
 * Thread-safety: any thread, concurrently. */
SUP_API int sup_output_wait(sup_proc *p, uint64_t stdout_pos,
                            uint64_t stderr_pos, int timeout_ms);

/* sup_output_total: bytes sup has read from `stream` so far (all of them,
 * kept or not): while running, what the child wrote less what still waits
 * in the pipe; once final, everything it wrote.
 * Returns the count (>= 0). Errors: SUP_EINVAL (NULL handle, bad stream),
 * SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int64_t sup_output_total(sup_proc *p, int stream);

/* sup_output_fd: a descriptor, owned by the handle, that is readable while
 * `stream` has bytes beyond the furthest position read through
 * sup_output_read on it, and for good once the result is final. Level
 * semantics, no re-arming: reading up to sup_output_total makes it
 * unreadable again until more output arrives. For a live reader on epoll,
 * Go's netpoller, tokio's AsyncFd, luv or asyncio: wait for readable, then
 * call sup_output_read until it gives 0 bytes; at 0 bytes with sup_poll(p, 0)
 * == 1 the stream has ended. Do not read from it or close it; it may be
 * dup(2)ed. Created on first call; the same fd afterwards.
 * For a plain pipe (not "tee", not "pty") while the child runs, the
 * descriptor is an epoll set that also holds the pipe, and the reader reads
 * the pipe itself: sup_output_read takes the bytes from the pipe straight
 * into buf (still keeping them, counting them and restarting the idle
 * clock), and sup's own thread stops watching the pipe, so that each write
 * wakes one thread, the reader's. Bytes left in the pipe count for the idle
 * clock when they are read, by the reader or, at the latest, by sup when
 * the idle limit falls due. With backpressure_bytes set, the window is then
 * the pipe's buffer: the child blocks once it holds 64 KiB that the reader
 * has not read. Without it the child never waits for the reader for long:
 * the pipe is only lent, and sup's thread takes it back (and captures as
 * usual) when the reader has left bytes unread for 100-300 ms, or read big
 * chunks and still left half a pipe unread; the reader takes it again once
 * it has read all that sup holds. The pipe goes back to sup's thread at its
 * end of file, when a thread waits on the stream in sup_output_wait (which
 * waits on what sup has read), and once sup ends the child or the main
 * process exits. A thread in sup_poll while a reader holds a pipe waits for
 * the exit only, and a reader arriving while a thread is in sup_poll takes
 * the pipe once that thread leaves.
 * Returns the descriptor (>= 0).
 * Errors: SUP_EINVAL (NULL handle, bad stream), SUP_EMFILE, SUP_ENOMEM,
 * SUP_ECHILD.
 * Thread-safety: any thread, concurrently; one reader per stream. */
SUP_API int sup_output_fd(sup_proc *p, int stream);

/* ---- Stdin as a pipe ("stdin": "pipe") or a terminal ("pty") ---------- */

/* With "pty" these calls write to the terminal's master: the bytes are
 * what a person would type (the line discipline echoes them, buffers a
 * line until "\n" or "\r", and turns "\x03" into SIGINT, "\x1c" into
 * SIGQUIT and "\x1a" into SIGTSTP for the child's foreground group).
 * sup_input_close sends the end of input (VEOF) and keeps the terminal
 * open; sup_input_fd is the master. In canonical mode (the default) the
 * terminal holds at most 4095 bytes of an unfinished line: what is typed
 * beyond that is dropped, as at a keyboard. */

/* sup_input_write: write up to len bytes to the child's stdin without
 * blocking. *written (may be NULL) gets the count, which may be less than
 * len (a partial write). Never raises SIGPIPE in the host.
 * Returns 0 (something written, or len == 0).
 * Errors: SUP_EINVAL (NULL handle, buf NULL with len > 0), SUP_EAGAIN (the
 * pipe, or the terminal's input queue, is full: nothing written; wait with
 * sup_input_wait or sup_input_fd), SUP_EPIPE (the child closed its stdin,
 * or every descriptor of its terminal, or the result is final), SUP_EBADF
 * (stdin is neither "pipe" nor "pty", or sup_input_close was called),
 * SUP_ECHILD.
 * Thread-safety: any thread; concurrent writers interleave their bytes. */
SUP_API int sup_input_write(sup_proc *p, const void *buf, size_t len,
                            size_t *written);

/* sup_input_wait: wait up to timeout_ms (0: do not wait, -1: forever) until
 * sup_input_write can make progress: the pipe has room, or a write would
 * fail at once (the child closed its stdin, or the result is final).
 * Returns 1 when so, 0 when the time ran out.
 * Errors: SUP_EINVAL, SUP_EBADF (as sup_input_write), SUP_ECANCELED
 * (sup_release began meanwhile, as for sup_poll), SUP_EMFILE, SUP_ENOMEM
 * (it makes the descriptor sup_fd returns, at its first call), SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_input_wait(sup_proc *p, int timeout_ms);

/* sup_input_fd: the write end of the stdin pipe (with "pty": the terminal's
 * master), owned by the handle, for polling for writability (POLLOUT /
 * EPOLLOUT) in the host's own loop. Write with sup_input_write, not
 * write(2) (which may raise SIGPIPE); do not close it or read from it (the
 * output is sup's to read). Valid until sup_input_close or sup_release;
 * afterwards the call returns SUP_EBADF.
 * Returns the descriptor. Errors: SUP_EINVAL, SUP_EBADF, SUP_ECHILD. */
SUP_API int sup_input_fd(sup_proc *p);

/* sup_input_close: close the child's stdin (it reads EOF). Idempotent.
 * With "pty" the terminal stays open (closing the master would hang the
 * child up and lose its last output): the terminal's VEOF character
 * (c_cc[VEOF], Ctrl-D by default) is written instead, twice when the last
 * byte written left a line unfinished (the first sends that line), so the
 * child's next read of its terminal returns end of file. A child that put
 * its terminal in non-canonical mode (an editor, a REPL's line editor) gets
 * one VEOF as a key, as from a keyboard; a terminal with VEOF disabled gets
 * nothing. Further sup_input_write calls return SUP_EBADF.
 * Returns 0. Errors: SUP_EINVAL, SUP_EBADF (stdin is neither "pipe" nor
 * "pty"), SUP_EAGAIN ("pty": the terminal's input queue is full; the
 * input is not closed yet: call again, after sup_input_wait, to finish),
 * SUP_EPIPE ("pty": the terminal refused the VEOF; the child's input is
 * gone), SUP_ECHILD. Thread-safety: any thread; a
 * concurrent sup_input_write either completes first or returns SUP_EBADF. */
SUP_API int sup_input_close(sup_proc *p);

/* sup_input_wanted: whether the child is waiting for input it cannot get.
 * What counts: a process of its tree (its process group; in cgroup mode its
 * cgroup) asleep reading the child's stdin file (the "pipe", the "pty", or
 * an inherited pipe, FIFO or terminal; /dev/tty counts as the controlling
 * terminal) in read, readv, pread, poll, select or epoll_wait (the epoll's
 * targets from /proc/PID/fdinfo), every thread of every process of the tree
 * asleep (none runnable or in disk sleep; others may sleep on anything, as
 * a runtime's parked threads do), the reading thread not woken, nothing
 * read from the child and nothing written to its stdin across two looks
 * >= 40 ms apart, and no input written (nor the reader seen woken) in the
 * last 250 ms: a reader being fed is not waiting. Or a process of the tree
 * stopped by SIGTTIN or SIGTTOU (it read, wrote or configured its
 * controlling terminal from a background group), which nothing but the
 * host can ever end: that counts at once. Matched by file (device and
 * inode, a terminal by its device number), not by descriptor 0. Each call
 * looks at /proc (every process of the tree, each thread's stat and
 * syscall; poll's and select's sets through process_vm_readv), which costs
 * about a millisecond; in group mode the group's members whose parent
 * ended are found by a scan of every process, shared by every child's
 * looks and taken again once it is 1 s old (it costs in proportion to the
 * processes on the machine). A call within 5 ms of the last look, with nothing
 * read or written since, gets that look's answer. The first call turns on
 * the loop's own looks (input_wait_timeout_ms turns them on from the
 * start), for the rest of the child's life, so that later calls, the limit
 * and the result's "waiting_for_input" can compare; a call that sees a
 * reader for the first time looks again 40 ms later before it answers (it
 * then blocks that long).
 * The loop's looks: the first 30 ms after the last output; then every 50 ms
 * while the child has been quiet (no output read, no input written) for
 * under 1 s since the start or the last output; after that, each look comes
 * half the quiet time so far after the previous one, at most 4 s, on a
 * 100 ms tick shared by every child (and 50 ms after one that saw a reader
 * for the first time, to confirm it). So a wait that begins at the start or
 * within 1 s of the last output (a prompt) is seen within 100 ms; one that
 * begins after a silence of t > 1 s is seen within min(t/2, 4 s) + 150 ms
 * (for `sleep 2; read x`: 1.15 s), plus what the scheduler adds. A caller's
 * own call always looks at once. Each look, the loop's or a call's, first
 * reads the run counts (/proc/PID/task/TID/schedstat) of the threads the
 * last whole look saw: when none has run since (and nothing was read or
 * written), nothing in the tree has moved and the verdict stands without
 * the rest of the look. Only a look that saw every thread of the tree,
 * none runnable and none stopped on its terminal, stands for later ones;
 * in group mode, only once two whole looks saw the same processes with a
 * scan taken between them.
 * Nothing to look for: a child without "pty" whose stdin never blocks a
 * reader ("null", {"data": ...}, which sup feeds and then closes, or
 * {"fd": N} or "inherit" of /dev/null or a regular file) can wait only by
 * a SIGTTIN or SIGTTOU stop, which takes a controlling terminal in its
 * session: the host's session (tty_nr in /proc/self/stat, read once, at the
 * spawn when input_wait_timeout_ms is set, else at the first call). When
 * that session has none, sup never looks at that child: every call returns
 * 0 at once, the loop never wakes for it, and the result's
 * "waiting_for_input" is false. A process of the tree that makes a session
 * of its own (setsid) and opens a terminal there reads that terminal, not
 * the child's stdin: its stops are then not seen. A host that gains a
 * controlling terminal after that read is not seen to have one.
 * Returns 1 while waiting, 0 when not.
 * Errors: SUP_EPERM (sup may not inspect a process of the tree: another
 * user's, as a sudo prompt under a host that is not root, or ptrace
 * restrictions, and nothing it can see is waiting: the answer is unknown,
 * never a false 0), SUP_ESRCH (the result is final), SUP_ENOMEM, SUP_EINVAL
 * (NULL handle), SUP_ECHILD.
 * Thread-safety: any thread, concurrently with every call but sup_release.
 * Not async-signal-safe. */
SUP_API int sup_input_wanted(sup_proc *p);

/* sup_pty_resize: set the window size of the child's terminal ("pty") to
 * rows x cols; the kernel sends SIGWINCH to the terminal's foreground
 * process group when the size changes (`stty size` then prints the new one).
 * Returns 0.
 * Errors: SUP_EINVAL (NULL handle, rows or cols < 1 or > 65535),
 * SUP_ENOTSUP (the child has no "pty"), SUP_ESRCH (the result is final),
 * SUP_ECHILD.
 * Thread-safety: any thread, concurrently with every call but sup_release.
 * Not async-signal-safe. */
SUP_API int sup_pty_resize(sup_proc *p, int rows, int cols);

/* ---- Typed access to the final result (no JSON parser needed) --------- */

/* Returns the outcome (enum sup_outcome, > 0).
 * Errors: SUP_EINVAL (NULL handle), SUP_EBUSY (still running), SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_result_outcome(sup_proc *p);

/* Returns the main process's exit code (0..255).
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ENODATA (it died from a signal, or its
 * status was lost: see sup_result_status_lost), SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_result_exit_code(sup_proc *p);

/* Returns the signal number that killed the main process.
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ENODATA (it exited, or its status was
 * lost), SUP_ECHILD. Thread-safety: any thread. */
SUP_API int sup_result_term_signal(sup_proc *p);

/* Returns enum sup_phase: for an idle_timeout outcome which limit fired
 * (SUP_PHASE_FIRST_OUTPUT or SUP_PHASE_IDLE), else SUP_PHASE_NONE.
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ECHILD. Thread-safety: any thread. */
SUP_API int sup_result_phase(sup_proc *p);

/* Returns 1 when a SIGKILL sup sent (after grace, on_timeout "kill", abort,
 * or to end what the main process left behind) reached a process, else 0.
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ECHILD. Thread-safety: any thread. */
SUP_API int sup_result_forced_kill(sup_proc *p);

/* Returns the milliseconds from the sup_spawn call until the result became
 * final, or a negative value.
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ECHILD. Thread-safety: any thread. */
SUP_API double sup_result_duration_ms(sup_proc *p);

/* sup_result_output: the captured bytes of `stream`, exactly as written
 * (head and newest tail joined when truncated; see
 * sup_result_omitted_bytes for the gap), owned by the handle until
 * sup_release. *len gets the length. Not NUL-terminated. Called first, it
 * hands out the buffer the bytes are kept in; after sup_result, perhaps a
 * copy rebuilt from its text (see sup_result).
 * Returns NULL while running, for a NULL handle or len, a bad stream, or
 * when out of memory.
 * Thread-safety: any thread. */
SUP_API const char *sup_result_output(sup_proc *p, int stream, size_t *len);

/* Returns the bytes of `stream` that were written but not kept (0 when not
 * truncated). The gap sits after the first half of max_output_bytes.
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ECHILD. Thread-safety: any thread. */
SUP_API int64_t sup_result_omitted_bytes(sup_proc *p, int stream);

/* Returns 1 when the main process's exit status was lost: the host reaped it
 * itself (SIGCHLD set to SIG_IGN, or waitpid(-1)), so neither an exit code
 * nor a signal is known ("status_lost": true in the JSON); else 0.
 * Errors: SUP_EINVAL, SUP_EBUSY, SUP_ECHILD. Thread-safety: any thread. */
SUP_API int sup_result_status_lost(sup_proc *p);

/* sup_result_rusage: the main process's resource use (getrusage of the
 * reaped child). Each out-pointer may be NULL. All zero when the status was
 * lost.
 * Returns 0. Errors: SUP_EINVAL, SUP_EBUSY, SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_result_rusage(sup_proc *p, double *user_ms, double *sys_ms,
                              int64_t *max_rss_kb);

/* sup_result_signals: the signals sent to the child's group and main
 * process (sup's own, and the host's through sup_signal) that reached at
 * least one process, in time order (the JSON's "signals_sent"; SIGCONT sent
 * beside an interrupt signal is not listed). Copies up to cap of them into
 * signals[] and at_ms[] (ms since
 * the sup_spawn call); either array may be NULL (that part is not copied).
 * Returns how many were sent in all (may exceed cap).
 * Errors: SUP_EINVAL (NULL handle), SUP_EBUSY, SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_result_signals(sup_proc *p, int *signals, double *at_ms,
                               size_t cap);

/* ---- Containment ("contain") ------------------------------------------ */

/* How a child's tree was contained (sup_result_contained). */
enum sup_contain {
  SUP_CONTAIN_GROUP = 1, /* its process group: what leaves the group
                            (setsid, setpgid) is beyond sup's signals */
  SUP_CONTAIN_CGROUP = 2 /* a cgroup v2 of its own: every process it ever
                            started, whatever its group or session */
};

/* sup_result_contained: "group" or "cgroup" for this child (an "auto" spec
 * that fell back says "group"; the JSON's "contain_fallback" says why).
 * Returns enum sup_contain.
 * Errors: SUP_EINVAL (NULL handle), SUP_EBUSY (still running), SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_result_contained(sup_proc *p);

/* sup_result_leftovers_ended: in cgroup mode, how many processes of the
 * tree (sub-cgroups included, zombies not) were still alive when the main
 * process had ended and sup killed them (0 when none; also 0 when the
 * whole tree was killed together with the main process).
 * Returns the count (>= 0).
 * Errors: SUP_ENODATA (group mode, where sup cannot count them), SUP_EINVAL,
 * SUP_EBUSY, SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int64_t sup_result_leftovers_ended(sup_proc *p);

/* sup_result_tree_cpu: in cgroup mode, the CPU time of the whole tree, every
 * process it ever started included (the cgroup's cpu.stat), where
 * sup_result_rusage has the main process's only. Either out-pointer may be
 * NULL.
 * Returns 0.
 * Errors: SUP_ENODATA (group mode, or cpu.stat unreadable), SUP_EINVAL,
 * SUP_EBUSY, SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_result_tree_cpu(sup_proc *p, double *user_ms, double *sys_ms);

/* ---- Host death --------------------------------------------------------- */

/* What ends with the child's host, should the host die (SIGKILL included)
 * or exec while the child runs (sup_result_host_death, the result's
 * "host_death"); see Host death in THREAD MODEL. */
enum sup_host_death {
  SUP_HOST_DEATH_TREE = 1,        /* the sentinel holds the child's record:
                                     its cgroup, or its process group */
  SUP_HOST_DEATH_MAIN_PROCESS = 2 /* no sentinel: PR_SET_PDEATHSIG ends the
                                     main process alone */
};

/* sup_result_host_death: what would end with the host (enum
 * sup_host_death). Fixed when the child is cloned, so it may be asked at any
 * time, before the result is final too.
 * Returns SUP_HOST_DEATH_TREE or SUP_HOST_DEATH_MAIN_PROCESS.
 * Errors: SUP_EINVAL (NULL handle), SUP_ECHILD.
 * Thread-safety: any thread. */
SUP_API int sup_result_host_death(sup_proc *p);

#ifdef __cplusplus
}
#endif

#endif /* SUP_H */
