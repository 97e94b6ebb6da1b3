/* bench_util: the helpers bench_sup and bench_modes share (see bench_util.h). */
#define _GNU_SOURCE
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- messages and the clock --------------------------------------------- */

void vnote(const char *fmt, va_list ap) {
  fprintf(stderr, "%s: ", bench_prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vnote(fmt, ap);
  va_end(ap);
}

_Noreturn void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vnote(fmt, ap);
  va_end(ap);
  exit(1);
}

double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n, size);
  if (p == NULL) die("out of memory");
  return p;
}

/* ---- samples and the JSON rows ------------------------------------------ */

void push(samples *s, double x) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 64;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (s->v == NULL) die("out of memory");
  }
  s->v[s->n++] = x;
}

int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Linear interpolation between closest ranks (numpy's default, and run's),
 * on a sorted copy so that the caller's order is kept. */
double pct(const samples *s, double q) {
  if (s->n == 0) return NAN;
  double *c = xcalloc(s->n, sizeof *c);
  memcpy(c, s->v, s->n * sizeof *c);
  qsort(c, s->n, sizeof *c, cmp_double);
  double pos = q * (double)(s->n - 1);
  size_t lo = (size_t)pos;
  double frac = pos - (double)lo;
  double r = lo + 1 < s->n ? c[lo] + (c[lo + 1] - c[lo]) * frac : c[lo];
  free(c);
  return r;
}

double mean(const samples *s) {
  double sum = 0;
  for (size_t i = 0; i < s->n; i++) sum += s->v[i];
  return s->n ? sum / (double)s->n : NAN;
}

double smin(const samples *s) {
  double m = INFINITY;
  for (size_t i = 0; i < s->n; i++) m = s->v[i] < m ? s->v[i] : m;
  return m;
}

double smax(const samples *s) {
  double m = -INFINITY;
  for (size_t i = 0; i < s->n; i++) m = s->v[i] > m ? s->v[i] : m;
  return m;
}

/* No samples print null: NaN is not JSON. */
void print_stats(const char *key, const samples *s) {
  if (s->n == 0) {
    printf("\"%s\":null", key);
    return;
  }
  printf("\"%s\":{\"n\":%zu,\"p50\":%.3f,\"p99\":%.3f,\"mean\":%.3f,"
         "\"min\":%.3f,\"max\":%.3f}",
         key, s->n, pct(s, 0.5), pct(s, 0.99), mean(s), smin(s), smax(s));
}

/* Ends a row: prints each ("key", samples) pair of the NULL-terminated list
 * as "key":{stats}, closes the JSON object and frees the samples. */
void finish_row(const char *key, samples *s, ...) {
  va_list ap;
  va_start(ap, s);
  for (int first = 1; key != NULL; first = 0) {
    if (!first) putchar(',');
    print_stats(key, s);
    free(s->v);
    key = va_arg(ap, const char *);
    if (key != NULL) s = va_arg(ap, samples *);
  }
  va_end(ap);
  printf("}\n");
  fflush(stdout);
}

/* warm untimed calls of each side in turn (first spawns fault in the
 * library and the page cache), then rounds of a batch of a and a batch of
 * b (A B A B ...), so that drift on a shared machine hits both sides. */
void alternate_batches(int warm, int rounds, int batch, bench_side a, bench_side b) {
  for (int w = 0; w < warm; w++) {
    a.fn(a.arg);
    b.fn(b.arg);
  }
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < batch; i++) {
      double t0 = now_us();
      a.fn(a.arg);
      push(a.s, now_us() - t0);
    }
    for (int i = 0; i < batch; i++) {
      double t0 = now_us();
      b.fn(b.arg);
      push(b.s, now_us() - t0);
    }
  }
}

/* ---- raw side: what a program would do without sup ---------------------- */

int raw_wait(pid_t pid) {
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) die("waitpid %d: %s", (int)pid, strerror(errno));
  }
  return st;
}

/* One /dev/null for every raw child, as sup keeps one: the child dup2s it
 * instead of opening the path. A program that runs raw children from
 * several threads calls it once before they start. */
int dev_null(void) {
  static int fd = -1;
  if (fd < 0 && (fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
    die("open /dev/null: %s", strerror(errno));
  return fd;
}

void set_nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
    die("fcntl O_NONBLOCK: %s", strerror(errno));
}

void write_all(int fd, const char *d, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, d, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      die("write: %s", strerror(errno));
    }
    d += w;
    n -= (size_t)w;
  }
}

raw_child raw_start(const char *path, char *const argv[], char *const envp[]) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    die("pipe2: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, dev_null(), 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  raw_child c = {0, out[0], err[0]};
  int rc = posix_spawn(&c.pid, path, &fa, &attr, argv, envp ? envp : environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  if (rc != 0) die("posix_spawn %s: %s", path, strerror(rc));
  return c;
}

/* Reads what is in *fd into buf (discarding what does not fit); at EOF or
 * an error closes it and sets it to -1. */
void raw_drain(int *fd, char *buf, size_t cap) {
  ssize_t n = read(*fd, buf, cap);
  if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) return;
  close(*fd);
  *fd = -1;
}

/* Polls the child's pipes (and its pidfd, when pidfd >= 0) until both pipes
 * are at EOF and the child has exited, then reaps it: sup's final result
 * needs the same. Returns the wait status. The buffer is on the stack so
 * that several threads may run raw children at once (bench_modes' threads
 * row). */
int raw_finish(raw_child *c, int pidfd) {
  char buf[READ_CHUNK];
  int exited = pidfd < 0;
  while (c->out >= 0 || c->err >= 0 || !exited) {
    struct pollfd pf[3] = {{c->out, POLLIN, 0}, {c->err, POLLIN, 0},
                           {exited ? -1 : pidfd, POLLIN, 0}};
    if (poll(pf, 3, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll: %s", strerror(errno));
    }
    if (pf[0].revents) raw_drain(&c->out, buf, sizeof buf);
    if (pf[1].revents) raw_drain(&c->err, buf, sizeof buf);
    if (pf[2].revents) exited = 1;
  }
  if (pidfd < 0) return raw_wait(c->pid);
  siginfo_t info;
  memset(&info, 0, sizeof info);
  while (waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED) != 0)
    if (errno != EINTR) die("waitid: %s", strerror(errno));
  close(pidfd);
  return info.si_code == CLD_EXITED ? W_EXITCODE(info.si_status, 0)
                                    : W_EXITCODE(0, info.si_status);
}

/* posix_spawn of /bin/true as sup spawns it, its pipes read to EOF, reaped. */
void raw_true(void) {
  char *argv[] = {(char *)TRUE_PATH, NULL};
  raw_child c = raw_start(TRUE_PATH, argv, NULL);
  int st = raw_finish(&c, -1);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("raw true: status %#x", st);
}

/* raw_true as a bench_side's fn. */
void raw_true_side(const void *unused) {
  (void)unused;
  raw_true();
}

/* ---- the head + tail sup keeps, by hand --------------------------------- */

void keeper_init(keeper *k, uint64_t limit) {
  memset(k, 0, sizeof *k);
  k->head_cap = (size_t)(limit / 2);
  k->ring_cap = (size_t)(limit - limit / 2);
  /* Untouched pages cost nothing: what is never written is never RSS. */
  k->buf = malloc(limit ? (size_t)limit : 1);
  if (k->buf == NULL) die("out of memory");
}

void keeper_append(keeper *k, const char *d, size_t n) {
  k->total += n;
  if (k->head_len < k->head_cap) {
    size_t m = n < k->head_cap - k->head_len ? n : k->head_cap - k->head_len;
    memcpy(k->buf + k->head_len, d, m);
    k->head_len += m;
    d += m;
    n -= m;
  }
  if (n == 0 || k->ring_cap == 0) return;
  char *ring = k->buf + k->head_cap;
  if (n >= k->ring_cap) {
    memcpy(ring, d + (n - k->ring_cap), k->ring_cap);
    k->ring_start = 0;
    k->ring_len = k->ring_cap;
    return;
  }
  size_t at = (k->ring_start + k->ring_len) % k->ring_cap;
  size_t first = n < k->ring_cap - at ? n : k->ring_cap - at;
  memcpy(ring + at, d, first);
  memcpy(ring, d + first, n - first);
  if (k->ring_len + n > k->ring_cap) {
    k->ring_start = (k->ring_start + k->ring_len + n - k->ring_cap) % k->ring_cap;
    k->ring_len = k->ring_cap;
  } else {
    k->ring_len += n;
  }
}

static void reverse(char *a, size_t n) {
  for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
    char t = a[i];
    a[i] = a[j - 1];
    a[j - 1] = t;
  }
}

/* The kept bytes in one piece (the caller frees them); *len their length.
 * The ring only fills once the head is full, so head and ring are
 * contiguous. */
char *keeper_join(keeper *k, size_t *len) {
  char *ring = k->buf + k->head_cap;
  if (k->ring_start != 0) {
    /* Rotate left by ring_start: three reversals, no second buffer. */
    reverse(ring, k->ring_start);
    reverse(ring + k->ring_start, k->ring_cap - k->ring_start);
    reverse(ring, k->ring_cap);
    k->ring_start = 0;
  }
  *len = k->head_len + k->ring_len;
  char *out = k->buf;
  k->buf = NULL;
  return out;
}

/* Reads one ready pipe as sup's loop does: a few 64 KiB reads per wakeup,
 * stopping at a short read; keeps what it reads and, when tee_fd >= 0,
 * writes each chunk whole to it (sup's "tee"). */
static void keep_pipe(int *fd, keeper *k, char *buf, int tee_fd) {
  for (int i = 0; i < 4; i++) {
    ssize_t n = read(*fd, buf, READ_CHUNK);
    if (n > 0) {
      keeper_append(k, buf, (size_t)n);
      if (tee_fd >= 0) write_all(tee_fd, buf, (size_t)n);
      if ((size_t)n < READ_CHUNK) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    close(*fd);
    *fd = -1;
    return;
  }
}

/* Polls both pipes of c until EOF, as sup's loop: each kept in its keeper,
 * stdout also copied to tee_fd when that is >= 0. The caller reaps. */
void raw_keep_all(raw_child *c, keeper *out, keeper *err, int tee_fd) {
  static char buf[READ_CHUNK];
  set_nonblocking(c->out);
  set_nonblocking(c->err);
  while (c->out >= 0 || c->err >= 0) {
    struct pollfd pf[2] = {{c->out, POLLIN, 0}, {c->err, POLLIN, 0}};
    if (poll(pf, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll: %s", strerror(errno));
    }
    if (pf[0].revents) keep_pipe(&c->out, out, buf, tee_fd);
    if (pf[1].revents) keep_pipe(&c->err, err, buf, -1);
  }
}

/* ---- sup side ----------------------------------------------------------- */

sup_proc *sup_start(const char *json) {
  sup_proc *p = NULL;
  char err[SUP_ERRBUF_SIZE];
  int rc = sup_spawn_ex(json, &p, err, sizeof err);
  if (rc < 0) die("sup_spawn %s: %s (%s)", json, sup_strerror(rc), err);
  if (p == NULL) die("sup_spawn %s returned 0 and no handle", json);
  return p;
}

void sup_finish(sup_proc *p) {
  int rc = sup_poll(p, -1);
  if (rc != 1) die("sup_poll(-1) returned %d (%s)", rc, sup_strerror(rc));
}

/* Runs the spec to its final result, which must be exit code 0. */
void sup_true(const char *json) {
  sup_proc *p = sup_start(json);
  sup_finish(p);
  if (sup_result_outcome(p) != SUP_OUTCOME_EXITED || sup_result_exit_code(p) != 0)
    die("sup: %s: result %.300s", json, sup_result(p));
  sup_release(p);
}

/* sup_true as a bench_side's fn; arg is the spec. */
void sup_true_side(const void *json) {
  sup_true(json);
}

/* ---- options ------------------------------------------------------------ */

/* Whether name is in the comma-separated list rows (an empty list: all). */
int row_wanted(const char *rows, const char *name) {
  if (rows[0] == '\0') return 1;
  size_t len = strlen(name);
  for (const char *r = rows; *r;) {
    const char *end = strchr(r, ',');
    size_t n = end ? (size_t)(end - r) : strlen(r);
    if (n == len && memcmp(r, name, len) == 0) return 1;
    r += n + (end != NULL);
  }
  return 0;
}

/* Dies naming the first entry of rows that is not one of known. */
void check_rows(const char *rows, const char *const known[], size_t n_known) {
  for (const char *r = rows; *r;) {
    const char *end = strchr(r, ',');
    size_t n = end ? (size_t)(end - r) : strlen(r), found = 0;
    for (size_t k = 0; k < n_known; k++)
      found |= strlen(known[k]) == n && memcmp(known[k], r, n) == 0;
    if (!found) die("unknown row '%.*s'", (int)n, r);
    r += n + (end != NULL);
  }
}

/* out = the directory of this program's executable + "/" + rel: where the
 * build puts the helpers by default. */
void beside_self(char *out, size_t cap, const char *rel) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("readlink /proc/self/exe: %s", strerror(errno));
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  if ((size_t)snprintf(out, cap, "%s/%s", self, rel) >= cap) die("path too long");
}

void reset_handled_signals(void) {
  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0) continue;
    if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    sigaction(sig, &sa, NULL);
  }
}
