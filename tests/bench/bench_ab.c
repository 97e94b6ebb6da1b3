/* Two builds of libsup in one process (dlmopen), alternating: how a change
 * compares with the library before it, free of the drift between runs.
 *
 *   bench_ab A.so B.so spawn  [ROUNDS]           (default 100 rounds of 10)
 *   bench_ab A.so B.so chatty CHILD [ROUNDS] [N] (default 6 rounds, 2000)
 *   bench_ab A.so B.so chatty-default CHILD [ROUNDS] [N]
 *   bench_ab A.so B.so capture WRITER MIB [ROUNDS] [WRITER_CPU]
 *                                               (default 20 rounds)
 *
 * Each library is loaded into a namespace of its own, so each runs its own
 * engine (and finds the sup-sentinel beside it). Rounds alternate which
 * library goes first. spawn: sup_spawn + sup_poll(p, -1) + sup_release of
 * /bin/true, one sample per spawn, and the process's CPU (getrusage, every
 * thread) per spawn over each side's batches. chatty: N children of
 * `CHILD chatty 100` (bench_child), a live reader on every sup_output_fd
 * with backpressure_bytes set (chatty-default: without it), sup_output_read
 * until empty; the process's
 * CPU per line read over a 3 s window after a 1 s settle, per round.
 * capture: `WRITER BYTES` (bench_writer) captured whole (sup_poll(p, -1)),
 * one sample per capture: MB/s, and the process's CPU per MiB. Run under
 * taskset to place this process's threads; WRITER_CPU places the writer.
 * Prints each side's p50 and p99 and B / A. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct sup_proc sup_proc;

typedef struct {
  const char *path;
  int (*spawn_ex)(const char *, sup_proc **, char *, size_t);
  int (*poll)(sup_proc *, int);
  void (*release)(sup_proc *);
  int (*abort_)(sup_proc *);
  int (*output_fd)(sup_proc *, int);
  int (*output_read)(sup_proc *, int, uint64_t *, void *, size_t, size_t *);
  int64_t (*output_total)(sup_proc *, int);
} lib;

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bench_ab: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void *sym(void *h, const char *lib_path, const char *name) {
  void *f = dlsym(h, name);
  if (f == NULL) die("%s: no %s", lib_path, name);
  return f;
}

static lib load(const char *path) {
  void *h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) die("dlmopen %s: %s", path, dlerror());
  lib l;
  memset(&l, 0, sizeof l);
  l.path = path;
  /* POSIX's way to a function from dlsym (ISO C has none). */
  *(void **)&l.spawn_ex = sym(h, path, "sup_spawn_ex");
  *(void **)&l.poll = sym(h, path, "sup_poll");
  *(void **)&l.release = sym(h, path, "sup_release");
  *(void **)&l.abort_ = sym(h, path, "sup_abort");
  *(void **)&l.output_fd = sym(h, path, "sup_output_fd");
  *(void **)&l.output_read = sym(h, path, "sup_output_read");
  *(void **)&l.output_total = sym(h, path, "sup_output_total");
  return l;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cpu_us(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static sup_proc *start(const lib *l, const char *json) {
  sup_proc *p = NULL;
  char err[256] = "";
  int rc = l->spawn_ex(json, &p, err, sizeof err);
  if (rc < 0 || p == NULL) die("%s: sup_spawn %s: %d (%s)", l->path, json, rc, err);
  return p;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  int i = (int)ceil(p * n) - 1;
  return v[i < 0 ? 0 : i];
}

static void report(const char *what, const char *unit, double *a, double *b, int n) {
  double a50 = pct(a, n, 0.5), a99 = pct(a, n, 0.99), b50 = pct(b, n, 0.5), b99 = pct(b, n, 0.99);
  printf("%-22s A p50 %9.2f %s  p99 %9.2f | B p50 %9.2f  p99 %9.2f | B/A p50 %.3f  p99 %.3f  (%d each)\n",
         what, a50, unit, a99, b50, b99, b50 / a50, b99 / a99, n);
}

/* ---- spawn ---- */

static void spawn_batch(const lib *l, int batch, double *times, double *cpu) {
  static const char *json = "{\"argv\": [\"/bin/true\"]}";
  double c0 = cpu_us();
  for (int i = 0; i < batch; i++) {
    double t0 = now_us();
    sup_proc *p = start(l, json);
    if (l->poll(p, -1) != 1) die("%s: sup_poll", l->path);
    l->release(p);
    times[i] = now_us() - t0;
  }
  *cpu = (cpu_us() - c0) / batch;
}

static void row_spawn(const lib *a, const lib *b, int rounds) {
  const int batch = 10;
  int n = rounds * batch;
  double *ta = calloc((size_t)n, sizeof *ta), *tb = calloc((size_t)n, sizeof *tb);
  double *ca = calloc((size_t)rounds, sizeof *ca), *cb = calloc((size_t)rounds, sizeof *cb);
  if (!ta || !tb || !ca || !cb) die("out of memory");
  spawn_batch(a, batch, ta, &ca[0]); /* warm both engines up */
  spawn_batch(b, batch, tb, &cb[0]);
  for (int r = 0; r < rounds; r++) {
    if (r % 2 == 0) {
      spawn_batch(a, batch, ta + r * batch, &ca[r]);
      spawn_batch(b, batch, tb + r * batch, &cb[r]);
    } else {
      spawn_batch(b, batch, tb + r * batch, &cb[r]);
      spawn_batch(a, batch, ta + r * batch, &ca[r]);
    }
  }
  report("spawn+wait /bin/true", "us", ta, tb, n);
  report("host CPU per spawn", "us", ca, cb, rounds);
}

/* ---- chatty ---- */

static void raise_fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

static int chatty_backpressure = 1;

static double chatty_window(const lib *l, const char *child, int n) {
  char json[1024];
  snprintf(json, sizeof json, "{\"argv\": [\"%s\", \"chatty\", \"100\"]%s}", child,
           chatty_backpressure ? ", \"backpressure_bytes\": 1048576" : "");
  sup_proc **procs = calloc((size_t)n, sizeof *procs);
  uint64_t *pos = calloc((size_t)n, sizeof *pos);
  if (!procs || !pos) die("out of memory");
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1: %s", strerror(errno));
  for (int i = 0; i < n; i++) {
    procs[i] = start(l, json);
    int fd = l->output_fd(procs[i], 1);
    if (fd < 0) die("sup_output_fd: %d", fd);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
  }
  static char buf[65536];
  double settle_end = now_us() + 1e6, end = 0, c0 = 0;
  uint64_t lines = 0;
  for (int phase = 0; phase < 2; phase++) {
    double until = phase == 0 ? settle_end : end;
    if (phase == 1) {
      lines = 0;
      c0 = cpu_us();
      end = now_us() + 3e6;
      until = end;
    }
    for (;;) {
      double left = (until - now_us()) / 1e3;
      if (left <= 0) break;
      struct epoll_event evs[256];
      int k = epoll_wait(ep, evs, 256, (int)ceil(left));
      if (k < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
      for (int e = 0; e < k; e++) {
        int i = (int)evs[e].data.u64;
        for (;;) {
          size_t got = 0;
          if (l->output_read(procs[i], 1, &pos[i], buf, sizeof buf, &got) != 0) die("sup_output_read");
          if (got == 0) break;
          for (size_t j = 0; j < got; j++) lines += buf[j] == '\n';
        }
      }
    }
  }
  double per_line = (cpu_us() - c0) / (double)(lines ? lines : 1);
  close(ep);
  for (int i = 0; i < n; i++) l->abort_(procs[i]);
  for (int i = 0; i < n; i++) {
    l->poll(procs[i], -1);
    l->release(procs[i]);
  }
  free(procs);
  free(pos);
  return per_line;
}

static void row_chatty(const lib *a, const lib *b, const char *child, int rounds, int n) {
  raise_fd_limit();
  double *ca = calloc((size_t)rounds, sizeof *ca), *cb = calloc((size_t)rounds, sizeof *cb);
  if (!ca || !cb) die("out of memory");
  for (int r = 0; r < rounds; r++) {
    if (r % 2 == 0) {
      ca[r] = chatty_window(a, child, n);
      cb[r] = chatty_window(b, child, n);
    } else {
      cb[r] = chatty_window(b, child, n);
      ca[r] = chatty_window(a, child, n);
    }
    fprintf(stderr, "round %d: A %.2f us/line, B %.2f us/line\n", r, ca[r], cb[r]);
  }
  report("chatty CPU per line", "us", ca, cb, rounds);
}

/* ---- capture ---- */

static void capture_one(const lib *l, const char *json, uint64_t bytes, double *mbs, double *cpu) {
  double c0 = cpu_us(), t0 = now_us();
  sup_proc *p = start(l, json);
  if (l->poll(p, -1) != 1) die("%s: sup_poll", l->path);
  double t = now_us() - t0, c = cpu_us() - c0;
  if (l->output_total(p, 1) != (int64_t)bytes) die("%s: captured %lld of %llu bytes", l->path,
                                                  (long long)l->output_total(p, 1), (unsigned long long)bytes);
  l->release(p);
  *mbs = (double)bytes / t;
  *cpu = c / (double)(bytes >> 20);
}

static void row_capture(const lib *a, const lib *b, const char *writer, uint64_t mib, int rounds,
                        int writer_cpu) {
  if (mib == 0 || mib > ((uint64_t)1 << 20) || rounds < 1) die("capture: MIB 1 to 1048576, ROUNDS at least 1");
  char json[1024], env[96] = "";
  if (writer_cpu >= 0) snprintf(env, sizeof env, ", \"env\": {\"SUP_BENCH_WRITER_CPU\": \"%d\"}", writer_cpu);
  int len = snprintf(json, sizeof json, "{\"argv\": [\"%s\", \"%llu\"]%s}", writer,
                     (unsigned long long)(mib << 20), env);
  if (len < 0 || (size_t)len >= sizeof json) die("capture: writer path too long");
  double *ta = calloc((size_t)rounds, sizeof *ta), *tb = calloc((size_t)rounds, sizeof *tb);
  double *ca = calloc((size_t)rounds, sizeof *ca), *cb = calloc((size_t)rounds, sizeof *cb);
  if (!ta || !tb || !ca || !cb) die("out of memory");
  capture_one(a, json, mib << 20, &ta[0], &ca[0]); /* warm both up */
  capture_one(b, json, mib << 20, &tb[0], &cb[0]);
  for (int r = 0; r < rounds; r++) {
    if (r % 2 == 0) {
      capture_one(a, json, mib << 20, &ta[r], &ca[r]);
      capture_one(b, json, mib << 20, &tb[r], &cb[r]);
    } else {
      capture_one(b, json, mib << 20, &tb[r], &cb[r]);
      capture_one(a, json, mib << 20, &ta[r], &ca[r]);
    }
  }
  report("capture MB/s", "MB/s", ta, tb, rounds);
  report("host CPU per MiB", "us", ca, cb, rounds);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s A.so B.so spawn [ROUNDS]\n       %s A.so B.so chatty|chatty-default CHILD [ROUNDS] [N]\n"
            "       %s A.so B.so capture WRITER MIB [ROUNDS] [WRITER_CPU]\n",
            argv[0], argv[0], argv[0]);
    return 2;
  }
  lib a = load(argv[1]), b = load(argv[2]);
  if (strcmp(argv[3], "spawn") == 0) {
    row_spawn(&a, &b, argc > 4 ? atoi(argv[4]) : 100);
  } else if ((strcmp(argv[3], "chatty") == 0 || strcmp(argv[3], "chatty-default") == 0) && argc > 4) {
    chatty_backpressure = strcmp(argv[3], "chatty") == 0;
    row_chatty(&a, &b, argv[4], argc > 5 ? atoi(argv[5]) : 6, argc > 6 ? atoi(argv[6]) : 2000);
  } else if (strcmp(argv[3], "capture") == 0 && argc > 5) {
    row_capture(&a, &b, argv[4], strtoull(argv[5], NULL, 10), argc > 6 ? atoi(argv[6]) : 20,
                argc > 7 ? atoi(argv[7]) : -1);
  } else {
    die("unknown row %s", argv[3]);
  }
  return 0;
}
