/*
 * The terminal and job control: the command's process group holds the
 * terminal's foreground while it runs, and its stops are followed by the
 * program's own group, so the shell sees the job as one.
 */
#define _GNU_SOURCE

#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sup-run.h"

/* The window size of sup-run's own terminal (stdin, else stdout), when it
 * has one with a size set. */
bool own_window_size(struct winsize *size)
{
  for (int fd = STDIN_FILENO; fd <= STDOUT_FILENO; fd++)
    if (ioctl(fd, TIOCGWINSZ, size) == 0 && size->ws_row > 0 && size->ws_col > 0)
      return true;
  return false;
}

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

/* sup-timeout follows Ctrl-Z, but not a stop for reading or writing the
 * terminal in the background: as GNU timeout (`timeout 10 dd &`), it keeps
 * running so that the timeout still ends the stopped command. */
static bool follows(int sig)
{
  return g_frontend == FRONTEND_RUN || sig == SIGTSTP;
}

/* Whether stdin is the controlling terminal with `pgrp` in its foreground. */
bool terminal_foreground_is(pid_t pgrp)
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
void take_terminal_back(pid_t from)
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
void handle_job_control(sup_proc *p, int *conts_seen)
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
        is_tty_stop(info.si_status) && follows(info.si_status))
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
