/*
 * bench_child: the children of the deadline and scale rows, the same program
 * for sup, the raw C loops and the Go and Python peers, so that the sides
 * differ only in how the parent watches it.
 *
 *   bench_child idle     writes "w NS\n" (NS: CLOCK_MONOTONIC in ns, taken
 *                        just before the write) to stdout, then falls silent
 *   bench_child quiet    writes nothing
 *       Both then wait for SIGTERM, write "t NS\n" (when it arrived) and die
 *       from it. CLOCK_MONOTONIC is one clock for every process, so the
 *       parent can time the deadline from the child's last byte and the
 *       signal's arrival without trusting either side's own bookkeeping.
 *
 *   bench_child chatty PERIOD_MS
 *       Writes one 64-byte line to stdout every PERIOD_MS (absolute ticks,
 *       so the rate does not drift) until it is killed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { LINE_BYTES = 64 };

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void write_all(const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(STDOUT_FILENO, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    buf += n;
    len -= (size_t)n;
  }
}

static int wait_for_term(int announce) {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  /* Blocked before the first byte: the signal cannot arrive unseen. */
  sigprocmask(SIG_BLOCK, &term, NULL);
  char line[64];
  if (announce) {
    int64_t t = now_ns();
    int n = snprintf(line, sizeof line, "w %lld\n", (long long)t);
    write_all(line, (size_t)n);
  }
  int sig;
  while ((sig = sigwaitinfo(&term, NULL)) < 0 && errno == EINTR) {
  }
  int64_t t = now_ns();
  int n = snprintf(line, sizeof line, "t %lld\n", (long long)t);
  write_all(line, (size_t)n);
  /* Die from the signal, as an ordinary child would. */
  signal(SIGTERM, SIG_DFL);
  raise(SIGTERM);
  sigprocmask(SIG_UNBLOCK, &term, NULL);
  return 1;
}

static _Noreturn void chatty(long period_ms) {
  char line[LINE_BYTES];
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (unsigned long i = 0;; i++) {
    int n = snprintf(line, sizeof line, "line %010lu pid %d", i, (int)getpid());
    memset(line + n, '.', sizeof line - 1 - (size_t)n);
    line[sizeof line - 1] = '\n';
    write_all(line, sizeof line);
    next.tv_nsec += period_ms * 1000000L;
    while (next.tv_nsec >= 1000000000L) {
      next.tv_nsec -= 1000000000L;
      next.tv_sec++;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
    }
  }
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "idle") == 0) return wait_for_term(1);
  if (argc == 2 && strcmp(argv[1], "quiet") == 0) return wait_for_term(0);
  if (argc == 3 && strcmp(argv[1], "chatty") == 0) {
    char *end = NULL;
    long ms = strtol(argv[2], &end, 10);
    if (*argv[2] != '\0' && *end == '\0' && ms > 0) chatty(ms);
  }
  fprintf(stderr, "usage: %s idle | quiet | chatty PERIOD_MS\n", argv[0]);
  return 2;
}
