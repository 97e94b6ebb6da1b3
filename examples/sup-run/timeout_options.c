/*
 * sup-timeout's command line: GNU timeout's, exactly
 * ([OPTION] DURATION COMMAND [ARG]..., -k, -s, -v, --foreground,
 * --preserve-status, its durations, signal names and messages), plus sup's
 * own long options, none of which changes what a GNU one means.
 */
#define _GNU_SOURCE /* getopt_long */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sup-run.h"

enum timeout_option {
  TOPT_FOREGROUND = 256,
  TOPT_PRESERVE_STATUS,
  TOPT_HELP,
  TOPT_VERSION,
  TOPT_IDLE,
  TOPT_FIRST_OUTPUT,
  TOPT_CONTAIN,
  TOPT_JSON,
  TOPT_MAX_OUTPUT,
};

static const struct option timeout_longopts[] = {
    /* GNU timeout's */
    {"kill-after", required_argument, NULL, 'k'},
    {"signal", required_argument, NULL, 's'},
    {"verbose", no_argument, NULL, 'v'},
    {"foreground", no_argument, NULL, TOPT_FOREGROUND},
    {"preserve-status", no_argument, NULL, TOPT_PRESERVE_STATUS},
    {"help", no_argument, NULL, TOPT_HELP},
    {"version", no_argument, NULL, TOPT_VERSION},
    /* sup's */
    {"idle-timeout", required_argument, NULL, TOPT_IDLE},
    {"first-output-timeout", required_argument, NULL, TOPT_FIRST_OUTPUT},
    {"contain", required_argument, NULL, TOPT_CONTAIN},
    {"json", required_argument, NULL, TOPT_JSON},
    {"max-output", required_argument, NULL, TOPT_MAX_OUTPUT},
    CONFINE_LONGOPTS,
    {NULL, 0, NULL, 0}};

/* The first GNU_OPTIONS entries are GNU timeout's own. */
#define GNU_OPTIONS 7

const char *gnu_quote(const char *s)
{
  static char bufs[2][1024];
  static int next;
  char *buf = bufs[next];
  next = 1 - next;
  bool utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  snprintf(buf, sizeof bufs[0], utf8 ? "\xe2\x80\x98%s\xe2\x80\x99" : "'%s'", s);
  return buf;
}

static _Noreturn void try_help(void)
{
  fprintf(stderr, "Try '%s --help' for more information.\n", g_progname);
  exit(EXIT_SUPRUN);
}

static void print_timeout_help(void)
{
  printf("Usage: %s [OPTION] DURATION COMMAND [ARG]...\n"
         "  or:  %s [OPTION]\n",
         g_progname, g_progname);
  fputs(
"Start COMMAND, and kill it if still running after DURATION.\n"
"GNU timeout's command line, under sup's supervision.\n"
"\n"
"Mandatory arguments to long options are mandatory for short options too.\n"
"      --preserve-status\n"
"                 exit with the same status as COMMAND, even when the\n"
"                   command times out\n"
"      --foreground\n"
"                 when not running timeout directly from a shell prompt,\n"
"                   allow COMMAND to read from the TTY and get TTY signals;\n"
"                   unlike GNU timeout, COMMAND's children are still ended\n"
"  -k, --kill-after=DURATION\n"
"                 also send a KILL signal if COMMAND is still running\n"
"                   this long after the initial signal was sent\n"
"  -s, --signal=SIGNAL\n"
"                 specify the signal to be sent on timeout;\n"
"                   SIGNAL may be a name like 'HUP' or a number;\n"
"                   see 'kill -l' for a list of signals\n"
"  -v, --verbose  diagnose to stderr any signal sent upon timeout\n"
"      --help     display this help and exit\n"
"      --version  output version information and exit\n"
"\n"
"sup's own options (none changes what a GNU option means):\n"
"      --idle-timeout=DURATION  also end COMMAND after DURATION with no output\n"
"                   on its stdout or stderr (which then pass through sup,\n"
"                   copied as they come)\n"
"      --first-output-timeout=DURATION  also end COMMAND if it has printed\n"
"                   nothing DURATION after it started\n"
"      --contain=MODE  what is ended with COMMAND: 'group' (default) its\n"
"                   process group; 'cgroup' everything it started, in a\n"
"                   cgroup v2 of its own; 'auto' cgroup where possible\n"
"      --json=FILE  when done, write sup's result as JSON to FILE\n"
"      --max-output=BYTES  bytes of each stream kept in FILE (default 16M;\n"
"                   'none': every byte)\n"
"      --input-wait-timeout=DURATION  also end COMMAND (status 124) once it\n"
"                   has waited DURATION for input nobody gives it\n"
"      --tty-stop-timeout=DURATION  also end COMMAND (status 124) once it has\n"
"                   been stopped DURATION on the terminal (SIGTTIN/SIGTTOU)\n"
"      --stdin=MODE  COMMAND's stdin: 'inherit' (default), 'null' or 'fd:N'\n"
"      --fd=CHILD=HOST  COMMAND's descriptor CHILD (>= 3) is HOST (repeatable)\n"
"      --limit=KEY=VALUE[,...]  memory=SIZE, cpu=SECONDS, processes=N,\n"
"                   file=SIZE, open-files=N, core=0 (SIZE with K, M, G)\n"
"      --sandbox-write=DIR, --sandbox-read=DIR (repeatable), --sandbox-tmp,\n"
"      --no-network, --sandbox-strict  confine COMMAND (see sup-run --help)\n"
"      --user=NAME|UID, --group=NAME|GID  run COMMAND as that user, group\n"
"      --require-sentinel  fail unless COMMAND's whole tree dies with sup\n"
"\n"
"DURATION is a floating point number with an optional suffix:\n"
"'s' for seconds (the default), 'm' for minutes, 'h' for hours or 'd' for days.\n"
"A duration of 0 disables the associated timeout.\n"
"\n"
"Upon timeout, send the TERM signal to COMMAND, if no other SIGNAL specified.\n"
"The TERM signal kills any process that does not block or catch that signal.\n"
"It may be necessary to use the KILL signal, since this signal can't be caught.\n"
"SIGINT, SIGQUIT, SIGHUP, SIGTERM, the -s signal, SIGUSR1 and SIGUSR2 received\n"
"are relayed to COMMAND; SIGALRM is taken as the timeout itself.\n"
"Whatever COMMAND leaves running in its process group is killed when it ends,\n"
"and everything it started is killed if sup-timeout itself is killed.\n"
"\n"
"Exit status:\n"
"  124  if COMMAND times out, and --preserve-status is not specified\n"
"  125  if the timeout command itself fails\n"
"  126  if COMMAND is found but cannot be invoked\n"
"  127  if COMMAND cannot be found\n"
"  137  if COMMAND (or timeout itself) is sent the KILL (9) signal (128+9)\n"
"  -    the exit status of COMMAND otherwise\n",
      stdout);
}

/* GNU's reading of a signal operand (operand2sig): a number, as a shell's
 * exit status too (143 is TERM), or a name with or without SIG in any
 * case. Returns -1 for none; 0 is valid (no signal). */
static int gnu_signal(const char *s)
{
  if (isdigit((unsigned char)*s)) {
    char *end;
    errno = 0;
    long l = strtol(s, &end, 10);
    if (*end != '\0' || errno != 0 || l > 0x7fffffff)
      return -1;
    int sig = (int)l;
    sig &= sig >= 0xFF ? 0xFF : 0x7F;
    return sig <= 64 ? sig : -1;
  }
  int sig = sup_signal_parse(s);
  return sig > 0 ? sig : -1;
}

static double duration_operand(const char *s)
{
  double d;
  if (!parse_gnu_duration(s, &d)) {
    fprintf(stderr, "%s: invalid time interval %s\n", g_progname, gnu_quote(s));
    try_help();
  }
  return d;
}

static uint64_t sup_duration(const char *s, const char *option)
{
  uint64_t ms;
  if (parse_duration(s, &ms) == PARSE_INVALID)
    usage_error("%s: invalid duration '%s'", option, s);
  return ms >= MAX_DURATION_MS ? 0 : ms;
}

/* "--f" is GNU's --foreground, whatever sup's options begin with: an
 * abbreviation that names one GNU option alone is spelled out before
 * getopt sees it. Returns argv, or a copy with the changes. */
static char **spell_out_gnu_abbreviations(int argc, char **argv)
{
  char **out = argv;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0 || arg[0] != '-' || arg[1] == '\0')
      break; /* options end at DURATION */
    if (arg[1] != '-') {
      /* -k5 / -k 5 / -vs TERM: a value may follow as the next word. */
      const char *c = strpbrk(arg + 1, "ks");
      if (c != NULL && c[1] == '\0')
        i++;
      continue;
    }
    size_t len = strcspn(arg + 2, "=");
    const struct option *exact = NULL, *gnu = NULL;
    int gnu_matches = 0;
    for (int k = 0; timeout_longopts[k].name != NULL; k++) {
      const char *name = timeout_longopts[k].name;
      if (strlen(name) == len && strncmp(name, arg + 2, len) == 0)
        exact = &timeout_longopts[k];
      if (k < GNU_OPTIONS && strncmp(name, arg + 2, len) == 0) {
        gnu = &timeout_longopts[k];
        gnu_matches++;
      }
    }
    const struct option *opt = exact != NULL ? exact : gnu_matches == 1 ? gnu : NULL;
    if (opt != NULL && exact == NULL) {
      if (out == argv) {
        out = calloc((size_t)argc + 1, sizeof *out);
        if (out == NULL)
          die_oom();
        memcpy(out, argv, (size_t)argc * sizeof *out);
      }
      struct strbuf sb = {0};
      sb_printf(&sb, "--%s", opt->name);
      sb_puts(&sb, arg + 2 + len);
      out[i] = sb.data;
    }
    if (opt != NULL && opt->has_arg == required_argument && arg[2 + len] != '=')
      i++;
  }
  return out;
}

void parse_timeout_options(int argc, char **argv, struct options *o)
{
  *o = (struct options){.interrupt_signal = SIGTERM,
                        .contain = "group",
                        .max_output_bytes = UINT64_C(16) << 20,
                        .stdout_mode = "inherit",
                        .stderr_mode = "inherit",
                        .quiet = true,
                        .keep_ignored_signals = true};
  confine_defaults(&o->confine);
  /* Static: o->argv points into it for the life of the program, and a
   * leak checker must see it held rather than lost. */
  static char **args;
  args = spell_out_gnu_abbreviations(argc, argv);
  int c;
  while ((c = getopt_long(argc, args, "+k:s:v", timeout_longopts, NULL)) != -1) {
    switch (c) {
    case 'k':
      o->kill_after_seconds = duration_operand(optarg);
      break;
    case 's': {
      int sig = gnu_signal(optarg);
      if (sig < 0) {
        fprintf(stderr, "%s: %s: invalid signal\n", g_progname, gnu_quote(optarg));
        try_help();
      }
      o->signal_zero = sig == 0;
      /* Signal 0 sends nothing: SIGCONT, harmless to a running command,
       * takes its place in the escalation. */
      o->interrupt_signal = sig == 0 ? SIGCONT : sig;
      break;
    }
    case 'v':
      o->verbose = true;
      break;
    case TOPT_FOREGROUND:
      o->foreground = true;
      break;
    case TOPT_PRESERVE_STATUS:
      o->preserve_status = true;
      break;
    case TOPT_HELP:
      print_timeout_help();
      exit(fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_SUPRUN);
    case TOPT_VERSION: {
      int v = sup_version();
      printf("sup-timeout (sup) %d.%d.%d\n", v / 10000, v / 100 % 100, v % 100);
      exit(fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_SUPRUN);
    }
    case TOPT_IDLE:
      o->idle_timeout_ms = sup_duration(optarg, "--idle-timeout");
      break;
    case TOPT_FIRST_OUTPUT:
      o->first_output_timeout_ms = sup_duration(optarg, "--first-output-timeout");
      break;
    case TOPT_CONTAIN:
      if (strcmp(optarg, "group") != 0 && strcmp(optarg, "cgroup") != 0 &&
          strcmp(optarg, "auto") != 0)
        usage_error("--contain: invalid mode '%s' (expected 'group', 'cgroup' or 'auto')", optarg);
      o->contain = optarg;
      break;
    case TOPT_JSON:
      if (optarg[0] == '\0')
        usage_error("--json: empty file name");
      o->json_path = optarg;
      break;
    case TOPT_MAX_OUTPUT:
      o->max_output_none = strcmp(optarg, "none") == 0;
      if (!o->max_output_none && parse_bytes(optarg, &o->max_output_bytes) != PARSE_OK)
        usage_error("--max-output: invalid byte count '%s'", optarg);
      break;
    case COPT_STDIN:
    case COPT_FD:
    case COPT_INPUT_WAIT:
    case COPT_TTY_STOP:
    case COPT_LIMIT:
    case COPT_SANDBOX_WRITE:
    case COPT_SANDBOX_READ:
    case COPT_NO_NETWORK:
    case COPT_SANDBOX_TMP:
    case COPT_SANDBOX_STRICT:
    case COPT_USER:
    case COPT_GROUP:
    case COPT_REQUIRE_SENTINEL:
      confine_option(c, optarg, &o->confine);
      break;
    default:
      /* getopt has said what was wrong, in GNU's words. */
      try_help();
    }
  }
  if (argc - optind < 2)
    try_help();
  o->timeout_seconds = duration_operand(args[optind++]);
  o->argv = args + optind;
  /* The timer is sup-timeout's own (SIGALRM, as GNU's); the library's
   * grace is -k, and without -k no SIGKILL is ever sent. */
  uint64_t grace;
  if (o->kill_after_seconds > 0 && seconds_to_ms(o->kill_after_seconds, &grace) == PARSE_OK)
    o->grace_ms = grace;
  else
    o->grace_ms = MAX_DURATION_MS;
  /* The silence limits need the output to pass through sup: copied to
   * sup-timeout's own stdout and stderr as it comes ("tee"). Otherwise the
   * command writes to them itself, as under GNU timeout. */
  if (o->idle_timeout_ms > 0 || o->first_output_timeout_ms > 0)
    o->stdout_mode = o->stderr_mode = "tee";
}
