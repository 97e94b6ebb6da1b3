/*
 * sup-run's command line: its options, their values, --help and --version.
 */
#define _GNU_SOURCE /* getopt_long */

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sup-run.h"

/* sup-run's own name, in its help (messages use g_progname). */
#define PROGNAME "sup-run"

_Noreturn void usage_error(const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "%s: ", g_progname);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry '%s --help' for more information.\n", g_progname);
  exit(EXIT_SUPRUN);
}

static bool parse_signal_option(const char *s, int *out)
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
"                               1024, 1024^2, 1024^3 (default 16M); 'none'\n"
"                               keeps every byte (memory grows with the\n"
"                               output). It does not limit what passes through.\n"
"      --stdout=MODE            where COMMAND's standard output goes: 'pipe'\n"
"                               passes it through sup-run, captured (default);\n"
"                               'inherit' gives COMMAND sup-run's own standard\n"
"                               output (not captured, not counted as output\n"
"                               by --idle-timeout); 'null' discards it;\n"
"                               'fd:N' gives it sup-run's descriptor N (as\n"
"                               'inherit', not captured)\n"
"      --stderr=MODE            the same for standard error\n"
"",
"      --stdin=MODE             COMMAND's standard input: 'inherit' sup-run's\n"
"                               own (default), 'null' /dev/null, 'fd:N'\n"
"                               sup-run's descriptor N\n"
"      --fd=CHILD=HOST          COMMAND's descriptor CHILD (3 or more) is\n"
"                               sup-run's HOST, e.g. --fd=3=7 (repeatable);\n"
"                               COMMAND gets no other descriptor but 0, 1, 2\n"
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
"",
"      --input-wait-timeout=DURATION  end COMMAND once it has waited DURATION\n"
"                               for input nobody gives it (a read of its stdin\n"
"                               with nothing coming, or stopped by SIGTTIN):\n"
"                               exit 124 as for the other timeouts (default 0:\n"
"                               off)\n"
"      --tty-stop-timeout=DURATION  end COMMAND once it has been stopped\n"
"                               DURATION on the terminal (SIGTTIN or SIGTTOU:\n"
"                               it opened /dev/tty, as a password prompt does,\n"
"                               without the terminal's foreground), but never\n"
"                               for a read of its stdin: exit 124 (default 0:\n"
"                               off)\n"
"      --limit=KEY=VALUE[,...]  resource limits of COMMAND: memory=SIZE (its\n"
"                               data segment; with --contain=cgroup the whole\n"
"                               tree's memory), cpu=SECONDS (CPU time: SIGXCPU,\n"
"                               then SIGKILL), processes=N (its user's; with\n"
"                               cgroup its tree's), file=SIZE (largest file it\n"
"                               may write), open-files=N, core=0 (no core\n"
"                               dumps). SIZE takes K, M, G; repeatable, a later\n"
"                               value wins. A limit above sup-run's own needs\n"
"                               privilege\n"
"      --sandbox-write=DIR      COMMAND may write only under DIR (repeatable)\n"
"                               and /dev/null, /dev/tty (Landlock); everything\n"
"                               stays readable\n"
"      --sandbox-read=DIR       COMMAND may read only under DIR (repeatable;\n"
"                               list its libraries' directories too)\n"
"      --sandbox-tmp            a private writable directory for COMMAND, its\n"
"                               TMPDIR, removed at its end\n"
"      --no-network             COMMAND may open no socket but a Unix one; alone\n"
"                               it leaves the filesystem writable\n"
"      --sandbox-strict         fail (exit 125) rather than run with a part of\n"
"                               the sandbox the kernel cannot enforce\n"
"      --user=NAME|UID          run COMMAND as that user, with its groups\n"
"      --group=NAME|GID         ... and with that group (both need privilege)\n"
"      --require-sentinel       fail (exit 125) where sup cannot end COMMAND's\n"
"                               whole tree should sup-run itself be killed\n"
"  With --json the result says what applied (\"confined\") and which limit\n"
"  ended COMMAND (\"limit\": \"cpu\", \"memory\", \"processes\", \"file_size\").\n"
"",
"      --keep-ignored-signals   signals ignored where sup-run was started stay\n"
"                               ignored in COMMAND (as a shell passes them on);\n"
"                               by default COMMAND starts with every signal at\n"
"                               its default\n"
"  -q, --quiet                  print no summary line after a timeout\n"
"  -h, --help                   print this help and exit\n"
"      --version                print the version of sup-run and exit\n"
"\n"
"An option's value may follow it as the next argument or after '='. Options\n"
"end at COMMAND or at '--'.\n"
"\n",
"DURATION\n"
"  A non-negative number, decimals allowed, with an optional unit: ms\n"
"  (milliseconds), s (seconds, the default), m (minutes), h (hours) or d\n"
"  (days), as in 250ms, 1.5, 1.5s, 2m, 1d; as GNU timeout reads it too\n"
"  (1e3, 0x1p-3, inf). It is rounded up to a whole millisecond. For\n"
"  --idle-timeout, --first-output-timeout, --max-runtime and\n"
"  --input-wait-timeout and --tty-stop-timeout, 0 means off,\n"
"  and so does a value past 1000000000s (about 31 years); a --grace that\n"
"  long never sends SIGKILL. BYTES at most 1024G.\n"
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
"         --max-runtime, --input-wait-timeout or --tty-stop-timeout\n"
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
"         SIGINT, 131 SIGQUIT, 143 SIGTERM)\n"
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
"  The first SIGINT, SIGTERM, SIGHUP or SIGQUIT (or the --signal signal) that\n"
"  sup-run receives interrupts COMMAND: the interrupt signal and SIGCONT go\n"
"  to its process group, and SIGKILL follows after the grace period if it\n"
"  is still running. A second one sends SIGKILL at once, and sup-run stops\n"
"  waiting for a reader of its output that no longer reads. SIGUSR1 and\n"
"  SIGUSR2 are relayed to COMMAND's group as they are. SIGALRM is taken as\n"
"  sup-run's own timer going off: COMMAND is ended as --max-runtime would\n"
"  end it, exit 124 (so that nested timeouts work). A signal that sup-run\n"
"  inherits as ignored (nohup's SIGHUP, SIGINT in a background job of a\n"
"  non-interactive shell) stays ignored, and is not relayed. sup-run ignores\n"
"  SIGPIPE and reports EPIPE as 141. An\n"
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
  OPT_KEEP_IGNORED,
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

/* A limit too far for the library's clock (past MAX_DURATION_MS) is no
 * limit, as GNU timeout takes a huge duration: 0 for a timeout, the
 * longest grace (no SIGKILL) for --grace. */
void duration_option(const char *arg, const char *option, uint64_t *out_ms,
                     uint64_t too_large)
{
  switch (parse_duration(arg, out_ms)) {
  case PARSE_OK:
    return;
  case PARSE_INVALID:
    usage_error("%s: invalid duration '%s'", option, arg);
  case PARSE_TOO_LARGE:
    *out_ms = too_large;
    return;
  }
}

void parse_options(int argc, char **argv, struct options *o)
{
  static const struct option longopts[] = {
      {"idle-timeout", required_argument, NULL, OPT_IDLE},
      {"first-output-timeout", required_argument, NULL, OPT_FIRST_OUTPUT},
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
      {"keep-ignored-signals", no_argument, NULL, OPT_KEEP_IGNORED},
      {"help", no_argument, NULL, OPT_HELP},
      {"version", no_argument, NULL, OPT_VERSION},
      CONFINE_LONGOPTS,
      {NULL, 0, NULL, 0}};

  *o = (struct options){.grace_ms = 5000,
                        .interrupt_signal = SIGTERM,
                        .contain = "group",
                        .max_output_bytes = UINT64_C(16) << 20,
                        .stdout_mode = "pipe"};
  confine_defaults(&o->confine);
  const char *stderr_mode = NULL;
  bool merge = false;
  int c;
  /* '+': options stop at COMMAND, so the command's own options stay its own;
   * ':': a missing value is reported here, naming the option. */
  while ((c = getopt_long(argc, argv, "+:qh", longopts, NULL)) != -1) {
    switch (c) {
    case OPT_IDLE:
      duration_option(optarg, "--idle-timeout", &o->idle_timeout_ms, 0);
      break;
    case OPT_FIRST_OUTPUT:
      duration_option(optarg, "--first-output-timeout", &o->first_output_timeout_ms, 0);
      break;
    case OPT_STDOUT:
    case OPT_STDERR: {
      const char *name = c == OPT_STDOUT ? "--stdout" : "--stderr";
      if (strcmp(optarg, "pipe") != 0 && strcmp(optarg, "inherit") != 0 &&
          strcmp(optarg, "null") != 0 && fd_mode(optarg, name) < 0)
        usage_error("%s: invalid mode '%s' (expected 'pipe', 'inherit', 'null' or 'fd:N')",
                    name, optarg);
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
      duration_option(optarg, "--max-runtime", &o->max_runtime_ms, 0);
      break;
    case OPT_GRACE:
      duration_option(optarg, "--grace", &o->grace_ms, MAX_DURATION_MS);
      break;
    case OPT_SIGNAL:
      if (!parse_signal_option(optarg, &o->interrupt_signal))
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
      o->max_output_none = strcmp(optarg, "none") == 0;
      if (o->max_output_none)
        break;
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
    case OPT_KEEP_IGNORED:
      o->keep_ignored_signals = true;
      break;
    case 'h':
    case OPT_HELP:
      print_help();
      exit(fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_SUPRUN);
    case OPT_VERSION:
      print_version();
      exit(fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_SUPRUN);
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
  if (o->pty && o->confine.stdin_mode != NULL)
    usage_error("--pty: the command's stdin is its terminal; --stdin does not apply");
  o->stderr_mode = merge ? "stdout" : stderr_mode != NULL ? stderr_mode : "pipe";
  bool reads_any = strcmp(o->stdout_mode, "pipe") == 0 ||
                   (!merge && strcmp(o->stderr_mode, "pipe") == 0);
  if (!reads_any && o->idle_timeout_ms > 0)
    usage_error("--idle-timeout: neither stream passes through sup-run (--stdout or --stderr 'pipe')");
  if (!reads_any && o->first_output_timeout_ms > 0)
    usage_error("--first-output-timeout: neither stream passes through sup-run (--stdout or --stderr 'pipe')");
}

/* ---- The spec ----------------------------------------------------------- */
