/*
 * The main flow: the spec from the options, the spawn, waiting while the
 * output passes through, and the exit status, as sup-run or as GNU timeout
 * gives it.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sup-run.h"

enum frontend g_frontend = FRONTEND_RUN;
const char *g_progname = "sup-run";

/* ---- The spec ------------------------------------------------------------ */

static char *build_spec(const struct options *o, bool tty_foreground)
{
  struct strbuf sb = {0};
  sb_puts(&sb, "{\"argv\": [");
  for (char **a = o->argv; *a; a++) {
    if (a != o->argv)
      sb_puts(&sb, ", ");
    sb_json_string(&sb, *a);
  }
  sb_puts(&sb, "]");
  if (o->pty) {
    /* The new terminal starts at the size of sup-run's own, if it has one. */
    struct winsize size;
    if (own_window_size(&size))
      sb_printf(&sb, ", \"pty\": {\"rows\": %u, \"cols\": %u}", size.ws_row, size.ws_col);
    else
      sb_puts(&sb, ", \"pty\": true");
  } else {
    sb_puts(&sb, ", \"stdin\": ");
    append_routing(&sb, o->confine.stdin_mode ? o->confine.stdin_mode : "inherit");
  }
  sb_printf(&sb, ", \"idle_timeout_ms\": %" PRIu64, o->idle_timeout_ms);
  sb_printf(&sb, ", \"first_output_timeout_ms\": %" PRIu64, o->first_output_timeout_ms);
  if (!o->pty) {
    sb_puts(&sb, ", \"stdout\": ");
    append_routing(&sb, o->stdout_mode);
    sb_puts(&sb, ", \"stderr\": ");
    append_routing(&sb, o->stderr_mode);
  }
  if (o->env_clear)
    sb_puts(&sb, ", \"env_clear\": true");
  sb_printf(&sb, ", \"max_runtime_ms\": %" PRIu64, o->max_runtime_ms);
  sb_printf(&sb, ", \"grace_ms\": %" PRIu64, o->grace_ms);
  sb_printf(&sb, ", \"interrupt_signal\": %d", o->interrupt_signal);
  sb_printf(&sb, ", \"on_timeout\": \"%s\"", o->kill_on_timeout ? "kill" : "interrupt");
  if (o->max_output_none)
    sb_puts(&sb, ", \"max_output_bytes\": null");
  else
    sb_printf(&sb, ", \"max_output_bytes\": %" PRIu64, o->max_output_bytes);
  /* Backpressure is for the streams written out here; a "tee" stream,
   * which libsup copies itself and nobody reads, would be held back. */
  bool tee = strcmp(o->stdout_mode, "tee") == 0 || strcmp(o->stderr_mode, "tee") == 0;
  sb_printf(&sb, ", \"backpressure_bytes\": %d", tee ? 0 : BACKPRESSURE_BYTES);
  sb_printf(&sb, ", \"contain\": \"%s\"", o->contain);
  if (tty_foreground)
    sb_puts(&sb, ", \"tty_foreground\": true");
  if (o->keep_ignored_signals) {
    sb_puts(&sb, ", \"keep_ignored_signals\": true, \"reset_signals\": ");
    append_reset_signals(&sb, o);
  }
  append_confine_spec(&sb, o);
  sb_puts(&sb, "}");
  return sb.data;
}

/* ---- Result and exit status --------------------------------------------- */

static void describe_signals(struct strbuf *sb, const char *result_json)
{
  cJSON *root = result_json ? cJSON_Parse(result_json) : NULL;
  const cJSON *sent = cJSON_GetObjectItemCaseSensitive(root, "signals_sent");
  int count = 0;
  const cJSON *entry;
  cJSON_ArrayForEach(entry, sent) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(entry, "signal");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(entry, "at_ms");
    if (!cJSON_IsString(name) || !cJSON_IsNumber(at))
      continue;
    sb_puts(sb, count++ == 0 ? "sent " : ", ");
    sb_puts(sb, name->valuestring);
    sb_printf(sb, " at %.1fs", at->valuedouble / 1000.0);
  }
  if (root == NULL)
    sb_puts(sb, "signals sent unknown");
  else if (count == 0)
    sb_puts(sb, "sent no signal");
  cJSON_Delete(root);
}

static void print_timeout_summary(sup_proc *p, const struct options *o, int outcome,
                                  int status)
{
  char limit[48];
  struct strbuf sb = {0};
  int phase = sup_result_phase(p);
  if (outcome == SUP_OUTCOME_IDLE_TIMEOUT && phase == SUP_PHASE_INPUT &&
      o->confine.tty_stop_timeout_ms > 0 && o->confine.input_wait_timeout_ms == 0) {
    format_duration(limit, sizeof limit, o->confine.tty_stop_timeout_ms);
    sb_printf(&sb, "%s: tty stop timeout: stopped on the terminal, waiting for input, for %s; ",
              g_progname, limit);
  } else if (outcome == SUP_OUTCOME_IDLE_TIMEOUT && phase == SUP_PHASE_INPUT &&
             o->confine.tty_stop_timeout_ms > 0) {
    /* Both limits: the result does not say which one ran out. */
    char stop_limit[48];
    format_duration(limit, sizeof limit, o->confine.input_wait_timeout_ms);
    format_duration(stop_limit, sizeof stop_limit, o->confine.tty_stop_timeout_ms);
    sb_printf(&sb, "%s: input wait timeout: waiting for input for %s, or stopped on the terminal for %s; ",
              g_progname, limit, stop_limit);
  } else if (outcome == SUP_OUTCOME_IDLE_TIMEOUT && phase == SUP_PHASE_INPUT) {
    format_duration(limit, sizeof limit, o->confine.input_wait_timeout_ms);
    sb_printf(&sb, "%s: input wait timeout: waiting for input for %s; ", g_progname, limit);
  } else if (outcome == SUP_OUTCOME_IDLE_TIMEOUT && phase == SUP_PHASE_FIRST_OUTPUT) {
    format_duration(limit, sizeof limit, o->first_output_timeout_ms);
    sb_printf(&sb, "%s: first output timeout: no output within %s; ", g_progname, limit);
  } else if (outcome == SUP_OUTCOME_IDLE_TIMEOUT) {
    format_duration(limit, sizeof limit, o->idle_timeout_ms);
    sb_printf(&sb, "%s: idle timeout: no output for %s; ", g_progname, limit);
  } else if (atomic_load(&g_alarm)) {
    sb_printf(&sb, "%s: SIGALRM: ended as at its max runtime; ", g_progname);
  } else {
    format_duration(limit, sizeof limit, o->max_runtime_ms);
    sb_printf(&sb, "%s: max runtime: still running after %s; ", g_progname, limit);
  }
  describe_signals(&sb, sup_result(p));
  sb_printf(&sb, "; exit %d\n", status);
  write_all(STDERR_FILENO, sb.data, sb.len);
  free(sb.data);
}

/* A --limit that ended COMMAND: the result's "limit" (the outcome itself
 * is the signal or exit status the limit caused). */
static void print_limit_summary(sup_proc *p, int status)
{
  cJSON *root = sup_result(p) ? cJSON_Parse(sup_result(p)) : NULL;
  const cJSON *limit = cJSON_GetObjectItemCaseSensitive(root, "limit");
  if (cJSON_IsString(limit))
    say("%s: limit %s: the command reached its --limit; exit %d\n", g_progname,
        limit->valuestring, status);
  cJSON_Delete(root);
}

/* The exit status for a final result. Never a negative library code: what
 * sup-run cannot account for is its own failure, 125, with a message. */
static int exit_status(sup_proc *p, int outcome, int write_error)
{
  int own_signal = atomic_load(&g_first_signal);
  if (own_signal != 0 &&
      (outcome == SUP_OUTCOME_INTERRUPTED || outcome == SUP_OUTCOME_ABORTED))
    return 128 + own_signal;
  if (write_error == EPIPE)
    return EXIT_EPIPE;
  if (write_error != 0)
    return EXIT_SUPRUN;
  int code;
  switch (outcome) {
  case SUP_OUTCOME_EXITED:
  case SUP_OUTCOME_SIGNALED:
    code = outcome == SUP_OUTCOME_EXITED ? sup_result_exit_code(p)
                                         : 128 + sup_result_term_signal(p);
    if (code >= 0 && code <= 255)
      return code;
    /* Only when something else reaped the command (sup-run never does). */
    say("%s: the command's exit status was lost: %s\n", g_progname,
        sup_result_status_lost(p) == 1 ? "another waiter reaped it"
                                       : sup_strerror(code));
    return EXIT_SUPRUN;
  case SUP_OUTCOME_IDLE_TIMEOUT:
  case SUP_OUTCOME_MAX_RUNTIME:
    return EXIT_TIMEDOUT;
  default:
    if (outcome < 0) {
      say("%s: no result for the command: %s\n", g_progname, sup_strerror(outcome));
      return EXIT_SUPRUN;
    }
    /* Interrupted or aborted with no signal and no write error: nobody
     * but sup-run calls sup_interrupt or sup_abort on this handle. */
    say("%s: the command ended as '%s' for no reason sup-run knows\n", g_progname,
        sup_outcome_name(outcome) ? sup_outcome_name(outcome) : "?");
    return EXIT_SUPRUN;
  }
}

static int write_json_result(sup_proc *p, int fd, const char *path)
{
  const char *json = sup_result(p);
  int err = json == NULL ? ENOMEM : write_all(fd, json, strlen(json));
  if (err == 0)
    err = write_all(fd, "\n", 1);
  if (close(fd) != 0 && err == 0 && errno != EINTR)
    err = errno;
  if (err != 0) {
    say("%s: --json: cannot write '%s': %s\n", g_progname, path, strerror(err));
    return -1;
  }
  return 0;
}

/* ---- Main --------------------------------------------------------------- */

static int spawn_failure_status(int rc)
{
  switch (rc) {
  case SUP_ENOENT:
    return EXIT_NOTFOUND;
  case SUP_EACCES:
  case SUP_ENOEXEC:
  case SUP_EISDIR:
  case SUP_ENOTDIR:
    return EXIT_CANNOT_INVOKE;
  default:
    return EXIT_SUPRUN;
  }
}

/* A descriptor 0, 1 or 2 that the caller closed would be the next one
 * opened: the --json file would receive the command's output. A closed one
 * is taken as /dev/null, as libsup takes a closed stdin, so the command's
 * status is what counts. */
static void occupy_standard_fds(void)
{
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
      continue;
    int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null != fd) {
      /* The lowest free number is fd itself: only an open failure lands
       * here, and there is no stderr to say so if fd is 2. */
      exit(EXIT_SUPRUN);
    }
  }
}

/* ---- sup-timeout's end, as GNU timeout's -------------------------------- */

/* -v: GNU's "sending signal TERM to command 'sleep'" for each signal sent,
 * from the result's signals_sent (relayed ones included), in time order.
 * The SIGCONT that follows each is not named, as GNU does not name it. */
static void print_verbose(sup_proc *p, const struct options *o)
{
  cJSON *root = cJSON_Parse(sup_result(p) ? sup_result(p) : "null");
  const cJSON *entry;
  cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(root, "signals_sent")) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(entry, "signal");
    if (!cJSON_IsString(name))
      continue;
    const char *shown = name->valuestring;
    if (strncmp(shown, "SIG", 3) == 0)
      shown += 3;
    bool own_cont = o->signal_zero || o->interrupt_signal == SIGCONT;
    if (strcmp(shown, "CONT") == 0 && !own_cont)
      continue;
    if (strcmp(shown, "CONT") == 0 && o->signal_zero)
      shown = "EXIT"; /* GNU's name for signal 0 */
    say("%s: sending signal %s to command %s\n", g_progname, shown, gnu_quote(o->argv[0]));
  }
  cJSON_Delete(root);
}

/* GNU timeout's exit status. *raise_sig: a signal to die of instead, as
 * GNU timeout dies of the signal that killed the command (unless it timed
 * out) and of the SIGKILL it sent its own group. */
static int timeout_exit_status(sup_proc *p, const struct options *o, int outcome, int *raise_sig)
{
  *raise_sig = 0;
  if (outcome < 0) {
    say("%s: no result for the command: %s\n", g_progname, sup_strerror(outcome));
    return EXIT_SUPRUN;
  }
  bool timed_out = atomic_load(&g_timed_out) || outcome == SUP_OUTCOME_MAX_RUNTIME ||
                   outcome == SUP_OUTCOME_IDLE_TIMEOUT;
  bool preserve = o->preserve_status;
  int status;
  int code = sup_result_exit_code(p);
  int sig = sup_result_term_signal(p);
  if (code >= 0) {
    status = code;
  } else if (sig > 0) {
    if (!timed_out)
      *raise_sig = sig;
    /* KILL was sent: 137, so that the user can tell. */
    if (timed_out && sig == SIGKILL)
      preserve = true;
    status = 128 + sig;
  } else {
    say("%s: the command's exit status was lost: another waiter reaped it\n", g_progname);
    return EXIT_SUPRUN;
  }
  if (timed_out && !preserve)
    status = EXIT_TIMEDOUT;
  /* GNU timeout sends the SIGKILL to its own process group too, and dies
   * of it, unless --foreground. */
  if (!o->foreground && timed_out && sup_result_forced_kill(p) == 1)
    *raise_sig = SIGKILL;
  return status;
}

/* Dies of sig as GNU timeout does, without a core of its own. */
static void die_of(int sig)
{
  prctl(PR_SET_DUMPABLE, 0);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
}

/* GNU's message for a command that cannot run: execvp's errno (a directory
 * is EACCES there). */
static void say_cannot_run(const struct options *o, int rc, const char *detail)
{
  if (g_frontend == FRONTEND_RUN) {
    say("%s: cannot run '%s': %s\n", g_progname, o->argv[0], detail[0] ? detail : sup_strerror(rc));
    return;
  }
  int err = rc == SUP_EISDIR ? EACCES : -rc;
  if (rc > -4096 && rc < 0 && (rc == SUP_ENOENT || rc == SUP_EACCES || rc == SUP_ENOEXEC ||
                               rc == SUP_EISDIR || rc == SUP_ENOTDIR))
    say("%s: failed to run command %s: %s\n", g_progname, gnu_quote(o->argv[0]), strerror(err));
  else
    say("%s: failed to run command %s: %s\n", g_progname, gnu_quote(o->argv[0]),
        detail[0] ? detail : sup_strerror(rc));
}

/* ---- Main ---------------------------------------------------------------- */

static int run_command(struct options opts, enum frontend frontend);

int supervise(int argc, char **argv, enum frontend frontend)
{
  g_frontend = frontend;
  /* The caller's ignored signals, before anything here changes one. */
  note_caller_signals();
  if (frontend == FRONTEND_TIMEOUT) {
    /* GNU timeout's messages: its argv[0], quotes and errno texts of the
     * user's locale. */
    g_progname = argv[0] != NULL ? argv[0] : "sup-timeout";
    setlocale(LC_ALL, "");
  }
  occupy_standard_fds();

  struct options opts;
  if (frontend == FRONTEND_TIMEOUT)
    parse_timeout_options(argc, argv, &opts);
  else
    parse_options(argc, argv, &opts);
  int status = run_command(opts, frontend);
  confine_release(&opts.confine);
  return status;
}

/* Everything after the command line: opts is the caller's, copied (it
 * releases what the options hold). */
static int run_command(struct options opts, enum frontend frontend)
{
  int json_fd = -1;
  if (opts.json_path != NULL) {
    json_fd = open(opts.json_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (json_fd < 0) {
      fprintf(stderr, "%s: --json: cannot open '%s': %s\n", g_progname, opts.json_path,
              strerror(errno));
      return EXIT_SUPRUN;
    }
  }

  g_pty = opts.pty;
  install_signal_handlers(&opts);

  /* With --pty the command has a terminal of its own, not sup-run's.
   * sup-timeout gives the command the terminal where GNU timeout's would
   * have it: with --foreground, or when it leads its own group (run from
   * a shell prompt; elsewhere GNU's setpgid leaves it in the background). */
  bool tty_foreground = !opts.pty && terminal_foreground_is(getpgrp()) &&
                        (opts.confine.stdin_mode == NULL ||
                         strcmp(opts.confine.stdin_mode, "inherit") == 0);
  if (frontend == FRONTEND_TIMEOUT && !opts.foreground && getpgrp() != getpid())
    tty_foreground = false;
  char *spec = build_spec(&opts, tty_foreground);

  /* A signal before the spawn means the command is not wanted at all. */
  if (atomic_load(&g_signal_count) > 0) {
    free(spec);
    return 128 + atomic_load(&g_first_signal);
  }

  /* GNU's timer, armed before the command can run: a signal relayed as
   * soon as it starts, with -k, re-arms it for the kill (on_relay) and
   * must not be overridden here. SIGALRM before the handle is published
   * is acted on when it is (publish_proc). */
  if (frontend == FRONTEND_TIMEOUT)
    start_timer(opts.timeout_seconds);
  sup_proc *p = NULL;
  char detail[512] = "";
  int rc = sup_spawn_ex(spec, &p, detail, sizeof detail);
  free(spec);
  if (rc < 0) {
    /* The command's group may have taken the terminal before its exec (or
     * chdir) failed: nothing of that group is left to hand it back. */
    if (tty_foreground && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp())
      tcsetpgrp(STDIN_FILENO, getpgrp());
    say_cannot_run(&opts, rc, detail);
    return spawn_failure_status(rc);
  }
  publish_proc(p);

  const bool passthrough[2] = {strcmp(opts.stdout_mode, "pipe") == 0,
                               strcmp(opts.stderr_mode, "pipe") == 0};
  int write_error = forward_output(p, passthrough);
  if (frontend == FRONTEND_TIMEOUT)
    start_timer(0);
  /* libsup hands the terminal back when it gave it at the spawn; sup-run
   * may have given it later (after 'fg'). */
  take_terminal_back(sup_pid(p));
  int outcome = sup_result_outcome(p);
  int raise_sig = 0;
  int status;
  if (frontend == FRONTEND_TIMEOUT) {
    if (opts.verbose)
      print_verbose(p, &opts);
    status = timeout_exit_status(p, &opts, outcome, &raise_sig);
  } else {
    status = exit_status(p, outcome, write_error);
  }

  if (write_error != 0 && write_error != EPIPE)
    say("%s: cannot pass the command's output through: %s\n", g_progname, strerror(write_error));
  if (json_fd >= 0 && write_json_result(p, json_fd, opts.json_path) != 0) {
    status = EXIT_SUPRUN;
    raise_sig = 0;
  }
  if (frontend == FRONTEND_RUN && !opts.quiet &&
      (outcome == SUP_OUTCOME_IDLE_TIMEOUT || outcome == SUP_OUTCOME_MAX_RUNTIME))
    print_timeout_summary(p, &opts, outcome, status);
  else if (frontend == FRONTEND_RUN && !opts.quiet)
    print_limit_summary(p, status);

  /* The handlers must not touch the handle once it is being released. */
  atomic_store(&g_proc, NULL);
  sup_release(p);
  if (raise_sig != 0)
    die_of(raise_sig);
  return status;
}
