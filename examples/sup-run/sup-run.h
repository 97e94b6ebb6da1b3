/*
 * sup-run and sup-timeout: one program under two names, around libsup.
 *
 * sup-run.h declares what the parts share: the options both command lines
 * fill (options.c for sup-run's, timeout_options.c for GNU timeout's), the
 * durations (duration.c), the spec text (strbuf.c), the signals sup-run
 * receives and relays (signals.c), the terminal and job control
 * (terminal.c), the output passed through (forward.c), the options both
 * command lines share for descriptors, waiting for input and confinement
 * (confine_options.c) and the main flow (main.c).
 */
#ifndef SUP_RUN_H
#define SUP_RUN_H

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "sup.h"

enum {
  EXIT_TIMEDOUT = 124,
  EXIT_SUPRUN = 125,
  EXIT_CANNOT_INVOKE = 126,
  EXIT_NOTFOUND = 127,
  EXIT_EPIPE = 128 + SIGPIPE,
};

/* The library's bounds for durations and byte counts (ABI 0.2): checked here so
 * that the message names the option rather than a spec key. */
#define MAX_DURATION_MS UINT64_C(1000000000000)
#define MAX_BYTES (UINT64_C(1) << 40)

/* How far the library may run ahead of a slow reader of sup-run's output
 * before it makes the command wait: enough to batch writes, small enough that
 * a stalled pipe stalls the command rather than sup-run's memory. */
#define BACKPRESSURE_BYTES (1024 * 1024)

#define FORWARD_CHUNK (64 * 1024)

/* Which command line the program takes: its own, or GNU timeout's. */
enum frontend { FRONTEND_RUN, FRONTEND_TIMEOUT };
extern enum frontend g_frontend;
/* The name messages start with: "sup-run", or sup-timeout's argv[0] as GNU
 * timeout prints its own. */
extern const char *g_progname;
/* The whole program, as either (run_main.c, timeout_main.c). */
int supervise(int argc, char **argv, enum frontend frontend);

/* ---- Text (strbuf.c) ----------------------------------------------------- */

struct strbuf {
  char *data;
  size_t len, cap;
};

_Noreturn void die_oom(void);
void sb_append(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_json_string(struct strbuf *sb, const char *s);

/* ---- Options (options.c, timeout_options.c) ----------------------------- */

/* The options both command lines share (confine_options.c): the command's
 * stdin and extra descriptors, the input wait, limits, sandbox and user.
 * Each is unset (NULL, 0, -1, false) unless given. */
struct confine_options {
  const char *stdin_mode;   /* NULL ("inherit"), "inherit", "null" or "fd:N" */
  struct strbuf fds;        /* the "fds" members: "\"3\": 7, ..." */
  int *fd_children;         /* the child numbers in fds, to refuse one twice */
  size_t fd_count;
  uint64_t input_wait_timeout_ms;
  uint64_t tty_stop_timeout_ms;
  /* --limit: -1 unset; core_zero: core=0 */
  int64_t memory_bytes, cpu_seconds, processes, file_bytes, open_files;
  bool core_zero;
  struct strbuf sandbox_write, sandbox_read; /* JSON array members */
  bool sandbox_read_given, no_network, sandbox_tmp, sandbox_strict;
  const char *user, *group;
  bool require_sentinel;
};

/* getopt_long values of the shared options: above either command line's
 * own, so that each can hand them to confine_option. */
enum confine_option {
  COPT_STDIN = 512,
  COPT_FD,
  COPT_INPUT_WAIT,
  COPT_TTY_STOP,
  COPT_LIMIT,
  COPT_SANDBOX_WRITE,
  COPT_SANDBOX_READ,
  COPT_NO_NETWORK,
  COPT_SANDBOX_TMP,
  COPT_SANDBOX_STRICT,
  COPT_USER,
  COPT_GROUP,
  COPT_REQUIRE_SENTINEL,
};

/* Their entries in a struct option table (needs <getopt.h>). */
#define CONFINE_LONGOPTS                                                   \
  {"stdin", required_argument, NULL, COPT_STDIN},                          \
  {"fd", required_argument, NULL, COPT_FD},                                \
  {"input-wait-timeout", required_argument, NULL, COPT_INPUT_WAIT},        \
  {"tty-stop-timeout", required_argument, NULL, COPT_TTY_STOP},            \
  {"limit", required_argument, NULL, COPT_LIMIT},                          \
  {"sandbox-write", required_argument, NULL, COPT_SANDBOX_WRITE},          \
  {"sandbox-read", required_argument, NULL, COPT_SANDBOX_READ},            \
  {"no-network", no_argument, NULL, COPT_NO_NETWORK},                      \
  {"sandbox-tmp", no_argument, NULL, COPT_SANDBOX_TMP},                    \
  {"sandbox-strict", no_argument, NULL, COPT_SANDBOX_STRICT},              \
  {"user", required_argument, NULL, COPT_USER},                            \
  {"group", required_argument, NULL, COPT_GROUP},                          \
  {"require-sentinel", no_argument, NULL, COPT_REQUIRE_SENTINEL}

struct options {
  uint64_t idle_timeout_ms;
  uint64_t first_output_timeout_ms;
  uint64_t max_runtime_ms;
  uint64_t grace_ms;
  int interrupt_signal;
  bool kill_on_timeout;
  uint64_t max_output_bytes;
  const char *json_path;
  const char *contain; /* "group", "cgroup" or "auto" */
  bool quiet;
  const char *stdout_mode; /* "pipe", "inherit", "null" or "tee" */
  const char *stderr_mode; /* the same, or "stdout" (--merge) */
  bool env_clear;
  bool pty;
  /* Signals the caller ignores stay ignored in the command, but those that
   * the program itself handles or relays (signals.c decides which). */
  bool keep_ignored_signals;
  /* sup-timeout: GNU timeout's -v, --preserve-status, --foreground, and
   * -s 0 (no signal: SIGCONT is sent in its place). */
  bool verbose;
  bool preserve_status;
  bool foreground;
  bool signal_zero;
  double timeout_seconds;    /* DURATION; 0: none */
  double kill_after_seconds; /* -k; 0: no SIGKILL */
  bool max_output_none;      /* --max-output=none: every byte kept */
  struct confine_options confine;
  char **argv; /* the command, NULL-terminated */
};

_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void parse_options(int argc, char **argv, struct options *o);
void parse_timeout_options(int argc, char **argv, struct options *o);
void confine_defaults(struct confine_options *c);
void confine_release(struct confine_options *c);
/* One shared option (c is its enum confine_option value). */
void confine_option(int c, const char *arg, struct confine_options *o);
/* "fd:N" for --stdout, --stderr and --stdin: N, or -1 when arg is not of
 * that form; a descriptor that is not open is a usage error naming option. */
int fd_mode(const char *arg, const char *option);
/* The spec's value for a routing mode: "pipe" or {"fd": N}. */
void append_routing(struct strbuf *sb, const char *mode);
/* The spec's keys for the shared options, each after ", ". */
void append_confine_spec(struct strbuf *sb, const struct options *o);

/* GNU's quote(): 'x' in the C locale, ‘x’ in a UTF-8 one. Static storage,
 * two at a time. */
const char *gnu_quote(const char *s);

/* ---- Durations and sizes (duration.c) ----------------------------------- */

enum parse_result { PARSE_OK, PARSE_INVALID, PARSE_TOO_LARGE };

/* DURATION for sup-run: its own form (250ms, 1.5s, 2m, exact to the
 * millisecond), or GNU timeout's (1d, 1e3, 0x1p-3, inf). A value past
 * MAX_DURATION_MS is PARSE_TOO_LARGE with *out_ms set to MAX_DURATION_MS. */
enum parse_result parse_duration(const char *s, uint64_t *out_ms);
/* parse_duration for OPTION's ARG: a usage error when invalid; too_large
 * where it is past the library's clock (0 for a timeout: no limit). */
void duration_option(const char *arg, const char *option, uint64_t *out_ms,
                     uint64_t too_large);
/* GNU timeout's DURATION: a floating-point number as strtod reads it, not
 * negative, with an optional s, m, h or d. Seconds in *out. */
bool parse_gnu_duration(const char *s, double *out);
/* Seconds to whole milliseconds, rounded up; a positive value below one
 * millisecond is one. PARSE_TOO_LARGE (out: MAX_DURATION_MS) past it. */
enum parse_result seconds_to_ms(double seconds, uint64_t *out_ms);
enum parse_result parse_bytes(const char *s, uint64_t *out);
void format_duration(char *out, size_t size, uint64_t ms);

/* ---- Signals (signals.c) ------------------------------------------------- */

/* The handlers run on the main thread (libsup's threads block every signal).
 * Each one also writes a byte to the wake pipe: the main loop sleeps in
 * poll() on it, never in a call a signal could leave blocked. */
extern _Atomic(sup_proc *) g_proc;
extern atomic_int g_signal_count;
extern atomic_int g_first_signal;
extern atomic_bool g_child_changed; /* SIGCHLD: the command stopped or went on */
extern atomic_bool g_tstp;          /* SIGTSTP to sup-run itself */
extern atomic_int g_cont_count;     /* SIGCONTs received */
extern atomic_bool g_winch;         /* --pty: sup-run's terminal changed size */
extern atomic_bool g_alarm;         /* SIGALRM: ended as at the max runtime */
extern atomic_bool g_timed_out;     /* sup-timeout: its own timer went off */
extern bool g_pty;                  /* --pty: the command has a terminal of its own */
extern int g_wake[2];

/* Before anything changes them: the signals the caller left ignored. */
void note_caller_signals(void);
void install_signal_handlers(const struct options *o);
/* The spec's "reset_signals" for o->keep_ignored_signals, as a JSON array. */
void append_reset_signals(struct strbuf *sb, const struct options *o);
void drain_wake_pipe(void);
/* sup-timeout: its timer, SIGALRM after `seconds`; 0 or too far (past
 * 1e9 s) disarms it. */
void start_timer(double seconds);
void publish_proc(sup_proc *p);
/* A second SIGINT, SIGTERM, SIGHUP or SIGQUIT to sup-run: it no longer
 * waits for a reader that does not read. */
bool giving_up(void);

/* ---- The terminal and job control (terminal.c) --------------------------- */

bool own_window_size(struct winsize *size);
bool terminal_foreground_is(pid_t pgrp);
void take_terminal_back(pid_t from);
void handle_job_control(sup_proc *p, int *conts_seen);

/* ---- Passing output through (forward.c) ---------------------------------- */

int write_all(int fd, const char *buf, size_t len);
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* passthrough[i]: stdout (0) or stderr (1) is a "pipe" that sup-run
 * writes out; the others are only waited for. */
int forward_output(sup_proc *p, const bool passthrough[2]);

#endif
