/*
 * sup-run: run a command under libsup's supervision from the shell.
 *
 * The command's output passes through live while libsup captures it; idle and
 * max-runtime deadlines, the interrupt-then-kill escalation and the cleanup of
 * the command's process group are the library's. This file adds what a
 * command-line tool needs around it: options, forwarding, signals, exit codes.
 */
#define _GNU_SOURCE /* getopt_long */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

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

#define PROGNAME "sup-run"

/* ---- Options ------------------------------------------------------------ */

struct options {
  uint64_t idle_timeout_ms;
  uint64_t first_output_timeout_ms;
  uint64_t input_wait_timeout_ms;
  uint64_t max_runtime_ms;
  uint64_t grace_ms;
  int interrupt_signal;
  bool kill_on_timeout;
  uint64_t max_output_bytes;
  const char *json_path;
  const char *contain; /* "group", "cgroup" or "auto" */
  bool quiet;
  const char *stdout_mode; /* "pipe", "inherit" or "null" */
  const char *stderr_mode; /* the same, or "stdout" (--merge) */
  bool env_clear;
  bool pty;
  char **argv; /* the command, NULL-terminated */
};

static _Noreturn void usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static _Noreturn void usage_error(const char *fmt, ...)
{
  va_list ap;
  fputs(PROGNAME ": ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\nTry '" PROGNAME " --help' for more information.\n", stderr);
  exit(EXIT_SUPRUN);
}

enum parse_result { PARSE_OK, PARSE_INVALID, PARSE_TOO_LARGE };

/* Digits into *n; on overflow *n saturates and the caller learns from
 * *too_large. Returns the first byte that is not a digit. */
static const char *parse_digits(const char *p, uint64_t *n, bool *too_large)
{
  for (*n = 0; isdigit((unsigned char)*p); p++) {
    if (*n > (UINT64_MAX - 9) / 10)
      *too_large = true;
    else
      *n = *n * 10 + (uint64_t)(*p - '0');
  }
  return p;
}

/* DURATION: digits with an optional fraction and unit. Parsed by hand rather
 * than with strtod so that "inf", "1e3", " 5", "0x10" and locale decimal
 * commas are rejected, and so that the conversion to milliseconds is exact:
 * the fraction is multiplied digit by digit and rounded up. At most
 * MAX_DURATION_MS. */
static enum parse_result parse_duration(const char *s, uint64_t *out_ms)
{
  static const struct {
    const char *suffix;
    uint64_t ms;
  } units[] = {{"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
  bool too_large = false;
  uint64_t whole;
  const char *p = parse_digits(s, &whole, &too_large);
  bool any_digit = p != s;
  const char *frac = p;
  size_t nfrac = 0;
  if (*p == '.') {
    frac = ++p;
    for (; isdigit((unsigned char)*p); p++)
      nfrac++;
    any_digit = any_digit || nfrac > 0;
  }
  if (!any_digit)
    return PARSE_INVALID;

  uint64_t unit = 0;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(p, units[i].suffix) == 0)
      unit = units[i].ms;
  if (unit == 0)
    return PARSE_INVALID;
  if (too_large || whole > MAX_DURATION_MS / unit)
    return PARSE_TOO_LARGE;

  /* 0.frac * unit by long multiplication from the last digit: `carry` ends as
   * the whole milliseconds, `remainder` says whether a part of one is left. */
  uint64_t carry = 0;
  bool remainder = false;
  for (size_t i = nfrac; i-- > 0;) {
    uint64_t t = (uint64_t)(frac[i] - '0') * unit + carry;
    remainder = remainder || t % 10 != 0;
    carry = t / 10;
  }
  uint64_t ms = whole * unit + carry + (remainder ? 1 : 0);
  if (ms > MAX_DURATION_MS)
    return PARSE_TOO_LARGE;
  *out_ms = ms;
  return PARSE_OK;
}

/* BYTES: digits with an optional binary unit. At most MAX_BYTES. */
static enum parse_result parse_bytes(const char *s, uint64_t *out)
{
  static const struct {
    const char *suffix;
    uint64_t mult;
  } units[] = {{"", 1},
               {"K", UINT64_C(1) << 10}, {"KiB", UINT64_C(1) << 10},
               {"M", UINT64_C(1) << 20}, {"MiB", UINT64_C(1) << 20},
               {"G", UINT64_C(1) << 30}, {"GiB", UINT64_C(1) << 30}};
  bool too_large = false;
  uint64_t n;
  const char *p = parse_digits(s, &n, &too_large);
  if (p == s)
    return PARSE_INVALID;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(p, units[i].suffix) == 0) {
      if (too_large || n > MAX_BYTES / units[i].mult)
        return PARSE_TOO_LARGE;
      *out = n * units[i].mult;
      return PARSE_OK;
    }
  }
  return PARSE_INVALID;
}

/* SIGNAL: a name with or without "SIG", in any case, or a number, parsed as
 * the library parses the spec's interrupt_signal. */
static bool parse_signal(const char *s, int *out)
{
  int sig = sup_signal_parse(s);
  if (sig < 0)
    return false;
  *out = sig;
  return true;
}

static void print_help(void)
{
  /* Pieces, each below the 4095 characters ISO C promises for a literal. */
  static const char *const help[] = {
"Usage: " PROGNAME " [OPTION]... [--] COMMAND [ARG]...\n"
"Run COMMAND under supervision: pass its output through, end it when it falls\n"
"silent or runs too long, and leave nothing it started running.\n"
"\n"
"COMMAND is looked up in PATH unless it contains a '/'. Its standard output\n"
"and standard error pass through to sup-run's own, live and byte for byte,\n"
"while they are also captured for the result (see --json), unless --stdout,\n"
"--stderr or --merge route them otherwise. Its standard input is sup-run's\n"
"(with --pty, see TERMINAL). It runs in a process group of its own; whatever\n"
"it leaves running in that group when it ends is killed (with --contain=cgroup,\n"
"whatever it leaves running anywhere). If sup-run itself is killed, COMMAND\n"
"and its group receive SIGKILL (with --contain=cgroup, everything it\n"
"started).\n"
"\n"
"Options:\n"
"      --idle-timeout=DURATION  end COMMAND after DURATION with no output on\n"
"                               its stdout or stderr (default 0: off); with\n"
"                               --first-output-timeout, counted from its first\n"
"                               output\n"
"      --first-output-timeout=DURATION  end COMMAND if it has printed nothing\n"
"                               on its stdout or stderr DURATION after it\n"
"                               started (default 0: off)\n"
"      --input-wait-timeout=DURATION  end COMMAND once it has waited DURATION\n"
"                               for input it cannot get: reading its stdin\n"
"                               with nothing there, or stopped by SIGTTIN or\n"
"                               SIGTTOU (default 0: off)\n"
"      --max-runtime=DURATION   end COMMAND DURATION after it started, whatever\n"
"                               it prints (default 0: off)\n"
"      --grace=DURATION         time between the interrupt signal and SIGKILL\n"
"                               (default 5s)\n"
"      --signal=SIGNAL          the interrupt signal: a name with or without\n"
"                               SIG (TERM, SIGINT, hup) or a number (2)\n"
"                               (default TERM)\n"
"      --on-timeout=MODE        how a timeout ends COMMAND: 'interrupt' sends\n"
"                               the interrupt signal, then SIGKILL after the\n"
"                               grace period (default); 'kill' sends SIGKILL at\n"
"                               once\n"
"      --max-output=BYTES       bytes of each stream kept in the result; past\n"
"                               it the first half and the newest half are kept.\n"
"                               Suffixes K, M, G (or KiB, MiB, GiB) multiply by\n"
"                               1024, 1024^2, 1024^3 (default 16M). It does not\n"
"                               limit what passes through.\n"
"      --stdout=MODE            where COMMAND's standard output goes: 'pipe'\n"
"                               passes it through sup-run, captured (default);\n"
"                               'inherit' gives COMMAND sup-run's own standard\n"
"                               output (not captured, not counted as output\n"
"                               by --idle-timeout); 'null' discards it\n"
"      --stderr=MODE            the same for standard error\n"
"      --merge                  COMMAND's standard error goes where its\n"
"                               standard output goes, in the order written\n"
"                               (as 2>&1); not with --stderr\n"
"      --env-clear              start COMMAND with an empty environment;\n"
"                               COMMAND is then looked up in /bin:/usr/bin\n"
"      --contain=MODE           what is ended with COMMAND: 'group' (default)\n"
"                               its process group; 'cgroup' every process it\n"
"                               started, in a cgroup v2 of its own (setsid'd\n"
"                               and double-forked ones too; an error where no\n"
"                               writable cgroup v2 hierarchy exists); 'auto'\n"
"                               cgroup where possible, else group\n"
"      --json=FILE              when done, write the result as JSON to FILE;\n"
"                               FILE is created or truncated before COMMAND\n"
"                               starts, and left empty if it cannot start\n"
"      --pty                    run COMMAND on a new pseudo-terminal of its own\n"
"                               (see TERMINAL)\n"
"  -q, --quiet                  print no summary line after a timeout\n"
"  -h, --help                   print this help and exit\n"
"      --version                print the version of sup-run and exit\n"
"\n"
"An option's value may follow it as the next argument or after '='. Options\n"
"end at COMMAND or at '--'.\n"
"\n",
"DURATION\n"
"  A non-negative number, decimals allowed, with an optional unit: ms\n"
"  (milliseconds), s (seconds, the default), m (minutes) or h (hours), as in\n"
"  250ms, 1.5, 1.5s, 2m. It is rounded up to a whole millisecond. For\n"
"  --idle-timeout, --first-output-timeout, --input-wait-timeout and\n"
"  --max-runtime, 0 means off.\n"
"  At most 1000000000s (about 31 years); BYTES at most 1024G.\n"
"\n",
"OUTPUT\n"
"  After ending COMMAND for a timeout, sup-run prints one line on its standard\n"
"  error saying which timeout, after how long, which signals it sent and when,\n"
"  and its exit status (unless --quiet), e.g.\n"
"    " PROGNAME ": idle timeout: no output for 2s; sent SIGTERM at 2.0s, SIGKILL at 7.0s; exit 124\n"
"  The result written by --json is libsup's: outcome, exit_code, term_signal,\n"
"  forced_kill, pid, duration_ms, for each stream the bytes written and the\n"
"  text captured, signals_sent, rusage, and the containment: contained\n"
"  (group or cgroup), and with cgroup leftovers_ended (processes still\n"
"  running when COMMAND ended, then killed) and tree_cpu (the CPU of\n"
"  everything COMMAND started).\n"
"\n",
"EXIT STATUS\n"
"  N      COMMAND exited by itself with status N\n"
"  124    COMMAND was ended by --idle-timeout, --first-output-timeout,\n"
"         --input-wait-timeout or --max-runtime\n"
"  125    sup-run failed: a bad option or value (the message names it), no\n"
"         COMMAND, FILE of --json cannot be written, COMMAND could not be\n"
"         started for a reason other than those of 126 and 127, or writing\n"
"         the output failed other than with EPIPE\n"
"  126    COMMAND was found but cannot be run: permission denied, not an\n"
"         executable format, a directory, or a path component is not a\n"
"         directory\n"
"  127    COMMAND was not found\n"
"  128+N  COMMAND died from signal N that sup-run did not send, or sup-run\n"
"         received signal N and ended COMMAND because of it (129 SIGHUP, 130\n"
"         SIGINT, 143 SIGTERM)\n"
"  141    writing to sup-run's standard output or error failed with EPIPE,\n"
"         the reader having gone away (as in '" PROGNAME " -- yes | head -1'):\n"
"         sup-run stopped passing that stream through, interrupted COMMAND\n"
"         and exits as a pipeline writer killed by SIGPIPE would (128+13)\n"
"\n",
"TERMINAL (--pty)\n"
"  COMMAND runs on a new pseudo-terminal, as in a terminal window of its own:\n"
"  its standard input, output and error are that terminal, which is the\n"
"  controlling terminal of a new session, so programs that check isatty()\n"
"  print colour, progress bars and prompts. Its size is that of sup-run's\n"
"  own terminal (24x80 without one) and follows it when it changes.\n"
"  Everything COMMAND writes there, its standard error included, comes out on\n"
"  sup-run's standard output, as a terminal shows it: with \"\\r\\n\" line\n"
"  endings and the echo of what was typed. sup-run copies its standard input\n"
"  to the terminal as it arrives and, at its end, sends the terminal's end of\n"
"  input (Ctrl-D). sup-run's own terminal keeps its modes (it is not put in\n"
"  raw mode): a typed line goes to COMMAND when Enter is pressed, and Ctrl-C,\n"
"  Ctrl-Z and Ctrl-D act on sup-run as they would on any program: Ctrl-C\n"
"  interrupts COMMAND (see SIGNALS), Ctrl-Z stops sup-run alone (COMMAND runs\n"
"  on until 1 MiB of its output waits), Ctrl-D ends COMMAND's input. Run in\n"
"  the background, sup-run --pty stops when it reads its terminal, as any\n"
"  program does; give it </dev/null there.\n"
"\n",
"SIGNALS\n"
"  The first SIGINT, SIGTERM or SIGHUP that sup-run receives interrupts\n"
"  COMMAND: the interrupt signal and SIGCONT go to its process group, and\n"
"  SIGKILL follows after the grace period if it is still running. A second one\n"
"  sends SIGKILL at once, and sup-run stops waiting for a reader of its\n"
"  output that no longer reads. A signal that sup-run inherits as ignored\n"
"  (nohup's SIGHUP, SIGINT in a background job of a non-interactive shell)\n"
"  stays ignored. sup-run ignores SIGPIPE and reports EPIPE as 141. An\n"
"  inherited SIGCHLD disposition of SIG_IGN is replaced, so that COMMAND's\n"
"  exit status is not lost; a closed standard input, output or error is\n"
"  taken as /dev/null.\n"
"\n"
"  Without --pty, when standard input is a terminal and sup-run is in the\n"
"  terminal's foreground process group, COMMAND's process group is made the\n"
"  foreground group while it runs, so that COMMAND can read the terminal\n"
"  without being stopped. Keys such as Ctrl-C and Ctrl-\\ then send their\n"
"  signals straight to COMMAND, not to sup-run (like 'timeout --foreground');\n"
"  what COMMAND does with them decides the exit status. The terminal returns\n"
"  to sup-run's group when COMMAND ends, and when it could not start.\n"
"\n"
"  Without --pty, job control keeps working: when COMMAND stops on a terminal\n"
"  stop signal (Ctrl-Z, or reading the terminal in the background), sup-run\n"
"  takes the terminal back and stops its own process group with the same\n"
"  signal, so the shell sees the job stopped; 'fg' or 'bg' continues sup-run,\n"
"  which gives COMMAND the terminal again (if sup-run's group has it) and\n"
"  continues COMMAND. A SIGTSTP sent to sup-run itself goes to COMMAND first.\n"
"\n",
"EXAMPLES\n"
"  " PROGNAME " --idle-timeout=10m -- make check\n"
"      fail a CI step that prints nothing for ten minutes\n"
"  " PROGNAME " --max-runtime=1h --signal=INT --grace=30s -- ./nightly-job\n"
"      SIGINT after an hour, SIGKILL 30 seconds later if it is still running\n"
"  " PROGNAME " -q --idle-timeout=500ms --on-timeout=kill --json=out.json -- ./probe\n"
"      kill a hung probe at once and keep its result for later\n"
"  " PROGNAME " --contain=auto --max-runtime=20m -- npm test\n"
"      end the test servers npm test leaves running, even daemonized ones\n"
"  " PROGNAME " --pty --idle-timeout=5m -- ./configure\n"
"      run it as at a terminal (colour, prompts answered from stdin), and\n"
"      end it after five silent minutes\n"
"  " PROGNAME " --max-output=1M --json=run.json -- ./chatty > full.log\n"
"      keep all of the output in full.log but only 1 MiB of each stream in\n"
"      run.json\n",
  };
  for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
    fputs(help[i], stdout);
}

static void print_version(void)
{
  int v = sup_version();
  printf("%s %d.%d.%d\n", PROGNAME, v / 10000, v / 100 % 100, v % 100);
}

/* getopt_long values of the long options: above any short option's
 * character, so that optopt tells which option an error is about. */
enum long_option {
  OPT_IDLE = 256,
  OPT_FIRST_OUTPUT,
  OPT_INPUT_WAIT,
  OPT_STDOUT,
  OPT_STDERR,
  OPT_MERGE,
  OPT_ENV_CLEAR,
  OPT_MAX_RUNTIME,
  OPT_GRACE,
  OPT_SIGNAL,
  OPT_ON_TIMEOUT,
  OPT_MAX_OUTPUT,
  OPT_JSON,
  OPT_CONTAIN,
  OPT_QUIET,
  OPT_PTY,
  OPT_HELP,
  OPT_VERSION
};

/* The canonical spelling of the option in optopt, so that the user sees
 * "--grace" even after typing "--gr". */
static const char *option_name(const struct option *longopts, int val)
{
  static char name[64];
  if (val < OPT_IDLE) {
    snprintf(name, sizeof name, "-%c", val);
    return name;
  }
  for (; longopts->name != NULL; longopts++)
    if (longopts->val == val)
      snprintf(name, sizeof name, "--%s", longopts->name);
  return name;
}

/* getopt_long reports an unknown and an ambiguous long option alike. */
static _Noreturn void bad_long_option(const struct option *longopts, const char *arg)
{
  if (strncmp(arg, "--", 2) != 0)
    usage_error("invalid option '%s'", arg);
  int len = (int)strcspn(arg + 2, "=");
  int matches = 0;
  for (; longopts->name != NULL; longopts++)
    if (strncmp(longopts->name, arg + 2, (size_t)len) == 0)
      matches++;
  if (matches > 1)
    usage_error("ambiguous option '--%.*s'", len, arg + 2);
  usage_error("unrecognized option '--%.*s'", len, arg + 2);
}

static void duration_option(const char *arg, const char *option, uint64_t *out_ms)
{
  switch (parse_duration(arg, out_ms)) {
  case PARSE_OK:
    return;
  case PARSE_INVALID:
    usage_error("%s: invalid duration '%s'", option, arg);
  case PARSE_TOO_LARGE:
    usage_error("%s: '%s' is too large (at most %" PRIu64 "s)", option, arg,
                MAX_DURATION_MS / 1000);
  }
}

static void parse_options(int argc, char **argv, struct options *o)
{
  static const struct option longopts[] = {
      {"idle-timeout", required_argument, NULL, OPT_IDLE},
      {"first-output-timeout", required_argument, NULL, OPT_FIRST_OUTPUT},
      {"input-wait-timeout", required_argument, NULL, OPT_INPUT_WAIT},
      {"stdout", required_argument, NULL, OPT_STDOUT},
      {"stderr", required_argument, NULL, OPT_STDERR},
      {"merge", no_argument, NULL, OPT_MERGE},
      {"env-clear", no_argument, NULL, OPT_ENV_CLEAR},
      {"max-runtime", required_argument, NULL, OPT_MAX_RUNTIME},
      {"grace", required_argument, NULL, OPT_GRACE},
      {"signal", required_argument, NULL, OPT_SIGNAL},
      {"on-timeout", required_argument, NULL, OPT_ON_TIMEOUT},
      {"max-output", required_argument, NULL, OPT_MAX_OUTPUT},
      {"json", required_argument, NULL, OPT_JSON},
      {"contain", required_argument, NULL, OPT_CONTAIN},
      {"quiet", no_argument, NULL, OPT_QUIET},
      {"pty", no_argument, NULL, OPT_PTY},
      {"help", no_argument, NULL, OPT_HELP},
      {"version", no_argument, NULL, OPT_VERSION},
      {NULL, 0, NULL, 0}};

  *o = (struct options){.grace_ms = 5000,
                        .interrupt_signal = SIGTERM,
                        .contain = "group",
                        .max_output_bytes = UINT64_C(16) << 20,
                        .stdout_mode = "pipe"};
  const char *stderr_mode = NULL;
  bool merge = false;
  int c;
  /* '+': options stop at COMMAND, so the command's own options stay its own;
   * ':': a missing value is reported here, naming the option. */
  while ((c = getopt_long(argc, argv, "+:qh", longopts, NULL)) != -1) {
    switch (c) {
    case OPT_IDLE:
      duration_option(optarg, "--idle-timeout", &o->idle_timeout_ms);
      break;
    case OPT_FIRST_OUTPUT:
      duration_option(optarg, "--first-output-timeout", &o->first_output_timeout_ms);
      break;
    case OPT_INPUT_WAIT:
      duration_option(optarg, "--input-wait-timeout", &o->input_wait_timeout_ms);
      break;
    case OPT_STDOUT:
    case OPT_STDERR: {
      const char *name = c == OPT_STDOUT ? "--stdout" : "--stderr";
      if (strcmp(optarg, "pipe") != 0 && strcmp(optarg, "inherit") != 0 &&
          strcmp(optarg, "null") != 0)
        usage_error("%s: invalid mode '%s' (expected 'pipe', 'inherit' or 'null')", name,
                    optarg);
      if (c == OPT_STDOUT)
        o->stdout_mode = optarg;
      else
        stderr_mode = optarg;
      break;
    }
    case OPT_MERGE:
      merge = true;
      break;
    case OPT_ENV_CLEAR:
      o->env_clear = true;
      break;
    case OPT_MAX_RUNTIME:
      duration_option(optarg, "--max-runtime", &o->max_runtime_ms);
      break;
    case OPT_GRACE:
      duration_option(optarg, "--grace", &o->grace_ms);
      break;
    case OPT_SIGNAL:
      if (!parse_signal(optarg, &o->interrupt_signal))
        usage_error("--signal: invalid signal '%s'", optarg);
      break;
    case OPT_ON_TIMEOUT:
      if (strcmp(optarg, "interrupt") == 0)
        o->kill_on_timeout = false;
      else if (strcmp(optarg, "kill") == 0)
        o->kill_on_timeout = true;
      else
        usage_error("--on-timeout: invalid mode '%s' (expected 'interrupt' or 'kill')",
                    optarg);
      break;
    case OPT_MAX_OUTPUT:
      switch (parse_bytes(optarg, &o->max_output_bytes)) {
      case PARSE_OK:
        break;
      case PARSE_INVALID:
        usage_error("--max-output: invalid byte count '%s'", optarg);
      case PARSE_TOO_LARGE:
        usage_error("--max-output: '%s' is too large (at most %" PRIu64 "G)", optarg,
                    MAX_BYTES >> 30);
      }
      break;
    case OPT_JSON:
      if (optarg[0] == '\0')
        usage_error("--json: empty file name");
      o->json_path = optarg;
      break;
    case OPT_CONTAIN:
      if (strcmp(optarg, "group") != 0 && strcmp(optarg, "cgroup") != 0 &&
          strcmp(optarg, "auto") != 0)
        usage_error("--contain: invalid mode '%s' (expected 'group', 'cgroup' or 'auto')",
                    optarg);
      o->contain = optarg;
      break;
    case 'q':
    case OPT_QUIET:
      o->quiet = true;
      break;
    case OPT_PTY:
      o->pty = true;
      break;
    case 'h':
    case OPT_HELP:
      print_help();
      exit(fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_SUPRUN);
    case OPT_VERSION:
      print_version();
      exit(fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_SUPRUN);
    case ':':
      usage_error("option '%s' requires a value", option_name(longopts, optopt));
    default:
      if (optopt >= OPT_IDLE)
        usage_error("option '%s' takes no value", option_name(longopts, optopt));
      if (optopt != 0)
        usage_error("invalid option '-%c'", optopt);
      bad_long_option(longopts, argv[optind - 1]);
    }
  }
  if (optind >= argc)
    usage_error("missing COMMAND");
  o->argv = argv + optind;
  if (merge && stderr_mode != NULL)
    usage_error("--merge and --stderr cannot be used together");
  /* With --pty both streams are the command's terminal, read as one. */
  if (o->pty && (merge || strcmp(o->stdout_mode, "pipe") != 0 ||
                 (stderr_mode != NULL && strcmp(stderr_mode, "pipe") != 0)))
    usage_error("--pty: the command's stdout and stderr are its terminal; "
                "--stdout, --stderr and --merge do not apply");
  o->stderr_mode = merge ? "stdout" : stderr_mode != NULL ? stderr_mode : "pipe";
  bool reads_any = strcmp(o->stdout_mode, "pipe") == 0 ||
                   (!merge && strcmp(o->stderr_mode, "pipe") == 0);
  if (!reads_any && o->idle_timeout_ms > 0)
    usage_error("--idle-timeout: neither stream passes through sup-run (--stdout or --stderr 'pipe')");
  if (!reads_any && o->first_output_timeout_ms > 0)
    usage_error("--first-output-timeout: neither stream passes through sup-run (--stdout or --stderr 'pipe')");
}

/* ---- The spec ----------------------------------------------------------- */

struct strbuf {
  char *data;
  size_t len, cap;
};

static _Noreturn void die_oom(void)
{
  fputs(PROGNAME ": out of memory\n", stderr);
  exit(EXIT_SUPRUN);
}

static void sb_append(struct strbuf *sb, const char *s, size_t n)
{
  if (sb->cap - sb->len <= n) {
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap - sb->len <= n) {
      if (cap > SIZE_MAX / 2)
        die_oom();
      cap *= 2;
    }
    char *data = realloc(sb->data, cap);
    if (data == NULL)
      die_oom();
    sb->data = data;
    sb->cap = cap;
  }
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

static void sb_puts(struct strbuf *sb, const char *s) { sb_append(sb, s, strlen(s)); }

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp)
    die_oom();
  sb_append(sb, tmp, (size_t)n);
}

/* A JSON string from arbitrary argv bytes. Bytes >= 0x80 pass through
 * unchanged: they are not ours to reinterpret, and an argument that is not
 * UTF-8 must still reach exec byte for byte. */
static void sb_json_string(struct strbuf *sb, const char *s)
{
  sb_puts(sb, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      char esc[2] = {'\\', (char)*p};
      sb_append(sb, esc, 2);
    } else if (*p < 0x20 || *p == 0x7f) {
      sb_printf(sb, "\\u%04x", *p);
    } else {
      sb_append(sb, (const char *)p, 1);
    }
  }
  sb_puts(sb, "\"");
}

/* The window size of sup-run's own terminal (stdin, else stdout), when it
 * has one with a size set. */
static bool own_window_size(struct winsize *size)
{
  for (int fd = STDIN_FILENO; fd <= STDOUT_FILENO; fd++)
    if (ioctl(fd, TIOCGWINSZ, size) == 0 && size->ws_row > 0 && size->ws_col > 0)
      return true;
  return false;
}

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
    sb_puts(&sb, ", \"stdin\": \"inherit\"");
  }
  sb_printf(&sb, ", \"idle_timeout_ms\": %" PRIu64, o->idle_timeout_ms);
  sb_printf(&sb, ", \"first_output_timeout_ms\": %" PRIu64, o->first_output_timeout_ms);
  if (o->input_wait_timeout_ms > 0)
    sb_printf(&sb, ", \"input_wait_timeout_ms\": %" PRIu64, o->input_wait_timeout_ms);
  if (!o->pty)
    sb_printf(&sb, ", \"stdout\": \"%s\", \"stderr\": \"%s\"", o->stdout_mode, o->stderr_mode);
  if (o->env_clear)
    sb_puts(&sb, ", \"env_clear\": true");
  sb_printf(&sb, ", \"max_runtime_ms\": %" PRIu64, o->max_runtime_ms);
  sb_printf(&sb, ", \"grace_ms\": %" PRIu64, o->grace_ms);
  sb_printf(&sb, ", \"interrupt_signal\": %d", o->interrupt_signal);
  sb_printf(&sb, ", \"on_timeout\": \"%s\"", o->kill_on_timeout ? "kill" : "interrupt");
  sb_printf(&sb, ", \"max_output_bytes\": %" PRIu64, o->max_output_bytes);
  sb_printf(&sb, ", \"backpressure_bytes\": %d", BACKPRESSURE_BYTES);
  sb_printf(&sb, ", \"contain\": \"%s\"", o->contain);
  if (tty_foreground)
    sb_puts(&sb, ", \"tty_foreground\": true");
  sb_puts(&sb, "}");
  return sb.data;
}

/* ---- Signals ------------------------------------------------------------ */

/* The handlers run on the main thread (libsup's threads block every signal),
 * so they cannot interleave with the main thread's own use of these. Each
 * one also writes a byte to the wake pipe: the main loop sleeps in poll()
 * on it, never in a call a signal could leave blocked. */
static _Atomic(sup_proc *) g_proc;
static atomic_int g_signal_count;
static atomic_int g_first_signal;
static atomic_bool g_child_changed; /* SIGCHLD: the command stopped or went on */
static atomic_bool g_tstp;          /* SIGTSTP to sup-run itself */
static atomic_int g_cont_count;     /* SIGCONTs received */
static atomic_bool g_winch;         /* --pty: sup-run's terminal changed size */
static bool g_pty;                  /* --pty: the command has a terminal of its own */
static int g_wake[2] = {-1, -1};

static void wake_main_loop(void)
{
  if (g_wake[1] >= 0) {
    ssize_t ignored = write(g_wake[1], "", 1); /* full: a wake-up is pending */
    (void)ignored;
  }
}

static void on_signal(int sig)
{
  int saved_errno = errno;
  int n = atomic_fetch_add(&g_signal_count, 1) + 1;
  if (n == 1)
    atomic_store(&g_first_signal, sig);
  sup_proc *p = atomic_load(&g_proc);
  if (p != NULL) {
    if (n == 1)
      sup_interrupt(p);
    else
      sup_abort(p);
  }
  wake_main_loop();
  errno = saved_errno;
}

static void on_job_control(int sig)
{
  int saved_errno = errno;
  if (sig == SIGCHLD)
    atomic_store(&g_child_changed, true);
  else if (sig == SIGTSTP)
    atomic_store(&g_tstp, true);
  else if (sig == SIGWINCH)
    atomic_store(&g_winch, true);
  else
    atomic_fetch_add(&g_cont_count, 1);
  wake_main_loop();
  errno = saved_errno;
}

/* Drains the wake pipe; the flags above say what happened. */
static void drain_wake_pipe(void)
{
  char buf[64];
  while (read(g_wake[0], buf, sizeof buf) > 0) {
  }
}

static void install_signal_handlers(void)
{
  static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
  sigset_t set;

  if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    fprintf(stderr, PROGNAME ": cannot create a pipe: %s\n", strerror(errno));
    exit(EXIT_SUPRUN);
  }
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
    sigaddset(&set, handled[i]);
  /* One handler at a time: the count and the first signal stay consistent. */
  sa.sa_mask = set;
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) {
    /* An ignored signal stays ignored, as make and the shells keep it:
     * nohup's SIGHUP, or SIGINT in a non-interactive shell's background job. */
    struct sigaction old;
    if (sigaction(handled[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    sigaction(handled[i], &sa, NULL);
  }

  /* Job control (see follow_stopped_command). The SIGCHLD handler also
   * replaces an inherited SIG_IGN, which would let the kernel reap the
   * command and lose its exit status; it never reaps: that is libsup's. */
  struct sigaction job = {.sa_handler = on_job_control, .sa_flags = SA_RESTART};
  sigaction(SIGCHLD, &job, NULL);
  sigaction(SIGCONT, &job, NULL);
  struct sigaction old;
  /* With --pty the command is in a session of its own, where a terminal
   * stop signal from outside is discarded: Ctrl-Z stops sup-run alone
   * (its default action), and the command runs on until its output is
   * held back. sup-run's window size follows to the command's terminal. */
  if (g_pty)
    sigaction(SIGWINCH, &job, NULL);
  else if (sigaction(SIGTSTP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
    sigaction(SIGTSTP, &job, NULL);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGCONT);
  sigaddset(&set, SIGTSTP);
  sigaddset(&set, SIGWINCH);

  /* A mask inherited from the caller would keep them from ever arriving;
   * one already pending is handled now, before the command is started. */
  sigprocmask(SIG_UNBLOCK, &set, NULL);

  /* EPIPE instead of death, so the command is ended and reaped first. */
  signal(SIGPIPE, SIG_IGN);
  /* Writing the command's output while it holds the terminal's foreground
   * must not stop sup-run when the terminal has TOSTOP set, nor may moving
   * the foreground between the command's group and sup-run's: with SIGTTOU
   * ignored the kernel lets both through. */
  signal(SIGTTOU, SIG_IGN);
}

/* Publishes the handle to the signal handler and catches up with signals that
 * arrived while it was not yet there. From the store on, the handler sees the
 * handle; before it, the count does: sup_interrupt and sup_abort are latched
 * and idempotent, so seeing a signal both ways is harmless. */
static void publish_proc(sup_proc *p)
{
  atomic_store(&g_proc, p);
  int n = atomic_load(&g_signal_count);
  if (n >= 1)
    sup_interrupt(p);
  if (n >= 2)
    sup_abort(p);
}

/* A second SIGINT, SIGTERM or SIGHUP: sup-run no longer waits for a reader
 * that does not read. */
static bool giving_up(void) { return atomic_load(&g_signal_count) >= 2; }

/* ---- The terminal and job control --------------------------------------- */

/* The command runs in a process group of its own, so the terminal's job
 * control sees sup-run's group, not the command's. sup-run keeps the two in
 * step: when the command stops (Ctrl-Z while it holds the terminal, or a
 * read from the terminal in the background), sup-run takes the terminal back
 * for its own group and stops that group with the same signal, so the shell
 * sees its job stop; when continued ('fg' or 'bg'), it hands the terminal
 * back to the command if the shell gave sup-run's group the foreground, and
 * continues the command. A SIGTSTP sent to sup-run goes to the command
 * first. */

static bool is_tty_stop(int sig)
{
  return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Whether stdin is the controlling terminal with `pgrp` in its foreground. */
static bool terminal_foreground_is(pid_t pgrp)
{
  return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == pgrp;
}

/* The command's group gets the terminal when sup-run's group has it. Only
 * while the command is not final: its pid, the group's id, is still ours. */
static void give_terminal_to_command(sup_proc *p)
{
  if (sup_poll(p, 0) == 0 && terminal_foreground_is(getpgrp()))
    tcsetpgrp(STDIN_FILENO, sup_pid(p));
}

/* The command's group no longer needs the terminal (it ended, or it could
 * not start after taking it): sup-run's group gets it back, so that the shell
 * that started sup-run finds its terminal in order. */
static void take_terminal_back(pid_t from)
{
  if (terminal_foreground_is(from))
    tcsetpgrp(STDIN_FILENO, getpgrp());
}

/* The command's main process stopped with a terminal stop signal `sig`:
 * stop sup-run's whole group likewise, then continue the command. */
static void follow_stopped_command(sup_proc *p, int sig)
{
  pid_t pid = sup_pid(p);
  take_terminal_back(pid);

  int conts = atomic_load(&g_cont_count);
  struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
  sigaction(sig, &dfl, &old);
  /* To the whole group, as the terminal would have sent it: the other
   * processes of the job (a shell waiting for sup-run, the rest of a
   * pipeline) stop with it, and the shell sees the job stopped. */
  kill(0, sig);
  sigaction(sig, &old, NULL);
  bool stopped = atomic_load(&g_cont_count) != conts;

  /* The kernel discards a terminal stop signal in a group that no job
   * control shell watches (an orphaned group): then sup-run did not stop,
   * and neither would the command have, had it been in sup-run's group. A
   * stop for input or output stays: continued, it would stop at once again. */
  if (!stopped && sig != SIGTSTP)
    return;
  give_terminal_to_command(p);
  kill(-pid, SIGCONT);
}

/* Acts on what the job control handlers noted. */
static void handle_job_control(sup_proc *p, int *conts_seen)
{
  if (g_pty) {
    /* No job control to follow across sessions; only the window size. */
    struct winsize size;
    if (atomic_exchange(&g_winch, false) && own_window_size(&size))
      sup_pty_resize(p, size.ws_row, size.ws_col);
    return;
  }
  if (atomic_exchange(&g_tstp, false) && sup_poll(p, 0) == 0)
    kill(-sup_pid(p), SIGTSTP);
  if (atomic_exchange(&g_child_changed, false)) {
    /* WNOWAIT: only a look. The stop stays reportable to nobody else (libsup
     * waits for exits only), and the exit status stays libsup's to reap. */
    siginfo_t info = {0};
    if (waitid(P_PID, (id_t)sup_pid(p), &info, WSTOPPED | WNOWAIT | WNOHANG | __WALL) == 0 &&
        info.si_pid == sup_pid(p) && info.si_code == CLD_STOPPED &&
        is_tty_stop(info.si_status))
      follow_stopped_command(p, info.si_status);
  }
  /* Continued by someone else after a stop sup-run did not follow ('fg'
   * after starting in the background, or after kill -STOP): the command
   * gets the terminal if sup-run's group has it. */
  int conts = atomic_load(&g_cont_count);
  if (conts != *conts_seen) {
    *conts_seen = conts;
    give_terminal_to_command(p);
  }
}

/* ---- Forwarding --------------------------------------------------------- */

/* Whether a write to fd never waits for a reader: then it is not polled. */
static bool never_blocks(int fd)
{
  struct stat st;
  return fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
}

/* One write that does not block for long: it follows a poll() that said fd
 * is writable, and writes no more than fits. A socket is written with
 * MSG_DONTWAIT; a pipe gets what its free room takes (F_GETPIPE_SZ less
 * FIONREAD), at least the PIPE_BUF bytes POLLOUT promises; anything else
 * gets PIPE_BUF bytes. Returns the bytes written, 0 when fd had no room, or
 * -1 with errno. */
static ssize_t write_some(int fd, const char *buf, size_t len, bool direct)
{
  ssize_t n;
  if (direct) {
    n = write(fd, buf, len);
  } else {
    struct stat st;
    bool is_socket = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
    if (is_socket) {
      n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
      size_t room = PIPE_BUF;
      int size, queued;
      if (S_ISFIFO(st.st_mode) && (size = fcntl(fd, F_GETPIPE_SZ)) > 0 &&
          ioctl(fd, FIONREAD, &queued) == 0 && queued >= 0 && size - queued > (int)room)
        room = (size_t)(size - queued);
      n = write(fd, buf, len < room ? len : room);
    }
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return 0;
  return n;
}

/* Writes all of buf to fd. Returns 0 or an errno value: ECANCELED when
 * sup-run is giving up and fd is not writable. Waits in poll() beside the
 * wake pipe, so that a second signal ends the wait for a stalled reader. */
static int write_all(int fd, const char *buf, size_t len)
{
  bool direct = never_blocks(fd);
  while (len > 0) {
    if (!direct) {
      struct pollfd pfd[2] = {{.fd = fd, .events = POLLOUT},
                              {.fd = g_wake[0], .events = POLLIN}};
      int ready = poll(pfd, g_wake[0] >= 0 ? 2 : 1, giving_up() ? 0 : -1);
      if (ready < 0 && errno != EINTR)
        return errno;
      if (pfd[1].revents != 0)
        drain_wake_pipe();
      if (pfd[0].revents == 0) {
        if (giving_up())
          return ECANCELED;
        continue;
      }
    }
    ssize_t n = write_some(fd, buf, len, direct);
    if (n < 0)
      return errno;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* A message of sup-run's own on stderr, written as write_all writes. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n > 0)
    write_all(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

struct stream_fwd {
  int stream;       /* SUP_STDOUT or SUP_STDERR */
  int fd;           /* sup-run's own descriptor the bytes go to */
  const char *name; /* for messages */
  bool direct;      /* fd never blocks: written without polling */
  int ready_fd;     /* libsup's readiness fd for the stream */
  uint64_t pos;     /* bytes of the stream consumed so far */
  uint64_t lost;    /* bytes skipped over: dropped before they were read */
  int write_error;  /* errno of the write that failed; 0 while forwarding */
  bool abandoned;   /* given up on a stalled reader after a second signal */
  bool ended;       /* final and every byte consumed */
  char buf[FORWARD_CHUNK];
  size_t off, len;  /* buf[off, len) still to be written */
};

/* Once a write has failed or been given up, the stream is still read, and
 * discarded, so that backpressure does not hold the command back while it
 * winds down. */
static bool discarding(const struct stream_fwd *f)
{
  return f->write_error != 0 || f->abandoned;
}

/* Refills an empty buffer from the library. Never blocks. */
static void fill(sup_proc *p, struct stream_fwd *f, bool final)
{
  while (f->off == f->len && !f->ended) {
    uint64_t before = f->pos;
    size_t n = 0;
    if (sup_output_read(p, f->stream, &f->pos, f->buf, sizeof f->buf, &n) < 0)
      n = 0;
    /* With backpressure the library keeps every byte not yet read; a jump
     * means bytes were dropped anyway, and the user must learn that the
     * pass-through is not exact. */
    f->lost += f->pos - before - n;
    if (n == 0) {
      /* Final before reading: a read that gets nothing then proves the
       * stream is drained, as a final result gets no more output. */
      f->ended = final;
      return;
    }
    f->off = 0;
    f->len = discarding(f) ? 0 : n;
  }
}

/* --pty: sup-run's stdin copied to the command's terminal, as typed there;
 * at its end, the terminal's end of input (sup_input_close). sup-run's own
 * terminal keeps its modes: a line reaches the command when Enter is
 * pressed, and Ctrl-C, Ctrl-Z and Ctrl-D act on sup-run. */
struct input_fwd {
  bool active;      /* stdin is still copied */
  bool eof;         /* stdin ended: the end of input is still to be sent */
  int input_fd;     /* the terminal's master, polled for room */
  char buf[FORWARD_CHUNK];
  size_t off, len;  /* buf[off, len) still to be written */
};

/* Writes what is buffered, and the end of input after it, as far as the
 * terminal takes them now. Returns true when waiting for room. */
static bool push_input(sup_proc *p, struct input_fwd *in)
{
  while (in->active && in->off < in->len) {
    size_t n = 0;
    int rc = sup_input_write(p, in->buf + in->off, in->len - in->off, &n);
    if (rc == SUP_EAGAIN)
      return true;
    if (rc < 0) {
      /* The command closed its terminal or ended: its input is over. */
      in->active = false;
      return false;
    }
    in->off += n;
  }
  if (in->active && in->eof) {
    if (sup_input_close(p) == SUP_EAGAIN)
      return true;
    in->active = false;
  }
  return false;
}

/* stdin is readable: reads what is there (an empty buffer only). */
static void pull_input(struct input_fwd *in)
{
  ssize_t n = read(STDIN_FILENO, in->buf, sizeof in->buf);
  if (n > 0) {
    in->off = 0;
    in->len = (size_t)n;
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    /* End of file, or stdin cannot be read (EIO in the background). */
    in->eof = true;
  }
}

/* Forwards both streams until the result is final and both are drained,
 * following the command's stops meanwhile. Returns the first write errno, or
 * 0. Waits only in poll(): for output, for room at a reader, for the result,
 * and for signals. */
static int forward_output(sup_proc *p)
{
  static struct stream_fwd streams[2] = {
      {.stream = SUP_STDOUT, .fd = STDOUT_FILENO, .name = "stdout"},
      {.stream = SUP_STDERR, .fd = STDERR_FILENO, .name = "stderr"},
  };
  int first_error = 0;
  int conts_seen = atomic_load(&g_cont_count);
  int final_fd = sup_fd(p);
  static struct input_fwd input;
  input.active = g_pty;
  input.input_fd = g_pty ? sup_input_fd(p) : -1;
  /* Without libsup's fds (out of descriptors) the loop looks every 10 ms. */
  bool degraded = final_fd < 0;

  for (int i = 0; i < 2; i++) {
    streams[i].direct = never_blocks(streams[i].fd);
    streams[i].ready_fd = sup_output_fd(p, streams[i].stream);
    degraded = degraded || streams[i].ready_fd < 0;
  }
  degraded = degraded || (g_pty && input.input_fd < 0);
  /* A stop that came before the handler was there to see it. */
  atomic_store(&g_child_changed, true);

  for (;;) {
    drain_wake_pipe();
    handle_job_control(p, &conts_seen);
    bool final = sup_poll(p, 0) == 1;
    bool give_up = giving_up();

    struct pollfd pfd[5];
    int npfd = 0;
    int out_slot[2] = {-1, -1};
    int stdin_slot = -1;
    pfd[npfd++] = (struct pollfd){.fd = g_wake[0], .events = POLLIN};
    if (!final && final_fd >= 0)
      pfd[npfd++] = (struct pollfd){.fd = final_fd, .events = POLLIN};
    if (final)
      input.active = false;
    if (push_input(p, &input) && input.input_fd >= 0)
      pfd[npfd++] = (struct pollfd){.fd = input.input_fd, .events = POLLOUT};
    else if (input.active && !input.eof && input.off == input.len) {
      stdin_slot = npfd;
      pfd[npfd++] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    }
    bool all_ended = true;
    for (int i = 0; i < 2; i++) {
      struct stream_fwd *f = &streams[i];
      fill(p, f, final);
      if (f->off < f->len) {
        out_slot[i] = npfd;
        pfd[npfd++] = (struct pollfd){.fd = f->fd, .events = POLLOUT};
      } else if (!f->ended) {
        if (f->ready_fd >= 0)
          pfd[npfd++] = (struct pollfd){.fd = f->ready_fd, .events = POLLIN};
      }
      all_ended = all_ended && f->ended && f->off == f->len;
    }
    if (all_ended)
      break;

    /* Giving up: a reader that has no room now is not waited for. */
    int timeout = give_up && (out_slot[0] >= 0 || out_slot[1] >= 0) ? 0 : -1;
    if (degraded && timeout < 0)
      timeout = 10;
    if (poll(pfd, (nfds_t)npfd, timeout) < 0)
      for (int i = 0; i < npfd; i++)
        pfd[i].revents = 0;
    if (stdin_slot >= 0 && pfd[stdin_slot].revents != 0)
      pull_input(&input);

    for (int i = 0; i < 2; i++) {
      struct stream_fwd *f = &streams[i];
      if (out_slot[i] < 0)
        continue;
      if (pfd[out_slot[i]].revents == 0 && !f->direct) {
        if (give_up) {
          f->abandoned = true;
          f->off = f->len;
        }
        continue;
      }
      ssize_t n = write_some(f->fd, f->buf + f->off, f->len - f->off, f->direct);
      if (n < 0) {
        f->write_error = errno;
        f->off = f->len;
        if (first_error == 0) {
          first_error = f->write_error;
          sup_interrupt(p);
        }
      } else {
        f->off += (size_t)n;
      }
    }
  }
  for (int i = 0; i < 2; i++)
    if (streams[i].lost > 0)
      say(PROGNAME ": warning: %" PRIu64 " bytes of the command's %s were lost\n",
          streams[i].lost, streams[i].name);
  return first_error;
}

/* ---- Result and exit status --------------------------------------------- */

static void format_duration(char *out, size_t size, uint64_t ms)
{
  if (ms >= 3600000 && ms % 3600000 == 0)
    snprintf(out, size, "%" PRIu64 "h", ms / 3600000);
  else if (ms >= 60000 && ms % 60000 == 0)
    snprintf(out, size, "%" PRIu64 "m", ms / 60000);
  else if (ms % 1000 == 0)
    snprintf(out, size, "%" PRIu64 "s", ms / 1000);
  else if (ms < 1000)
    snprintf(out, size, "%" PRIu64 "ms", ms);
  else {
    int len = snprintf(out, size, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
    while (len > 0 && out[len - 1] == '0')
      out[--len] = '\0';
    snprintf(out + len, size - (size_t)len, "s");
  }
}

/* "sent SIGTERM at 2.0s, SIGKILL at 7.0s" from the result's signals_sent. */
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
  if (outcome == SUP_OUTCOME_IDLE_TIMEOUT && sup_result_phase(p) == SUP_PHASE_FIRST_OUTPUT) {
    format_duration(limit, sizeof limit, o->first_output_timeout_ms);
    sb_printf(&sb, PROGNAME ": first output timeout: no output within %s; ", limit);
  } else if (outcome == SUP_OUTCOME_IDLE_TIMEOUT && sup_result_phase(p) == SUP_PHASE_INPUT) {
    format_duration(limit, sizeof limit, o->input_wait_timeout_ms);
    sb_printf(&sb, PROGNAME ": input wait timeout: waiting for input for %s; ", limit);
  } else if (outcome == SUP_OUTCOME_IDLE_TIMEOUT) {
    format_duration(limit, sizeof limit, o->idle_timeout_ms);
    sb_printf(&sb, PROGNAME ": idle timeout: no output for %s; ", limit);
  } else {
    format_duration(limit, sizeof limit, o->max_runtime_ms);
    sb_printf(&sb, PROGNAME ": max runtime: still running after %s; ", limit);
  }
  describe_signals(&sb, sup_result(p));
  sb_printf(&sb, "; exit %d\n", status);
  write_all(STDERR_FILENO, sb.data, sb.len);
  free(sb.data);
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
    say(PROGNAME ": the command's exit status was lost: %s\n",
        sup_result_status_lost(p) == 1 ? "another waiter reaped it"
                                       : sup_strerror(code));
    return EXIT_SUPRUN;
  case SUP_OUTCOME_IDLE_TIMEOUT:
  case SUP_OUTCOME_MAX_RUNTIME:
    return EXIT_TIMEDOUT;
  default:
    if (outcome < 0) {
      say(PROGNAME ": no result for the command: %s\n", sup_strerror(outcome));
      return EXIT_SUPRUN;
    }
    /* Interrupted or aborted with no signal and no write error: nobody
     * but sup-run calls sup_interrupt or sup_abort on this handle. */
    say(PROGNAME ": the command ended as '%s' for no reason sup-run knows\n",
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
    say(PROGNAME ": --json: cannot write '%s': %s\n", path, strerror(err));
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

int main(int argc, char **argv)
{
  occupy_standard_fds();

  struct options opts;
  parse_options(argc, argv, &opts);

  int json_fd = -1;
  if (opts.json_path != NULL) {
    json_fd = open(opts.json_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (json_fd < 0) {
      fprintf(stderr, PROGNAME ": --json: cannot open '%s': %s\n", opts.json_path,
              strerror(errno));
      return EXIT_SUPRUN;
    }
  }

  g_pty = opts.pty;
  install_signal_handlers();

  /* With --pty the command has a terminal of its own, not sup-run's. */
  bool tty_foreground = !opts.pty && terminal_foreground_is(getpgrp());
  char *spec = build_spec(&opts, tty_foreground);

  /* A signal before the spawn means the command is not wanted at all. */
  if (atomic_load(&g_signal_count) > 0) {
    free(spec);
    return 128 + atomic_load(&g_first_signal);
  }

  sup_proc *p = NULL;
  char detail[512];
  int rc = sup_spawn_ex(spec, &p, detail, sizeof detail);
  free(spec);
  if (rc < 0) {
    /* The command's group may have taken the terminal before its exec (or
     * chdir) failed: nothing of that group is left to hand it back. */
    if (tty_foreground && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp())
      tcsetpgrp(STDIN_FILENO, getpgrp());
    say(PROGNAME ": cannot run '%s': %s\n", opts.argv[0],
        detail[0] ? detail : sup_strerror(rc));
    return spawn_failure_status(rc);
  }
  publish_proc(p);

  int write_error = forward_output(p);
  /* libsup hands the terminal back when it gave it at the spawn; sup-run
   * may have given it later (after 'fg'). */
  take_terminal_back(sup_pid(p));
  int outcome = sup_result_outcome(p);
  int status = exit_status(p, outcome, write_error);

  if (write_error != 0 && write_error != EPIPE)
    say(PROGNAME ": cannot pass the command's output through: %s\n", strerror(write_error));
  if (json_fd >= 0 && write_json_result(p, json_fd, opts.json_path) != 0)
    status = EXIT_SUPRUN;
  if (!opts.quiet &&
      (outcome == SUP_OUTCOME_IDLE_TIMEOUT || outcome == SUP_OUTCOME_MAX_RUNTIME))
    print_timeout_summary(p, &opts, outcome, status);

  /* The handler must not touch the handle once it is being released. */
  atomic_store(&g_proc, NULL);
  sup_release(p);
  return status;
}
