/*
 * bench_sup: measures sup against the raw system calls it wraps, in one
 * process, interleaved, so that drift on a shared machine hits both sides.
 *
 *   bench_sup [--quick] [--rows LIST] [--writer PATH]
 *       Runs the rows (default all, LIST is comma-separated names from
 *       ROWS below) and prints one JSON object per row on stdout. Progress
 *       goes to stderr. Exits non-zero when a result is malformed (wrong
 *       outcome, lost bytes, a child that would not start); durations are
 *       reported, never judged, so the smoke test cannot fail on a slow day.
 *
 *   bench_sup peer {raw|sup} {spawn|capture} COUNT
 *       The peer protocol shared with tests/bench/peers/: one "BENCH" line
 *       (see README.md there). "raw" is posix_spawn + waitpid / a read() loop,
 *       the limit every peer is compared with.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sup.h"

extern char **environ;

/* Absolute paths for every implementation, so that no side pays for a PATH
 * search the other skips (a PATH may list many directories before /bin). */
#define TRUE_PATH "/bin/true"
#define SLEEP_PATH "/bin/sleep"

enum { READ_CHUNK = 64 * 1024 };

/* ---- small utilities --------------------------------------------------- */

static void vnote(const char *fmt, va_list ap) {
  fputs("bench_sup: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

static void note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vnote(fmt, ap);
  va_end(ap);
}

static _Noreturn void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vnote(fmt, ap);
  va_end(ap);
  exit(1);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void sleep_us(double us) {
  struct timespec ts;
  ts.tv_sec = (time_t)(us / 1e6);
  ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static double cpu_ms_self(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static long csw_self(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n, size);
  if (p == NULL) die("out of memory");
  return p;
}

typedef struct {
  double *v;
  size_t n, cap;
} samples;

static void push(samples *s, double x) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 64;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (s->v == NULL) die("out of memory");
  }
  s->v[s->n++] = x;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Linear interpolation between closest ranks (numpy's default), on a sorted
 * copy so that the caller's order is kept. */
static double pct(const samples *s, double q) {
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

static double mean(const samples *s) {
  double sum = 0;
  for (size_t i = 0; i < s->n; i++) sum += s->v[i];
  return s->n ? sum / (double)s->n : NAN;
}

static double smin(const samples *s) {
  double m = INFINITY;
  for (size_t i = 0; i < s->n; i++) m = s->v[i] < m ? s->v[i] : m;
  return m;
}

static double smax(const samples *s) {
  double m = -INFINITY;
  for (size_t i = 0; i < s->n; i++) m = s->v[i] > m ? s->v[i] : m;
  return m;
}

static void print_stats(const char *key, const samples *s) {
  printf("\"%s\":{\"n\":%zu,\"p50\":%.3f,\"p99\":%.3f,\"mean\":%.3f,"
         "\"min\":%.3f,\"max\":%.3f}",
         key, s->n, pct(s, 0.5), pct(s, 0.99), mean(s), smin(s), smax(s));
}

/* Ends a row: prints each ("key", samples) pair of the NULL-terminated list
 * as "key":{stats}, closes the JSON object and frees the samples. */
static void finish_row(const char *key, samples *s, ...) {
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

static void print_samples(const samples *s) {
  for (size_t i = 0; i < s->n; i++) printf(i ? ",%.2f" : "%.2f", s->v[i]);
}

/* ---- raw side: what a program would do without sup -------------------- */

static pid_t raw_spawn(const char *path, char *const argv[],
                       const posix_spawn_file_actions_t *fa) {
  pid_t pid;
  int rc = posix_spawn(&pid, path, fa, NULL, argv, environ);
  if (rc != 0) die("posix_spawn %s: %s", path, strerror(rc));
  return pid;
}

static int raw_wait(pid_t pid) {
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) die("waitpid %d: %s", (int)pid, strerror(errno));
  }
  return st;
}

static void raw_true(void) {
  char *argv[] = {(char *)TRUE_PATH, NULL};
  int st = raw_wait(raw_spawn(TRUE_PATH, argv, NULL));
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("raw true: status %#x", st);
}

static pid_t raw_sleep(const char *secs) {
  char *argv[] = {(char *)SLEEP_PATH, (char *)secs, NULL};
  return raw_spawn(SLEEP_PATH, argv, NULL);
}

/* What one capture cost: wall time from before the spawn until the child is
 * reaped (sup: the result is final), and the host's CPU time over the same
 * span. Checking the captured bytes comes after, outside both. */
typedef struct {
  double secs, cpu_ms;
} capture_cost;

static capture_cost cost_since(double t0, double c0) {
  capture_cost c = {(now_us() - t0) / 1e6, cpu_ms_self() - c0};
  return c;
}

/* Reads a child's stdout through a pipe into a 64 KiB buffer until EOF, the
 * way a program without sup would capture it. */
static capture_cost raw_capture(const char *writer, uint64_t bytes,
                                char *const envp[]) {
  double c0 = cpu_ms_self(), t0 = now_us();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) die("pipe2: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  char *argv[] = {(char *)writer, count, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, writer, &fa, NULL, argv, envp);
  if (rc != 0) die("posix_spawn %s: %s", writer, strerror(rc));
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  static char buf[READ_CHUNK];
  uint64_t total = 0;
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      total += (uint64_t)n;
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      die("read: %s", strerror(errno));
    }
  }
  close(fds[0]);
  int st = raw_wait(pid);
  capture_cost cost = cost_since(t0, c0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("raw writer: status %#x", st);
  if (total != bytes)
    die("raw capture: read %llu of %llu bytes", (unsigned long long)total,
        (unsigned long long)bytes);
  return cost;
}

/* ---- sup side ----------------------------------------------------------- */

/* Builds a spec with cJSON so that a writer path with quotes or backslashes
 * still makes valid JSON. Numbers < 0 are left out of the spec, and so is
 * the writer's CPU (see bench_writer.c). */
static char *spec_env(const char *a0, const char *a1, long idle_timeout_ms,
                      int writer_cpu) {
  cJSON *o = cJSON_CreateObject();
  cJSON *argv = cJSON_AddArrayToObject(o, "argv");
  cJSON_AddItemToArray(argv, cJSON_CreateString(a0));
  if (a1) cJSON_AddItemToArray(argv, cJSON_CreateString(a1));
  if (idle_timeout_ms >= 0)
    cJSON_AddNumberToObject(o, "idle_timeout_ms", (double)idle_timeout_ms);
  if (writer_cpu >= 0) {
    char cpu[16];
    snprintf(cpu, sizeof cpu, "%d", writer_cpu);
    cJSON *env = cJSON_AddObjectToObject(o, "env");
    cJSON_AddStringToObject(env, "SUP_BENCH_WRITER_CPU", cpu);
  }
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (s == NULL) die("out of memory");
  return s;
}

static char *spec(const char *a0, const char *a1, long idle_timeout_ms) {
  return spec_env(a0, a1, idle_timeout_ms, -1);
}

static sup_proc *sup_start(const char *json) {
  sup_proc *p = NULL;
  char err[256];
  int rc = sup_spawn_ex(json, &p, err, sizeof err);
  if (rc < 0) die("sup_spawn %s: %s (%s)", json, sup_strerror(rc), err);
  if (p == NULL) die("sup_spawn %s returned 0 and no handle", json);
  return p;
}

static void sup_finish(sup_proc *p) {
  int rc = sup_poll(p, -1);
  if (rc != 1) die("sup_poll(-1) returned %d (%s)", rc, sup_strerror(rc));
}

static void expect_outcome(sup_proc *p, int want, const char *what) {
  int got = sup_result_outcome(p);
  if (got != want) {
    const char *r = sup_result(p);
    die("%s: outcome %d (%s), want %s; result %s", what, got,
        got > 0 && sup_outcome_name(got) ? sup_outcome_name(got)
                                         : sup_strerror(got),
        sup_outcome_name(want), r ? r : "(null)");
  }
}

static void sup_true(const char *json) {
  sup_proc *p = sup_start(json);
  sup_finish(p);
  if (sup_result_outcome(p) != SUP_OUTCOME_EXITED || sup_result_exit_code(p))
    die("sup true: result %s", sup_result(p));
  sup_release(p);
}

static capture_cost sup_capture(const char *json, uint64_t bytes) {
  double c0 = cpu_ms_self(), t0 = now_us();
  sup_proc *p = sup_start(json);
  sup_finish(p);
  capture_cost cost = cost_since(t0, c0);
  expect_outcome(p, SUP_OUTCOME_EXITED, "capture");
  if (sup_result_exit_code(p) != 0) die("capture: %s", sup_result(p));
  int64_t total = sup_output_total(p, SUP_STDOUT);
  size_t kept = 0;
  const char *out = sup_result_output(p, SUP_STDOUT, &kept);
  int64_t omitted = sup_result_omitted_bytes(p, SUP_STDOUT);
  if (total < 0 || (uint64_t)total != bytes || out == NULL || omitted < 0 ||
      (uint64_t)omitted + kept != bytes)
    die("capture: %llu bytes written, sup counted %lld, kept %zu, omitted "
        "%lld",
        (unsigned long long)bytes, (long long)total, kept, (long long)omitted);
  for (size_t i = 0; i < kept; i++)
    if (out[i] != 'x') die("capture: byte %zu of the kept output is wrong", i);
  sup_release(p);
  return cost;
}

/* Waits until pid has exec'd sleep and sleeps in it, so that the latency
 * rows time the signal and the reaping, not the tail of the exec. */
static void wait_sleeping(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  double deadline = now_us() + 5e6;
  while (now_us() < deadline) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t n = read(fd, buf, sizeof buf - 1);
      close(fd);
      if (n > 0) {
        buf[n] = '\0';
        char *open_paren = strchr(buf, '(');
        char *close_paren = strrchr(buf, ')');
        if (open_paren && close_paren && close_paren[1] == ' ' &&
            close_paren - open_paren - 1 == 5 &&
            memcmp(open_paren + 1, "sleep", 5) == 0 && close_paren[2] == 'S')
          return;
      }
    }
    sleep_us(50);
  }
  die("child %d did not reach sleep within 5 s", (int)pid);
}

/* ---- options ------------------------------------------------------------ */

struct opts {
  int quick;
  char writer[PATH_MAX];
  char rows[256];
};

static int row_wanted(const struct opts *o, const char *name) {
  if (o->rows[0] == '\0') return 1;
  size_t len = strlen(name);
  for (const char *r = o->rows; *r;) {
    const char *end = strchr(r, ',');
    size_t n = end ? (size_t)(end - r) : strlen(r);
    if (n == len && memcmp(r, name, len) == 0) return 1;
    r += n + (end != NULL);
  }
  return 0;
}

/* ---- rows --------------------------------------------------------------- */

/* Per spawn: posix_spawn+waitpid and sup_spawn+sup_poll+sup_release, in
 * alternating batches (A B A B ...). */
static void spawn_rounds(int rounds, int batch, samples *raw, samples *sup) {
  char *json = spec(TRUE_PATH, NULL, -1);
  for (int w = 0; w < 5; w++) {
    raw_true();
    sup_true(json);
  }
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < batch; i++) {
      double t0 = now_us();
      raw_true();
      push(raw, now_us() - t0);
    }
    for (int i = 0; i < batch; i++) {
      double t0 = now_us();
      sup_true(json);
      push(sup, now_us() - t0);
    }
  }
  cJSON_free(json);
}

static void row_spawn(const struct opts *o) {
  samples raw = {0}, sup = {0};
  int rounds = o->quick ? 2 : 300, batch = 10;
  note("spawn: %d x %d per side", rounds, batch);
  spawn_rounds(rounds, batch, &raw, &sup);
  printf("{\"row\":\"spawn\",\"unit\":\"us\",\"batch\":%d,", batch);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

static void fork_exec_true(void) {
  pid_t pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    char *argv[] = {(char *)TRUE_PATH, NULL};
    execve(TRUE_PATH, argv, environ);
    _exit(127);
  }
  int st = raw_wait(pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("fork true: status %#x", st);
}

static void row_heap(const struct opts *o) {
  size_t heap = o->quick ? (size_t)64 << 20 : (size_t)2 << 30;
  note("heap: touching %zu MiB", heap >> 20);
  char *mem = malloc(heap);
  if (mem == NULL) die("cannot allocate the %zu MiB heap", heap >> 20);
  /* Small pages, as a heap of many small objects would have: a huge-page
   * heap would hide the page-table copy that makes fork slow. */
  madvise(mem, heap, MADV_NOHUGEPAGE);
  memset(mem, 1, heap);

  samples raw = {0}, sup = {0}, fork_ref = {0};
  int rounds = o->quick ? 2 : 100, batch = 10;
  note("heap: %d x %d per side", rounds, batch);
  spawn_rounds(rounds, batch, &raw, &sup);
  int forks = o->quick ? 3 : 20;
  for (int i = 0; i < forks; i++) {
    double t0 = now_us();
    fork_exec_true();
    push(&fork_ref, now_us() - t0);
  }
  /* Read the heap back so that it cannot be optimised away. */
  unsigned sum = 0;
  for (size_t i = 0; i < heap; i += 4096) sum += (unsigned char)mem[i];
  if (sum != heap / 4096) die("heap: contents changed");
  free(mem);

  printf("{\"row\":\"heap\",\"unit\":\"us\",\"batch\":%d,\"heap_bytes\":%zu,",
         batch, heap);
  finish_row("baseline", &raw, "sup", &sup, "fork_exec", &fork_ref, NULL);
}

/* Pins every thread of this process, the library's loop thread included, to
 * the CPUs in `set`; children spawned afterwards inherit it. */
static void pin_threads(const cpu_set_t *set) {
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) die("opendir /proc/self/task: %s", strerror(errno));
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    pid_t tid = (pid_t)atoi(e->d_name);
    if (sched_setaffinity(tid, sizeof *set, set) != 0)
      die("sched_setaffinity(%d): %s", (int)tid, strerror(errno));
  }
  closedir(d);
}

/* environ plus SUP_BENCH_WRITER_CPU=cpu, for the raw side's posix_spawn. */
static char **env_with_cpu(int cpu) {
  size_t n = 0;
  while (environ[n]) n++;
  char **envp = xcalloc(n + 2, sizeof *envp);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "SUP_BENCH_WRITER_CPU=", 21) != 0)
      envp[k++] = environ[i];
  static char var[48];
  snprintf(var, sizeof var, "SUP_BENCH_WRITER_CPU=%d", cpu);
  envp[k] = var;
  return envp;
}

/* Pipe throughput depends on whether reader and writer share a CPU (2x
 * apart on a 2-core VM, and the scheduler picks either way at random), so
 * each placement is a row of its own: every thread of this process on the
 * first allowed CPU, and the writer on that same CPU, then on the next. */
static void row_capture(const struct opts *o) {
  uint64_t bytes = o->quick ? (uint64_t)8 << 20 : (uint64_t)1 << 30;
  int rounds = o->quick ? 2 : 9;
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    die("sched_getaffinity: %s", strerror(errno));
  int cpus[2], ncpus = 0;
  for (int c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
    if (CPU_ISSET(c, &allowed)) cpus[ncpus++] = c;
  /* The library's thread is created by the first spawn; it must exist
   * before pinning, or it would escape it. */
  char *true_json = spec(TRUE_PATH, NULL, -1);
  sup_true(true_json);
  cJSON_free(true_json);

  for (int place = 0; place < ncpus; place++) {
    const char *name = place == 0 ? "capture_1cpu" : "capture_2cpu";
    int writer_cpu = cpus[place];
    char *json = spec_env(o->writer, count, -1, writer_cpu);
    char **envp = env_with_cpu(writer_cpu);
    cpu_set_t host;
    CPU_ZERO(&host);
    CPU_SET(cpus[0], &host);
    pin_threads(&host);
    samples raw = {0}, sup = {0}, raw_cpu = {0}, sup_cpu = {0};
    note("%s: %d x %llu MiB per side, host on CPU %d, writer on CPU %d", name,
         rounds, (unsigned long long)(bytes >> 20), cpus[0], writer_cpu);
    for (int r = 0; r < rounds; r++) {
      capture_cost c = raw_capture(o->writer, bytes, envp);
      push(&raw, (double)bytes / c.secs / 1e6);
      push(&raw_cpu, c.cpu_ms);
      c = sup_capture(json, bytes);
      push(&sup, (double)bytes / c.secs / 1e6);
      push(&sup_cpu, c.cpu_ms);
    }
    pin_threads(&allowed);
    free(envp);
    cJSON_free(json);
    printf("{\"row\":\"%s\",\"unit\":\"MB/s\",\"bytes\":%llu,"
           "\"host_cpu\":%d,\"writer_cpu\":%d,",
           name, (unsigned long long)bytes, cpus[0], writer_cpu);
    finish_row("baseline", &raw, "sup", &sup, "baseline_cpu_ms", &raw_cpu,
               "sup_cpu_ms", &sup_cpu, NULL);
  }
}

/* sup_abort / sup_interrupt to final result, against kill + waitpid with the
 * same signal, alternating one of each. */
static void row_stop(const struct opts *o, int abort_row) {
  const char *name = abort_row ? "abort" : "interrupt";
  int sig = abort_row ? SIGKILL : SIGTERM;
  int n = o->quick ? 5 : 300;
  char *json = spec(SLEEP_PATH, "100", -1);
  samples raw = {0}, sup = {0};
  note("%s: %d per side", name, n);
  for (int i = 0; i < n; i++) {
    pid_t pid = raw_sleep("100");
    wait_sleeping(pid);
    double t0 = now_us();
    kill(pid, sig);
    int st = raw_wait(pid);
    push(&raw, now_us() - t0);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
      die("%s: raw child status %#x", name, st);

    sup_proc *p = sup_start(json);
    wait_sleeping(sup_pid(p));
    t0 = now_us();
    int rc = abort_row ? sup_abort(p) : sup_interrupt(p);
    sup_finish(p);
    push(&sup, now_us() - t0);
    if (rc != 0) die("%s returned %d", name, rc);
    expect_outcome(p, abort_row ? SUP_OUTCOME_ABORTED : SUP_OUTCOME_INTERRUPTED,
                   name);
    if (sup_result_term_signal(p) != sig)
      die("%s: term signal %d, want %d", name, sup_result_term_signal(p), sig);
    if (!abort_row && sup_result_forced_kill(p) != 0)
      die("interrupt: sleep needed SIGKILL: %s", sup_result(p));
    sup_release(p);
  }
  cJSON_free(json);
  printf("{\"row\":\"%s\",\"unit\":\"us\",", name);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

/* A silent child with an idle timeout, against a raw loop that polls the
 * child's pipes with the same deadline and then sends SIGTERM. */
static void raw_idle(double threshold_ms, samples *signal_late,
                     samples *final_late) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    die("pipe2: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  char *argv[] = {(char *)SLEEP_PATH, (char *)"100", NULL};
  double t0 = now_us();
  pid_t pid = raw_spawn(SLEEP_PATH, argv, &fa);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  double deadline = t0 + threshold_ms * 1e3;
  struct pollfd pf[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  for (;;) {
    double left = deadline - now_us();
    if (left <= 0) break;
    struct timespec ts = {(time_t)(left / 1e6),
                          (long)(fmod(left, 1e6) * 1e3)};
    int n = ppoll(pf, 2, &ts, NULL);
    if (n < 0 && errno != EINTR) die("ppoll: %s", strerror(errno));
    if (n > 0) die("idle: the silent child wrote something");
  }
  double ts = now_us();
  kill(pid, SIGTERM);
  int st = raw_wait(pid);
  double te = now_us();
  close(out[0]);
  close(err[0]);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
    die("idle: raw child status %#x", st);
  push(signal_late, (ts - t0) / 1e3 - threshold_ms);
  push(final_late, (te - t0) / 1e3 - threshold_ms);
}

static double sigterm_at_ms(sup_proc *p) {
  const char *r = sup_result(p);
  cJSON *root = r ? cJSON_Parse(r) : NULL;
  if (root == NULL) die("idle: result is not JSON: %s", r ? r : "(null)");
  cJSON *sent = cJSON_GetObjectItemCaseSensitive(root, "signals_sent");
  double at = NAN;
  cJSON *s;
  cJSON_ArrayForEach(s, sent) {
    cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "signal");
    cJSON *when = cJSON_GetObjectItemCaseSensitive(s, "at_ms");
    if (cJSON_IsString(name) && strcmp(name->valuestring, "SIGTERM") == 0 &&
        cJSON_IsNumber(when)) {
      at = when->valuedouble;
      break;
    }
  }
  cJSON_Delete(root);
  if (isnan(at)) die("idle: no SIGTERM with at_ms in signals_sent: %s", r);
  return at;
}

static void row_idle(const struct opts *o) {
  const long threshold = 100;
  int n = o->quick ? 3 : 100;
  char *json = spec(SLEEP_PATH, "100", threshold);
  samples raw_sig = {0}, raw_fin = {0}, sup_sig = {0}, sup_fin = {0},
          sup_dur = {0};
  int early = 0;
  note("idle: %d per side, threshold %ld ms", n, threshold);
  for (int i = 0; i < n; i++) {
    raw_idle((double)threshold, &raw_sig, &raw_fin);

    double t0 = now_us();
    sup_proc *p = sup_start(json);
    sup_finish(p);
    double late = (now_us() - t0) / 1e3 - (double)threshold;
    expect_outcome(p, SUP_OUTCOME_IDLE_TIMEOUT, "idle");
    double at = sigterm_at_ms(p) - (double)threshold;
    double dur = sup_result_duration_ms(p) - (double)threshold;
    early += at < 0 || dur < 0 || late < 0;
    push(&sup_fin, late);
    push(&sup_sig, at);
    push(&sup_dur, dur);
    sup_release(p);
  }
  cJSON_free(json);
  printf("{\"row\":\"idle\",\"unit\":\"ms\",\"threshold_ms\":%ld,"
         "\"early\":%d,",
         threshold, early);
  finish_row("baseline", &raw_fin, "baseline_signal", &raw_sig, "sup", &sup_fin,
             "sup_signal", &sup_sig, "sup_duration", &sup_dur, NULL);
}

static void raise_limits(int children) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      rl.rlim_cur < (rlim_t)children * 2) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NPROC, &rl);
  }
}

/* Process CPU (every thread, so the library's too) over a window in which
 * the host does nothing while `children` silent children run. The baseline
 * holds the same number of raw children, with nobody watching them. */
static void row_cpu(const struct opts *o) {
  int n = o->quick ? 20 : 1000;
  double window_s = o->quick ? 0.5 : 10.0;
  raise_limits(n);
  pid_t *pids = xcalloc((size_t)n, sizeof *pids);
  sup_proc **procs = xcalloc((size_t)n, sizeof *procs);
  char *json = spec(SLEEP_PATH, "600", -1);
  note("cpu: %d silent children, %.1f s window per side", n, window_s);

  for (int i = 0; i < n; i++) pids[i] = raw_sleep("600");
  sleep_us(200e3);
  double c0 = cpu_ms_self();
  long w0 = csw_self();
  sleep_us(window_s * 1e6);
  double raw_cpu = cpu_ms_self() - c0;
  long raw_csw = csw_self() - w0;
  for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
  for (int i = 0; i < n; i++) raw_wait(pids[i]);

  for (int i = 0; i < n; i++) procs[i] = sup_start(json);
  /* Let every child finish its exec before the window opens, so that only
   * supervision is measured, not the tail of the spawns. */
  sleep_us(200e3);
  c0 = cpu_ms_self();
  w0 = csw_self();
  sleep_us(window_s * 1e6);
  double sup_cpu = cpu_ms_self() - c0;
  long sup_csw = csw_self() - w0;
  for (int i = 0; i < n; i++)
    if (sup_poll(procs[i], 0) != 0) die("cpu: child %d ended early: %s", i,
                                        sup_result(procs[i]));
  for (int i = 0; i < n; i++) sup_abort(procs[i]);
  for (int i = 0; i < n; i++) {
    sup_finish(procs[i]);
    expect_outcome(procs[i], SUP_OUTCOME_ABORTED, "cpu");
    sup_release(procs[i]);
  }
  cJSON_free(json);
  free(pids);
  free(procs);
  printf("{\"row\":\"cpu\",\"unit\":\"ms\",\"children\":%d,\"seconds\":%.1f,"
         "\"baseline\":{\"cpu_ms\":%.3f,\"context_switches\":%ld},"
         "\"sup\":{\"cpu_ms\":%.3f,\"context_switches\":%ld}}\n",
         n, window_s, raw_cpu, raw_csw, sup_cpu, sup_csw);
  fflush(stdout);
}

static long count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) die("opendir /proc/self/fd: %s", strerror(errno));
  long n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1; /* the directory stream's own descriptor */
}

static double heap_bytes(void) {
  struct mallinfo2 mi = mallinfo2();
  return (double)mi.uordblks + (double)mi.hblkhd;
}

static double rss_bytes(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "re");
  if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2)
    die("cannot read /proc/self/statm");
  fclose(f);
  return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static void row_capacity(const struct opts *o) {
  int target = o->quick ? 50 : 6000;
  raise_limits(target);
  struct rlimit nofile, nproc;
  getrlimit(RLIMIT_NOFILE, &nofile);
  getrlimit(RLIMIT_NPROC, &nproc);
  sup_proc **procs = xcalloc((size_t)target, sizeof *procs);
  double *spawn_us = xcalloc((size_t)target, sizeof *spawn_us);
  char *json = spec(SLEEP_PATH, "600", -1);
  note("capacity: up to %d children at once", target);
  /* The library's thread, loop and their descriptors are created by the
   * first spawn: make it before the counting starts, so that only what each
   * child costs is counted. */
  char *true_json = spec(TRUE_PATH, NULL, -1);
  sup_true(true_json);

  long fd0 = count_fds();
  double heap0 = heap_bytes(), rss0 = rss_bytes();
  int reached = 0, err = 0;
  char errbuf[256] = "";
  while (reached < target) {
    double t0 = now_us();
    err = sup_spawn_ex(json, &procs[reached], errbuf, sizeof errbuf);
    spawn_us[reached] = now_us() - t0;
    if (err < 0) break;
    reached++;
  }
  long fds = count_fds() - fd0;
  double heap = heap_bytes() - heap0, rss = rss_bytes() - rss0;
  int alive = 0;
  for (int i = 0; i < reached; i++) alive += sup_poll(procs[i], 0) == 0;
  if (reached == 0) die("capacity: no child started: %s (%s)",
                        sup_strerror(err), errbuf);

  int k = reached < 100 ? reached : 100;
  double first = 0, last = 0;
  for (int i = 0; i < k; i++) {
    first += spawn_us[i];
    last += spawn_us[reached - k + i];
  }
  /* Spawning with every descriptor of the peak open: the kernel copies the
   * fd table into each child and closes it again at exec, so some growth
   * with the number of children is intrinsic. posix_spawn under the same
   * load shows how much. */
  samples raw_peak = {0}, sup_peak = {0};
  for (int i = 0; i < (o->quick ? 5 : 50); i++) {
    double t1 = now_us();
    raw_true();
    push(&raw_peak, now_us() - t1);
    t1 = now_us();
    sup_true(true_json);
    push(&sup_peak, now_us() - t1);
  }
  cJSON_free(true_json);
  double t0 = now_us();
  for (int i = 0; i < reached; i++) sup_abort(procs[i]);
  for (int i = 0; i < reached; i++) {
    sup_finish(procs[i]);
    expect_outcome(procs[i], SUP_OUTCOME_ABORTED, "capacity");
    sup_release(procs[i]);
  }
  double teardown_ms = (now_us() - t0) / 1e3;
  cJSON_free(json);
  free(procs);
  free(spawn_us);

  printf("{\"row\":\"capacity\",\"target\":%d,\"reached\":%d,\"alive\":%d,",
         target, reached, alive);
  if (err < 0)
    printf("\"error\":\"%s\",", sup_strerror(err));
  else
    printf("\"error\":null,");
  printf("\"fd_limit\":%lld,\"nproc_limit\":%lld,\"fds_per_child\":%.3f,"
         "\"heap_kib_per_child\":%.3f,\"rss_kib_per_child\":%.3f,"
         "\"spawn_us_first\":%.1f,\"spawn_us_last\":%.1f,"
         "\"teardown_ms\":%.1f,",
         nofile.rlim_cur == RLIM_INFINITY ? -1LL : (long long)nofile.rlim_cur,
         nproc.rlim_cur == RLIM_INFINITY ? -1LL : (long long)nproc.rlim_cur,
         (double)fds / reached, heap / 1024.0 / reached,
         rss / 1024.0 / reached, first / k, last / k, teardown_ms);
  finish_row("peak_spawn_baseline", &raw_peak, "peak_spawn_sup", &sup_peak, NULL);
}

/* ---- peer protocol ------------------------------------------------------ */

static int peer(int argc, char **argv) {
  if (argc != 5) die("usage: bench_sup peer {raw|sup} {spawn|capture} COUNT");
  const char *impl = argv[2], *mode = argv[3];
  char *end = NULL;
  unsigned long long count = strtoull(argv[4], &end, 10);
  if (*argv[4] == '\0' || *end != '\0' || count == 0)
    die("bad count '%s'", argv[4]);
  int use_sup = strcmp(impl, "sup") == 0;
  if (!use_sup && strcmp(impl, "raw") != 0) die("unknown impl '%s'", impl);
  char version[64];
  if (use_sup)
    snprintf(version, sizeof version, "%d.%d.%d", sup_version() / 10000,
             sup_version() / 100 % 100, sup_version() % 100);
  else
    snprintf(version, sizeof version, "glibc-%s", gnu_get_libc_version());

  if (strcmp(mode, "spawn") == 0) {
    char *json = spec(TRUE_PATH, NULL, -1);
    samples s = {0};
    for (unsigned long long i = 0; i < count + 5; i++) {
      double t0 = now_us();
      if (use_sup)
        sup_true(json);
      else
        raw_true();
      if (i >= 5) push(&s, now_us() - t0);
    }
    printf("BENCH impl=%s version=%s mode=spawn count=%llu samples_us=",
           use_sup ? "sup" : "raw", version, count);
    print_samples(&s);
    putchar('\n');
    cJSON_free(json);
    free(s.v);
    return 0;
  }
  if (strcmp(mode, "capture") == 0) {
    const char *writer = getenv("SUP_BENCH_WRITER");
    if (writer == NULL || *writer == '\0') die("SUP_BENCH_WRITER is not set");
    capture_cost c;
    if (use_sup) {
      char *json = spec(writer, argv[4], -1);
      c = sup_capture(json, count);
      cJSON_free(json);
    } else {
      c = raw_capture(writer, count, environ);
    }
    /* Both capture functions fail unless every byte arrived. */
    printf("BENCH impl=%s version=%s mode=capture count=%llu bytes=%llu "
           "seconds=%.6f\n",
           use_sup ? "sup" : "raw", version, count, count, c.secs);
    return 0;
  }
  die("unknown mode '%s'", mode);
  return 2;
}

/* ---- main --------------------------------------------------------------- */

static void default_writer(char *out, size_t cap) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("readlink /proc/self/exe: %s", strerror(errno));
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  if ((size_t)snprintf(out, cap, "%s/bench_writer", self) >= cap)
    die("path too long");
}

static const char *const ROWS[] = {"spawn", "heap", "capture", "abort",
                                   "interrupt", "idle", "cpu", "capacity"};

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "peer") == 0) return peer(argc, argv);

  struct opts o = {0};
  default_writer(o.writer, sizeof o.writer);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      o.quick = 1;
    } else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
      snprintf(o.rows, sizeof o.rows, "%s", argv[++i]);
    } else if (strcmp(argv[i], "--writer") == 0 && i + 1 < argc) {
      snprintf(o.writer, sizeof o.writer, "%s", argv[++i]);
    } else {
      fprintf(stderr,
              "usage: %s [--quick] [--rows spawn,heap,capture,abort,"
              "interrupt,idle,cpu,capacity] [--writer PATH]\n"
              "       %s peer {raw|sup} {spawn|capture} COUNT\n",
              argv[0], argv[0]);
      return 2;
    }
  }
  for (const char *r = o.rows; *r;) {
    const char *end = strchr(r, ',');
    size_t n = end ? (size_t)(end - r) : strlen(r), known = 0;
    for (size_t k = 0; k < sizeof ROWS / sizeof *ROWS; k++)
      known |= strlen(ROWS[k]) == n && memcmp(ROWS[k], r, n) == 0;
    if (!known) die("unknown row '%.*s'", (int)n, r);
    r += n + (end != NULL);
  }
  if (access(o.writer, X_OK) != 0)
    die("writer %s: %s (pass --writer)", o.writer, strerror(errno));
  if (sup_version() != SUP_VERSION_NUMBER)
    die("header is version %d, library %d", SUP_VERSION_NUMBER,
        sup_version());

  printf("{\"row\":\"meta\",\"sup_version\":%d,\"libc\":\"%s\",\"quick\":%s}\n",
         sup_version(), gnu_get_libc_version(), o.quick ? "true" : "false");
  fflush(stdout);
  if (row_wanted(&o, "spawn")) row_spawn(&o);
  if (row_wanted(&o, "capture")) row_capture(&o);
  if (row_wanted(&o, "abort")) row_stop(&o, 1);
  if (row_wanted(&o, "interrupt")) row_stop(&o, 0);
  if (row_wanted(&o, "idle")) row_idle(&o);
  if (row_wanted(&o, "cpu")) row_cpu(&o);
  if (row_wanted(&o, "capacity")) row_capacity(&o);
  /* Last: after the 2 GiB heap is freed nothing else runs, so no other row
   * inherits a fragmented or swollen address space. */
  if (row_wanted(&o, "heap")) row_heap(&o);
  return 0;
}
