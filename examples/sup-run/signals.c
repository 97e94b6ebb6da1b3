/*
 * The signals sup-run and sup-timeout receive: which end the command (sup-run:
 * an interrupt, then an abort), which are relayed to it as they are (USR1,
 * USR2, and for sup-timeout GNU timeout's INT, QUIT, HUP, TERM and -s
 * signal), SIGALRM as their own timer going off (sup_expire), and what the
 * command inherits of them.
 */
#define _GNU_SOURCE /* pipe2 */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "sup-run.h"

_Atomic(sup_proc *) g_proc;
atomic_int g_signal_count;
atomic_int g_first_signal;
atomic_bool g_child_changed;
atomic_bool g_tstp;
atomic_int g_cont_count;
atomic_bool g_winch;
atomic_bool g_alarm;
atomic_bool g_timed_out;
bool g_pty;
int g_wake[2] = {-1, -1};

/* Bit sig - 1 of what the caller left at SIG_IGN (note_caller_signals). */
static uint64_t g_caller_ignored;
/* Signals to relay that came before the handle was published. */
static atomic_ullong g_pending_relays;
/* sup-timeout: the -k duration, and GNU's rule that once it is armed the
 * next SIGALRM sends SIGKILL (g_kill_wanted) instead of the -s signal. */
static double g_kill_after;
/* sup-timeout: GNU timeout's own signals (INT, QUIT, HUP, TERM, the -s
 * one), each relayed with a SIGCONT after it; bit sig - 1. */
static uint64_t g_gnu_signals;
static atomic_bool g_alarm_kills;
static atomic_bool g_kill_wanted;

static uint64_t bit(int sig) { return UINT64_C(1) << (sig - 1); }

/* Never relayed: the terminal's job control and the child's state changes
 * are sup-run's own to follow (terminal.c); KILL and STOP cannot be caught. */
static bool never_relayed(int sig)
{
  return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig == SIGCONT ||
         sig == SIGCHLD || sig == SIGWINCH || sig == SIGKILL || sig == SIGSTOP;
}

void note_caller_signals(void)
{
  for (int sig = 1; sig <= 64; sig++) {
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      g_caller_ignored |= bit(sig);
  }
}

static void wake_main_loop(void)
{
  if (g_wake[1] >= 0) {
    ssize_t ignored = write(g_wake[1], "", 1); /* full: a wake-up is pending */
    (void)ignored;
  }
}

/* sup-run: the first INT, TERM, HUP or QUIT interrupts, a second aborts. */
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

/* Sends what is pending, each signal once whoever gets there first: the
 * handler or publish_proc. sup-timeout follows each relayed signal but
 * KILL and CONT with SIGCONT, as GNU timeout does, so that a stopped
 * command can act on it. */
static void send_pending_relays(sup_proc *p)
{
  uint64_t bits = atomic_exchange(&g_pending_relays, 0);
  for (int sig = 1; bits != 0 && sig <= 64; sig++) {
    if ((bits & bit(sig)) == 0)
      continue;
    bits &= ~bit(sig);
    sup_signal(p, sig);
    if ((g_gnu_signals & bit(sig)) != 0 && sig != SIGKILL && sig != SIGCONT)
      sup_signal(p, SIGCONT);
  }
}

/* The timer (setitimer), armed for `seconds`, or disarmed for 0. */
static void set_timer(double seconds)
{
  struct itimerval it = {{0, 0}, {0, 0}};
  if (seconds > 0 && seconds < 1e9) {
    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)ceil((seconds - (double)it.it_value.tv_sec) * 1e6);
    if (it.it_value.tv_usec >= 1000000) {
      it.it_value.tv_sec++;
      it.it_value.tv_usec = 0;
    }
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
      it.it_value.tv_usec = 1;
  }
  setitimer(ITIMER_REAL, &it, NULL);
}

void start_timer(double seconds) { set_timer(seconds); }

/* What SIGALRM asked for, on the published handle. */
static void act_on_alarm(sup_proc *p)
{
  if (atomic_load(&g_kill_wanted))
    sup_abort(p);
  else if (atomic_load(&g_alarm))
    sup_expire(p);
}

/* SIGALRM: the program's own timer went off, or someone sent it as
 * timeout's own (nested timeouts): the command ends as at its maximum
 * runtime. sup-timeout with -k: after the first, the next one kills. */
static void on_alarm(int sig)
{
  (void)sig;
  int saved_errno = errno;
  if (g_frontend == FRONTEND_TIMEOUT) {
    atomic_store(&g_timed_out, true);
    if (atomic_load(&g_alarm_kills))
      atomic_store(&g_kill_wanted, true);
    else if (g_kill_after > 0)
      atomic_store(&g_alarm_kills, true);
  }
  atomic_store(&g_alarm, true);
  sup_proc *p = atomic_load(&g_proc);
  if (p != NULL)
    act_on_alarm(p);
  wake_main_loop();
  errno = saved_errno;
}

/* A signal relayed as it is: USR1 and USR2 for both programs; for
 * sup-timeout also INT, QUIT, HUP, TERM and the -s signal, the first of
 * which, with -k, arms the SIGKILL as GNU timeout does. */
static void on_relay(int sig)
{
  int saved_errno = errno;
  if ((g_gnu_signals & bit(sig)) != 0) {
    int n = atomic_fetch_add(&g_signal_count, 1) + 1;
    if (n == 1)
      atomic_store(&g_first_signal, sig);
    if (g_kill_after > 0 && !atomic_exchange(&g_alarm_kills, true))
      set_timer(g_kill_after);
  }
  atomic_fetch_or(&g_pending_relays, bit(sig));
  sup_proc *p = atomic_load(&g_proc);
  if (p != NULL)
    send_pending_relays(p);
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
void drain_wake_pipe(void)
{
  char buf[64];
  while (read(g_wake[0], buf, sizeof buf) > 0) {
  }
}

/* The handler for sig, unless sup-run keeps the caller's SIG_IGN: an
 * ignored signal stays ignored, as make and the shells keep it (nohup's
 * SIGHUP, SIGINT in a non-interactive shell's background job). GNU
 * timeout's own signals are taken whatever the caller did, as it takes
 * them. */
static void handle(int sig, void (*handler)(int), const sigset_t *mask, bool even_if_ignored)
{
  if (!even_if_ignored && (g_caller_ignored & bit(sig)) != 0)
    return;
  struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_RESTART};
  sa.sa_mask = *mask;
  sigaction(sig, &sa, NULL);
}

void install_signal_handlers(const struct options *o)
{
  const bool timeout = g_frontend == FRONTEND_TIMEOUT;
  const int ends[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  const int relays[] = {SIGUSR1, SIGUSR2};
  int own = o->signal_zero ? 0 : o->interrupt_signal;
  if (own != 0 && never_relayed(own))
    own = 0;
  g_kill_after = o->kill_after_seconds;

  if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    fprintf(stderr, "%s: cannot create a pipe: %s\n", g_progname, strerror(errno));
    exit(EXIT_SUPRUN);
  }
  /* One handler at a time: the count and the first signal stay consistent. */
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
    sigaddset(&set, ends[i]);
  for (size_t i = 0; i < sizeof relays / sizeof relays[0]; i++)
    sigaddset(&set, relays[i]);
  sigaddset(&set, SIGALRM);
  if (own != 0)
    sigaddset(&set, own);

  if (timeout) {
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
      g_gnu_signals |= bit(ends[i]);
    if (own != 0 && own != SIGALRM)
      g_gnu_signals |= bit(own);
  }
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
    handle(ends[i], timeout ? on_relay : on_signal, &set, timeout);
  for (size_t i = 0; i < sizeof relays / sizeof relays[0]; i++)
    if (relays[i] != own)
      handle(relays[i], on_relay, &set, false);
  handle(SIGALRM, on_alarm, &set, timeout);
  /* The signal sent on a timeout, received: relayed by sup-timeout as GNU
   * relays it; for sup-run one more that interrupts. */
  if (own != 0 && own != SIGALRM)
    handle(own, timeout ? on_relay : on_signal, &set, timeout);

  /* Job control (see follow_stopped_command). The SIGCHLD handler also
   * replaces an inherited SIG_IGN, which would let the kernel reap the
   * command and lose its exit status; it never reaps: that is libsup's. */
  struct sigaction job = {.sa_handler = on_job_control, .sa_flags = SA_RESTART};
  sigaction(SIGCHLD, &job, NULL);
  /* An ignored SIGCONT the command is to inherit stays ignored here too. */
  if (!(o->keep_ignored_signals && (g_caller_ignored & bit(SIGCONT)) != 0))
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

  /* EPIPE instead of death, so the command is ended and reaped first
   * (unless sup-timeout -s PIPE: then it is relayed, as GNU does). */
  if (own != SIGPIPE)
    signal(SIGPIPE, SIG_IGN);
  /* Writing the command's output while it holds the terminal's foreground
   * must not stop sup-run when the terminal has TOSTOP set, nor may moving
   * the foreground between the command's group and sup-run's: with SIGTTOU
   * ignored the kernel lets both through. */
  signal(SIGTTOU, SIG_IGN);
}

void append_reset_signals(struct strbuf *sb, const struct options *o)
{
  /* GNU timeout's child gets these at their default whatever the caller
   * ignored: the signals timeout handles, and TTIN and TTOU, which it
   * resets itself. */
  uint64_t reset = 0;
  if (g_frontend == FRONTEND_TIMEOUT) {
    const int gnu[] = {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGALRM, SIGTTIN, SIGTTOU, SIGCHLD};
    for (size_t i = 0; i < sizeof gnu / sizeof gnu[0]; i++)
      reset |= bit(gnu[i]);
    if (!o->signal_zero && o->interrupt_signal > 0)
      reset |= bit(o->interrupt_signal);
  }
  /* What this program ignores for itself (SIGPIPE, SIGTTOU) and the caller
   * did not is not the caller's to pass on. */
  for (int sig = 1; sig <= 64; sig++) {
    struct sigaction now;
    if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &now) == 0 &&
        now.sa_handler == SIG_IGN && (g_caller_ignored & bit(sig)) == 0)
      reset |= bit(sig);
  }
  sb_puts(sb, "[");
  bool first = true;
  for (int sig = 1; sig <= 64; sig++) {
    const char *name = sup_signal_name(sig);
    if ((reset & bit(sig)) == 0 || name == NULL)
      continue;
    sb_printf(sb, "%s\"%s\"", first ? "" : ", ", name);
    first = false;
  }
  sb_puts(sb, "]");
}

/* Publishes the handle to the signal handlers and catches up with signals
 * that arrived while it was not yet there. From the store on, the handlers
 * see the handle; before it, the count and the flags do: sup_interrupt,
 * sup_abort and sup_expire are latched and idempotent, so seeing a signal
 * both ways is harmless, and a relayed signal is sent once
 * (send_pending_relays). */
void publish_proc(sup_proc *p)
{
  atomic_store(&g_proc, p);
  if (g_frontend == FRONTEND_RUN) {
    int n = atomic_load(&g_signal_count);
    if (n >= 1)
      sup_interrupt(p);
    if (n >= 2)
      sup_abort(p);
  }
  send_pending_relays(p);
  act_on_alarm(p);
}

bool giving_up(void) { return atomic_load(&g_signal_count) >= 2; }
