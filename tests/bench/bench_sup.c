/*
 * bench_sup: measures sup against the raw system calls it wraps, in one
 * process, interleaved, so that drift on a shared machine hits both sides.
 *
 *   bench_sup [--quick] [--rows LIST] [--writer PATH] [--child PATH]
 *       Runs the rows (default all, LIST is comma-separated names from
 *       ROWS below) and prints one JSON object per row on stdout. WRITER is
 *       bench_writer, CHILD bench_child (both default to this program's
 *       directory). Every baseline does sup's work by hand: a child started
 *       with stdin from /dev/null, stdout and stderr in pipes read to EOF,
 *       in a process group of its own; the capture rows also keep sup's
 *       head and tail of the output. Progress
 *       goes to stderr. Exits non-zero when a result is malformed (wrong
 *       outcome, lost bytes, a child that would not start); durations are
 *       reported, never judged, so the smoke test cannot fail on a slow day.
 *
 *   bench_sup peer {raw|sup} {spawn|capture} COUNT
 *       The peer protocol shared with tests/bench/peers/: one "BENCH" line
 *       (see README.md there). "raw" is posix_spawn as sup spawns (pipes read
 *       to EOF, /dev/null stdin, own group) + waitpid / a bare read() loop,
 *       the limit every peer is compared with.
 *
 *   bench_sup rss {keep|sup|sup-output|sup-both|base} WRITER BYTES
 *       One peak-RSS measurement, run by the rss row in a fresh process.
 *
 *   bench_sup default-capture WRITER BYTES ROUNDS
 *       The default_capture rows of one size, run by that row in a fresh
 *       process whose malloc is at glibc's defaults.
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
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>

#include "bench_util.h"

extern char **environ;

const char bench_prog[] = "bench_sup";

/* ---- small utilities --------------------------------------------------- */

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

static pid_t raw_sleep(const char *secs) {
  char *argv[] = {(char *)SLEEP_PATH, (char *)secs, NULL};
  return raw_spawn(SLEEP_PATH, argv, NULL);
}

static int pidfd_of(pid_t pid) {
  int fd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) die("pidfd_open %d: %s", (int)pid, strerror(errno));
  return fd;
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

/* The raw loop that does sup's work: the child started as sup starts it,
 * both pipes polled and kept (head + newest tail, limit as sup's default),
 * the kept stdout joined into one buffer. Timed from before the spawn to
 * the reaped child with its bytes in hand. Returns the cost; *out_kept gets
 * the joined stdout (the caller frees it). */
static capture_cost keep_capture(const char *writer, uint64_t bytes,
                                 char *const envp[], char **out_kept,
                                 size_t *out_len) {
  double c0 = cpu_ms_self(), t0 = now_us();
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  char *argv[] = {(char *)writer, count, NULL};
  raw_child c = raw_start(writer, argv, envp);
  keeper out, err;
  keeper_init(&out, SUP_DEFAULT_MAX_OUTPUT);
  keeper_init(&err, SUP_DEFAULT_MAX_OUTPUT);
  raw_keep_all(&c, &out, &err, -1);
  int st = raw_wait(c.pid);
  size_t err_len;
  *out_kept = keeper_join(&out, out_len);
  free(keeper_join(&err, &err_len));
  capture_cost cost = cost_since(t0, c0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("keep writer: status %#x", st);
  if (out.total != bytes)
    die("keep capture: read %llu of %llu bytes", (unsigned long long)out.total,
        (unsigned long long)bytes);
  uint64_t want = bytes < SUP_DEFAULT_MAX_OUTPUT ? bytes : SUP_DEFAULT_MAX_OUTPUT;
  if (*out_len != want) die("keep capture: kept %zu bytes", *out_len);
  for (size_t i = 0; i < *out_len; i++)
    if ((*out_kept)[i] != 'x') die("keep capture: byte %zu is wrong", i);
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
  char child[PATH_MAX];
  char rows[256];
};

/* ---- rows --------------------------------------------------------------- */

/* What a side of the spawn rows cost the host besides time: CPU of every
 * thread of this process (the library's included, the children's not) and
 * its context switches, summed over that side's batches. The loop's freeing
 * of a batch's last sup handle may run during the next raw batch and count
 * there: one teardown in ten spawns, in sup's favour. */
typedef struct {
  double cpu_ms;
  long csw;
} host_cost;

/* Per spawn: posix_spawn+waitpid and sup_spawn+sup_poll+sup_release, in
 * alternating batches (A B A B ...). */
static void spawn_rounds(int rounds, int batch, samples *raw, samples *sup,
                         host_cost *raw_cost, host_cost *sup_cost) {
  char *json = spec(TRUE_PATH, NULL, -1);
  for (int w = 0; w < 5; w++) {
    raw_true();
    sup_true(json);
  }
  for (int r = 0; r < rounds; r++) {
    double c0 = cpu_ms_self();
    long s0 = csw_self();
    for (int i = 0; i < batch; i++) {
      double t0 = now_us();
      raw_true();
      push(raw, now_us() - t0);
    }
    double c1 = cpu_ms_self();
    long s1 = csw_self();
    for (int i = 0; i < batch; i++) {
      double t0 = now_us();
      sup_true(json);
      push(sup, now_us() - t0);
    }
    raw_cost->cpu_ms += c1 - c0;
    raw_cost->csw += s1 - s0;
    sup_cost->cpu_ms += cpu_ms_self() - c1;
    sup_cost->csw += csw_self() - s1;
  }
  cJSON_free(json);
}

/* The host cost per spawn of each side, as JSON members. */
static void print_host_costs(const host_cost *raw, const host_cost *sup,
                             int spawns) {
  printf("\"baseline_host_cpu_us\":%.1f,\"sup_host_cpu_us\":%.1f,"
         "\"baseline_csw\":%.2f,\"sup_csw\":%.2f,",
         raw->cpu_ms * 1e3 / spawns, sup->cpu_ms * 1e3 / spawns,
         (double)raw->csw / spawns, (double)sup->csw / spawns);
}

static void row_spawn(const struct opts *o) {
  samples raw = {0}, sup = {0};
  host_cost raw_cost = {0}, sup_cost = {0};
  int rounds = o->quick ? 2 : 300, batch = 10;
  note("spawn: %d x %d per side", rounds, batch);
  spawn_rounds(rounds, batch, &raw, &sup, &raw_cost, &sup_cost);
  printf("{\"row\":\"spawn\",\"unit\":\"us\",\"batch\":%d,", batch);
  print_host_costs(&raw_cost, &sup_cost, rounds * batch);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

/* Prints a row that could not be measured here, with why. */
static void print_skipped(const char *row, const char *why) {
  note("%s: skipped: %s", row, why);
  cJSON *skip = cJSON_CreateObject();
  cJSON_AddStringToObject(skip, "row", row);
  cJSON_AddStringToObject(skip, "skipped", why);
  char *line = cJSON_PrintUnformatted(skip);
  if (line == NULL) die("out of memory");
  printf("%s\n", line);
  fflush(stdout);
  cJSON_free(line);
  cJSON_Delete(skip);
}

/* ---- cgroup mode against a raw loop doing the same cgroup work --------- */

/* clone3 as sup's launch.cpp calls it, with the child on a stack of its own
 * (CLONE_VM | CLONE_VFORK, as posix_spawn): the child returns from the
 * system call on that stack, so it must not return from this function; it
 * calls fn(arg) and exits. glibc 2.36 exports no clone3 wrapper. */
#if defined(__x86_64__)
#define BENCH_HAVE_CLONE3 1
long bench_clone3(struct clone_args *args, size_t size, int (*fn)(void *), void *arg);
__asm__(
    "  .text\n"
    "  .p2align 4\n"
    "  .type bench_clone3, @function\n"
    "bench_clone3:\n"
    "  .cfi_startproc\n"
    "  mov %rdx, %r8\n"
    "  mov %rcx, %r9\n"
    "  mov $435, %eax\n"
    "  syscall\n"
    "  test %rax, %rax\n"
    "  jz 1f\n"
    "  ret\n"
    "1:\n"
    "  .cfi_undefined rip\n"
    "  xor %ebp, %ebp\n"
    "  mov %r9, %rdi\n"
    "  call *%r8\n"
    "  mov %eax, %edi\n"
    "  mov $60, %eax\n"
    "  syscall\n"
    "  hlt\n"
    "  .cfi_endproc\n"
    "  .size bench_clone3, .-bench_clone3\n");
#endif

enum { CG_CLONE3, CG_PROCS };
enum { CG_STACK = 64 * 1024 };

/* The floor's cgroups: c<N> in a directory of its own beside sup's host
 * directory, in the same parent. */
typedef struct {
  char dir[PATH_MAX];
  unsigned long next;
  int how;       /* CG_CLONE3, or CG_PROCS where clone3 was refused */
  char *stack;   /* CG_STACK bytes for clone3's child, reused, as sup's */
} raw_cgroup;

typedef struct {
  int null_fd, out, err, procs; /* procs: cgroup.procs to join, or -1 */
  const sigset_t *mask;
} cg_child_args;

/* The child of the floor: what raw_confined_true's child does (handled
 * signals to default, stdio, own group, the host's mask back), and first,
 * where clone3 could not start it in its cgroup, moving itself there as
 * sup's child does (writing "0" to cgroup.procs). */
static int cg_child(void *arg) {
  const cg_child_args *a = arg;
  if (a->procs >= 0 && syscall(SYS_write, a->procs, "0", 1) != 1) return 126;
  reset_handled_signals();
  if (dup2(a->null_fd, 0) < 0 || dup2(a->out, 1) < 0 || dup2(a->err, 2) < 0) return 126;
  setpgid(0, 0);
  sigprocmask(SIG_SETMASK, a->mask, NULL);
  char *argv[] = {(char *)TRUE_PATH, NULL};
  execve(TRUE_PATH, argv, environ);
  return 127;
}

/* Waits (POLLPRI on cgroup.events, as sup's wait_event) until the cgroup
 * of dir_fd has no process left. */
static void cg_wait_empty(int dir_fd) {
  int ev = openat(dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  if (ev < 0) die("open cgroup.events: %s", strerror(errno));
  for (;;) {
    char buf[256];
    ssize_t n = pread(ev, buf, sizeof buf - 1, 0);
    if (n < 0) die("read cgroup.events: %s", strerror(errno));
    buf[n] = '\0';
    if (strstr(buf, "populated 0") != NULL) break;
    struct pollfd pf = {ev, POLLPRI, 0};
    poll(&pf, 1, 10);
  }
  close(ev);
}

/* One spawn and reap of /bin/true in a cgroup of its own, by hand: mkdir,
 * clone3(CLONE_INTO_CGROUP) (or vfork + cgroup.procs), pipes read to EOF,
 * waitid on the pidfd, cgroup.kill for whatever the child left, rmdir
 * (waiting for the cgroup to empty if the kernel says it is busy). */
static void raw_cgroup_true(raw_cgroup *g) {
  char path[PATH_MAX];
  if ((size_t)snprintf(path, sizeof path, "%s/c%lu", g->dir, g->next++) >= sizeof path)
    die("spawn_cgroup_raw: path too long");
  if (mkdir(path, 0755) != 0) die("mkdir %s: %s", path, strerror(errno));
  int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) die("open %s: %s", path, strerror(errno));
  int kill_fd = openat(dir, "cgroup.kill", O_WRONLY | O_CLOEXEC);
  if (kill_fd < 0) die("open %s/cgroup.kill: %s", path, strerror(errno));
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) die("pipe2: %s", strerror(errno));
  sigset_t all, old;
  sigfillset(&all);
  cg_child_args a = {dev_null(), out[1], err[1], -1, &old};
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = -1;
  int pidfd = -1;
#ifdef BENCH_HAVE_CLONE3
  if (g->how == CG_CLONE3) {
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP;
    ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
    ca.exit_signal = SIGCHLD;
    ca.stack = (uint64_t)(uintptr_t)g->stack;
    ca.stack_size = CG_STACK;
    ca.cgroup = (uint64_t)dir;
    long rc = bench_clone3(&ca, sizeof ca, cg_child, &a);
    if (rc < 0) {
      pthread_sigmask(SIG_SETMASK, &old, NULL);
      die("clone3 into %s: %s", path, strerror((int)-rc));
    }
    pid = (pid_t)rc;
  }
#endif
  if (g->how == CG_PROCS) {
    a.procs = openat(dir, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (a.procs < 0) die("open %s/cgroup.procs: %s", path, strerror(errno));
    pid = vfork();
    if (pid == 0) _exit(cg_child(&a));
    close(a.procs);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (pid < 0) die("clone: %s", strerror(errno));
  close(out[1]);
  close(err[1]);
  raw_child c = {pid, out[0], err[0]};
  int st = raw_finish(&c, pidfd);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("raw cgroup true: status %#x", st);
  if (write(kill_fd, "1", 1) != 1) die("write %s/cgroup.kill: %s", path, strerror(errno));
  close(kill_fd);
  while (rmdir(path) != 0) {
    if (errno != EBUSY) die("rmdir %s: %s", path, strerror(errno));
    cg_wait_empty(dir);
  }
  close(dir);
}

static void raw_cgroup_side(const void *arg) { raw_cgroup_true((raw_cgroup *)arg); }

/* The directory (absolute) of the cgroup v2 hierarchy's first mount, and
 * the root of it that this mount shows, as sup's host_cgroup_dir reads
 * them from /proc/self/mountinfo. */
static int cgroup2_mount(char *point, size_t cap, char *root, size_t root_cap) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL) return -1;
  char line[4096];
  int found = -1;
  while (fgets(line, sizeof line, f)) {
    char *dash = strstr(line, " - ");
    if (dash == NULL || strncmp(dash + 3, "cgroup2 ", 8) != 0) continue;
    char r[PATH_MAX], p[PATH_MAX];
    if (sscanf(line, "%*s %*s %*s %4095s %4095s", r, p) != 2) continue;
    snprintf(point, cap, "%s", p);
    snprintf(root, root_cap, "%s", r);
    found = 0;
    break;
  }
  fclose(f);
  return found;
}

/* The parent directory sup makes its cgroups in: a child's cgroup is
 * <parent>/sup-<pid>-<start>/c<N>, so its /proc/self/cgroup, read by a child
 * sup started in cgroup mode, names it two levels up. */
static int sup_cgroup_parent(const char *contained_cat, char *parent, size_t cap) {
  sup_proc *p = sup_start(contained_cat);
  sup_finish(p);
  size_t len = 0;
  const char *out = sup_result_output(p, SUP_STDOUT, &len);
  char text[4096];
  snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text - 1 ? len : sizeof text - 1),
           out ? out : "");
  sup_release(p);
  char *rel = strstr(text, "0::");
  if (rel == NULL) return -1;
  rel += 3;
  rel[strcspn(rel, "\n")] = '\0';
  for (int up = 0; up < 2; up++) {
    char *slash = strrchr(rel, '/');
    if (slash == NULL) return -1;
    *slash = '\0';
  }
  char point[PATH_MAX], root[PATH_MAX];
  if (cgroup2_mount(point, sizeof point, root, sizeof root) != 0) return -1;
  size_t rl = strlen(root);
  if (strcmp(root, "/") != 0 && strncmp(rel, root, rl) == 0) rel += rl;
  snprintf(parent, cap, "%s%s", point, rel);
  return 0;
}

/* Per spawn in cgroup mode against the floor above, in alternating
 * batches; the parent is the one sup uses. Called by row_spawn_cgroup once
 * it has seen cgroup mode work. */
static void row_spawn_cgroup_raw(const struct opts *o, const char *contained) {
  const char *cat = "{\"argv\": [\"/bin/cat\", \"/proc/self/cgroup\"], \"contain\": \"cgroup\"}";
  raw_cgroup g;
  memset(&g, 0, sizeof g);
  char parent[PATH_MAX];
  if (sup_cgroup_parent(cat, parent, sizeof parent) != 0) {
    print_skipped("spawn_cgroup_raw", "cannot tell sup's cgroup parent from a contained child's /proc/self/cgroup");
    return;
  }
  if ((size_t)snprintf(g.dir, sizeof g.dir, "%s/sup-bench-raw-%d", parent, (int)getpid()) >= sizeof g.dir)
    die("spawn_cgroup_raw: path too long");
  if (mkdir(g.dir, 0755) != 0) die("spawn_cgroup_raw: mkdir %s: %s", g.dir, strerror(errno));
  g.stack = mmap(NULL, CG_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (g.stack == MAP_FAILED) die("mmap: %s", strerror(errno));
  const char *how = "vfork + the child writing cgroup.procs (no clone3 stub for this architecture)";
  g.how = CG_PROCS;
#ifdef BENCH_HAVE_CLONE3
  /* One clone3 into a cgroup decides the path for the whole row: where the
   * kernel refuses it (ENOSYS, E2BIG: no CLONE_INTO_CGROUP), the fallback,
   * as sup's own. */
  {
    char probe[PATH_MAX];
    if ((size_t)snprintf(probe, sizeof probe, "%s/probe", g.dir) >= sizeof probe)
      die("spawn_cgroup_raw: path too long");
    if (mkdir(probe, 0755) != 0) die("mkdir %s: %s", probe, strerror(errno));
    int dir = open(probe, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_INTO_CGROUP;
    ca.exit_signal = SIGCHLD;
    ca.cgroup = (uint64_t)dir;
    long rc = syscall(SYS_clone3, &ca, sizeof ca);
    if (rc == 0) _exit(0);
    if (rc > 0) {
      raw_wait((pid_t)rc);
      g.how = CG_CLONE3;
      how = "clone3(CLONE_INTO_CGROUP)";
    } else {
      how = errno == ENOSYS || errno == E2BIG
                ? "vfork + the child writing cgroup.procs (clone3 into a cgroup refused)"
                : "vfork + the child writing cgroup.procs";
      if (errno != ENOSYS && errno != E2BIG) die("clone3 probe: %s", strerror(errno));
    }
    close(dir);
    while (rmdir(probe) != 0 && errno == EBUSY) usleep(1000);
  }
#endif
  samples raw = {0}, sup = {0};
  int rounds = o->quick ? 2 : 300, batch = 10;
  note("spawn_cgroup_raw: %d x %d per side, the floor's cgroups in %s, %s", rounds, batch, g.dir, how);
  alternate_batches(5, rounds, batch, (bench_side){raw_cgroup_side, &g, &raw},
                    (bench_side){sup_true_side, contained, &sup});
  if (rmdir(g.dir) != 0) die("rmdir %s: %s", g.dir, strerror(errno));
  munmap(g.stack, CG_STACK);
  cJSON *head = cJSON_CreateObject();
  cJSON_AddStringToObject(head, "row", "spawn_cgroup_raw");
  cJSON_AddStringToObject(head, "unit", "us");
  cJSON_AddNumberToObject(head, "batch", batch);
  cJSON_AddStringToObject(head, "how", how);
  cJSON_AddStringToObject(head, "parent", parent);
  char *text = cJSON_PrintUnformatted(head);
  cJSON_Delete(head);
  if (text == NULL) die("out of memory");
  text[strlen(text) - 1] = ','; /* finish_row adds the samples and the '}' */
  fputs(text, stdout);
  cJSON_free(text);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

/* Per spawn in cgroup mode against group mode: sup_spawn + sup_poll +
 * sup_release of /bin/true with "contain": "cgroup" and without, in
 * alternating batches. Cgroup mode adds the child's cgroup (mkdir, clone3
 * into it) and its end (cgroup.kill, cgroup.events, cpu.stat, rmdir).
 * Prints the reason instead where no cgroup can be made. */
static void row_spawn_cgroup(const struct opts *o) {
  char *group = spec(TRUE_PATH, NULL, -1);
  cJSON *c = cJSON_Parse(group);
  if (c == NULL) die("out of memory");
  cJSON_AddStringToObject(c, "contain", "cgroup");
  char *contained = cJSON_PrintUnformatted(c);
  cJSON_Delete(c);
  if (contained == NULL) die("out of memory");
  sup_proc *probe = NULL;
  char err[SUP_ERRBUF_SIZE];
  int rc = sup_spawn_ex(contained, &probe, err, sizeof err);
  if (rc != 0) {
    note("spawn_cgroup: skipped: %s", err);
    cJSON *skip = cJSON_CreateObject();
    cJSON_AddStringToObject(skip, "row", "spawn_cgroup");
    cJSON_AddStringToObject(skip, "skipped", err);
    char *line = cJSON_PrintUnformatted(skip);
    printf("%s\n", line);
    fflush(stdout);
    cJSON_free(line);
    cJSON_Delete(skip);
    cJSON_free(group);
    cJSON_free(contained);
    return;
  }
  sup_finish(probe);
  if (sup_result_contained(probe) != SUP_CONTAIN_CGROUP) die("spawn_cgroup: %s", sup_result(probe));
  sup_release(probe);
  samples grp = {0}, cg = {0};
  int rounds = o->quick ? 2 : 300, batch = 10;
  note("spawn_cgroup: %d x %d per side", rounds, batch);
  alternate_batches(5, rounds, batch, (bench_side){sup_true_side, group, &grp},
                    (bench_side){sup_true_side, contained, &cg});
  cJSON_free(group);
  printf("{\"row\":\"spawn_cgroup\",\"unit\":\"us\",\"batch\":%d,", batch);
  finish_row("baseline", &grp, "sup", &cg, NULL);
  row_spawn_cgroup_raw(o, contained);
  cJSON_free(contained);
}

/* ---- confinement: sup's limits, sandbox and user against the same set up
 * by hand ---------------------------------------------------------------- */

enum confine_kind { CONFINE_LIMITS, CONFINE_SANDBOX, CONFINE_SANDBOX_NONET, CONFINE_USER };

/* The user row's ids: nobody's, given as numbers on both sides so that
 * neither looks anything up. */
#define BENCH_UID 65534
#define BENCH_GID 65534

/* The rlimits of the limits row, as sup sets them for its spec (RLIMIT_CPU's
 * hard limit one second above). */
static const struct {
  int resource;
  struct rlimit value;
} BENCH_RLIMITS[] = {
    {RLIMIT_DATA, {1u << 30, 1u << 30}},
    {RLIMIT_CPU, {60, 61}},
    {RLIMIT_FSIZE, {1u << 30, 1u << 30}},
    {RLIMIT_NOFILE, {1024, 1024}},
    {RLIMIT_CORE, {0, 0}},
};
#define BENCH_LIMITS_SPEC                                                            \
  "\"limits\": {\"memory_bytes\": 1073741824, \"cpu_seconds\": 60, \"file_bytes\": " \
  "1073741824, \"open_files\": 1024, \"core_dump\": false}"

/* Landlock's filesystem rights of an ABI that change the filesystem (with
 * truncate from ABI 3, device ioctls from ABI 5), as sup handles them. */
static uint64_t bench_fs_write_rights(long abi) {
  uint64_t all = (1ULL << 13) - 1;
  if (abi >= 2) all |= 1ULL << 13; /* REFER */
  if (abi >= 3) all |= 1ULL << 14; /* TRUNCATE */
  if (abi >= 5) all |= 1ULL << 15; /* IOCTL_DEV */
  /* Writing: every right but execute, read file and read dir. */
  return all & ~((1ULL << 0) | (1ULL << 2) | (1ULL << 3));
}

/* One Landlock rule for path (skipped if it cannot be opened), as sup's
 * add_path: a file gets only the rights a file can hold. */
static void bench_landlock_rule(int ruleset, const char *path, uint64_t access) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
    access &= (1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 14) | (1ULL << 15);
  struct {
    uint64_t allowed_access;
    int32_t parent_fd;
  } __attribute__((packed)) rule = {access, fd};
  if (access != 0 && syscall(SYS_landlock_add_rule, ruleset, 1 /* PATH_BENEATH */, &rule, 0) != 0)
    die("landlock_add_rule %s: %s", path, strerror(errno));
  close(fd);
}

/* The ruleset sup builds for {"write": ["/tmp"]} (and, without network, its
 * TCP rules where the ABI has them): made for every spawn, as sup does. */
static int bench_ruleset(long abi, int network) {
  struct {
    uint64_t handled_access_fs, handled_access_net;
  } attr = {bench_fs_write_rights(abi), 0};
  size_t size = sizeof attr.handled_access_fs;
  if (!network && abi >= 4) {
    attr.handled_access_net = 3; /* BIND_TCP | CONNECT_TCP */
    size = sizeof attr;
  }
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) die("landlock_create_ruleset: %s", strerror(errno));
  const uint64_t device = (1ULL << 1) | (1ULL << 2) | (abi >= 3 ? 1ULL << 14 : 0) | (abi >= 5 ? 1ULL << 15 : 0);
  bench_landlock_rule(ruleset, "/tmp", attr.handled_access_fs);
  bench_landlock_rule(ruleset, "/dev/null", attr.handled_access_fs & device);
  bench_landlock_rule(ruleset, "/dev/tty", attr.handled_access_fs & device);
  return ruleset;
}

/* sup's network filter (lib/sandbox.cpp), x86-64 and aarch64. */
#if defined(__x86_64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#ifdef BENCH_AUDIT_ARCH
static struct sock_filter BENCH_FILTER[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BENCH_AUDIT_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
};
#endif

/* /bin/true started as raw_start starts it (stdin /dev/null, stdout and
 * stderr in pipes, its own group), but with vfork so that the child can
 * confine itself before exec as sup's child does, by raw system calls in
 * sup's order; its pipes read to EOF, reaped. What glibc's posix_spawn does
 * besides is done too, so that this floor is the spawn row's plus the
 * confinement: every signal blocked around the vfork, handled signals back
 * to their default in the child, its mask restored before exec. */
static void raw_confined_true(enum confine_kind kind, long abi) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) die("pipe2: %s", strerror(errno));
  int ruleset = -1;
  if (kind == CONFINE_SANDBOX || kind == CONFINE_SANDBOX_NONET) ruleset = bench_ruleset(abi, kind == CONFINE_SANDBOX);
  /* A uid change in the memory the child shares clears the host's
   * dumpable flag: kept, as sup keeps it. */
  int dumpable = kind == CONFINE_USER ? prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) : -1;
  char *argv[] = {(char *)TRUE_PATH, NULL};
  const int null_fd = dev_null();
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = vfork();
  if (pid < 0) die("vfork: %s", strerror(errno));
  if (pid == 0) {
    reset_handled_signals();
    if (kind == CONFINE_LIMITS) {
      /* sup starts SIGXCPU and SIGXFSZ at their default whenever
       * cpu_seconds or file_bytes is set, even where the host ignores them
       * (an ignored SIGXFSZ would leave the child's write failing with
       * EFBIG and the child going on, past its limit): a floor that skipped
       * them would do less than the limits need. */
      struct sigaction dfl;
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      sigaction(SIGXCPU, &dfl, NULL);
      sigaction(SIGXFSZ, &dfl, NULL);
    }
    if (dup2(null_fd, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(126);
    setpgid(0, 0);
    switch (kind) {
      case CONFINE_LIMITS:
        for (size_t i = 0; i < sizeof BENCH_RLIMITS / sizeof *BENCH_RLIMITS; i++)
          if (syscall(SYS_prlimit64, 0, BENCH_RLIMITS[i].resource, &BENCH_RLIMITS[i].value, NULL) != 0) _exit(126);
        break;
      case CONFINE_USER: {
        gid_t groups[] = {BENCH_GID};
        if (syscall(SYS_setgroups, 1, groups) != 0 || syscall(SYS_setresgid, BENCH_GID, BENCH_GID, BENCH_GID) != 0 ||
            syscall(SYS_setresuid, BENCH_UID, BENCH_UID, BENCH_UID) != 0)
          _exit(126);
        break;
      }
      case CONFINE_SANDBOX:
      case CONFINE_SANDBOX_NONET:
        if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
          _exit(126);
#ifdef BENCH_AUDIT_ARCH
        if (kind == CONFINE_SANDBOX_NONET) {
          struct sock_fprog prog = {(unsigned short)(sizeof BENCH_FILTER / sizeof *BENCH_FILTER), BENCH_FILTER};
          if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) _exit(126);
        }
#endif
        break;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    execve(TRUE_PATH, argv, environ);
    _exit(127);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (dumpable >= 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != dumpable) prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
  if (ruleset >= 0) close(ruleset);
  close(out[1]);
  close(err[1]);
  raw_child c = {pid, out[0], err[0]};
  int st = raw_finish(&c, -1);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("raw confined true (%d): status %#x", (int)kind, st);
}

/* raw_confined_true as a bench_side's fn. */
typedef struct {
  enum confine_kind kind;
  long abi;
} confined_how;

static void raw_confined_side(const void *arg) {
  const confined_how *how = arg;
  raw_confined_true(how->kind, how->abi);
}

/* Per spawn of /bin/true confined one way: sup_spawn + sup_poll +
 * sup_release with the spec's confinement against raw_confined_true, in
 * alternating batches, as the spawn row. */
static void row_spawn_confined(const struct opts *o, const char *row, enum confine_kind kind, const char *extra) {
  long abi = 0;
  if (kind == CONFINE_SANDBOX || kind == CONFINE_SANDBOX_NONET) {
    abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
    if (abi < 0) {
      print_skipped(row, "Landlock is not available on this kernel");
      return;
    }
#ifndef BENCH_AUDIT_ARCH
    if (kind == CONFINE_SANDBOX_NONET) {
      print_skipped(row, "no seccomp filter for this architecture");
      return;
    }
#endif
  }
  if (kind == CONFINE_USER && geteuid() != 0) {
    print_skipped(row, "switching users needs a root host");
    return;
  }
  char json[512];
  snprintf(json, sizeof json, "{\"argv\": [\"%s\"], %s}", TRUE_PATH, extra);
  samples raw = {0}, sup = {0};
  int rounds = o->quick ? 2 : 300, batch = 10;
  note("%s: %d x %d per side", row, rounds, batch);
  confined_how how = {kind, abi};
  alternate_batches(5, rounds, batch, (bench_side){raw_confined_side, &how, &raw},
                    (bench_side){sup_true_side, json, &sup});
  printf("{\"row\":\"%s\",\"unit\":\"us\",\"batch\":%d,\"landlock_abi\":%ld,", row, batch, abi);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

static void row_spawn_limits(const struct opts *o) {
  row_spawn_confined(o, "spawn_limits", CONFINE_LIMITS, BENCH_LIMITS_SPEC);
}

static void row_spawn_sandbox(const struct opts *o) {
  row_spawn_confined(o, "spawn_sandbox", CONFINE_SANDBOX, "\"sandbox\": {\"write\": [\"/tmp\"]}");
  row_spawn_confined(o, "spawn_sandbox_nonet", CONFINE_SANDBOX_NONET,
                     "\"sandbox\": {\"write\": [\"/tmp\"], \"network\": false}");
}

static void row_spawn_user(const struct opts *o) {
  row_spawn_confined(o, "spawn_user", CONFINE_USER, "\"user\": 65534, \"group\": 65534, \"groups\": [65534]");
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
  host_cost raw_cost = {0}, sup_cost = {0};
  int rounds = o->quick ? 2 : 100, batch = 10;
  note("heap: %d x %d per side", rounds, batch);
  spawn_rounds(rounds, batch, &raw, &sup, &raw_cost, &sup_cost);
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
  print_host_costs(&raw_cost, &sup_cost, rounds * batch);
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

/* Every thread of this process, the library's included, on cpu alone. */
static void pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  pin_threads(&one);
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

/* The CPUs the placement rows use: the first two this process may run on,
 * into cpus (returns how many), and the whole set into *allowed. Starts the
 * library's threads first: they are created by the first spawn, and must
 * exist before pinning, or they would escape it. */
static int placements(cpu_set_t *allowed, int cpus[2]) {
  if (sched_getaffinity(0, sizeof *allowed, allowed) != 0)
    die("sched_getaffinity: %s", strerror(errno));
  int ncpus = 0;
  for (int c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
    if (CPU_ISSET(c, allowed)) cpus[ncpus++] = c;
  char *true_json = spec(TRUE_PATH, NULL, -1);
  sup_true(true_json);
  cJSON_free(true_json);
  return ncpus;
}

/* Pipe throughput depends on whether reader and writer share a CPU (2x
 * apart on a 2-core VM, and the scheduler picks either way at random), so
 * each placement is a row of its own: every thread of this process on the
 * first allowed CPU, and the writer on that same CPU, then on the next.
 * Each size is a row too, with three sides in turn: the bare read() loop
 * (keeps nothing: the limit of the pipe), the raw loop that does sup's work
 * (both pipes, group, head + tail kept and joined), and sup. */
static void row_capture(const struct opts *o) {
  static const uint64_t full_sizes[] = {64 << 10, 1 << 20, 16 << 20, 256 << 20,
                                        1 << 30};
  static const int full_rounds[] = {300, 200, 40, 21, 15};
  static const uint64_t quick_sizes[] = {64 << 10, 1 << 20, 24 << 20};
  static const int quick_rounds[] = {3, 3, 2};
  const uint64_t *sizes = o->quick ? quick_sizes : full_sizes;
  const int *rounds_of = o->quick ? quick_rounds : full_rounds;
  size_t nsizes = o->quick ? 3 : 5;
  cpu_set_t allowed;
  int cpus[2];
  int ncpus = placements(&allowed, cpus);

  for (int place = 0; place < ncpus; place++) {
    const char *pname = place == 0 ? "1cpu" : "2cpu";
    int writer_cpu = cpus[place];
    char **envp = env_with_cpu(writer_cpu);
    pin_to(cpus[0]);
    for (size_t s = 0; s < nsizes; s++) {
      uint64_t bytes = sizes[s];
      int rounds = rounds_of[s];
      char count[32];
      snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
      char *json = spec_env(o->writer, count, -1, writer_cpu);
      samples bare = {0}, keep = {0}, sup = {0}, bare_cpu = {0}, keep_cpu = {0},
              sup_cpu = {0};
      note("capture_%s: %d x %llu KiB per side, host on CPU %d, writer on "
           "CPU %d", pname, rounds, (unsigned long long)(bytes >> 10), cpus[0],
           writer_cpu);
      for (int r = 0; r < rounds; r++) {
        /* A new order each round, so no side always follows the same one. */
        for (int k = 0; k < 3; k++) {
          int side = (k + r) % 3;
          capture_cost c;
          if (side == 0) {
            c = raw_capture(o->writer, bytes, envp);
            push(&bare, (double)bytes / c.secs / 1e6);
            push(&bare_cpu, c.cpu_ms);
          } else if (side == 1) {
            char *kept;
            size_t len;
            c = keep_capture(o->writer, bytes, envp, &kept, &len);
            free(kept);
            push(&keep, (double)bytes / c.secs / 1e6);
            push(&keep_cpu, c.cpu_ms);
          } else {
            c = sup_capture(json, bytes);
            push(&sup, (double)bytes / c.secs / 1e6);
            push(&sup_cpu, c.cpu_ms);
          }
        }
      }
      cJSON_free(json);
      printf("{\"row\":\"capture_%s_%llu\",\"placement\":\"%s\",\"unit\":"
             "\"MB/s\",\"bytes\":%llu,\"kept_bytes\":%llu,\"host_cpu\":%d,"
             "\"writer_cpu\":%d,",
             pname, (unsigned long long)bytes, pname, (unsigned long long)bytes,
             (unsigned long long)(bytes < SUP_DEFAULT_MAX_OUTPUT
                                      ? bytes
                                      : SUP_DEFAULT_MAX_OUTPUT),
             cpus[0], writer_cpu);
      finish_row("bare", &bare, "keep", &keep, "sup", &sup, "bare_cpu_ms",
                 &bare_cpu, "keep_cpu_ms", &keep_cpu, "sup_cpu_ms", &sup_cpu,
                 NULL);
    }
    pin_threads(&allowed);
    free(envp);
  }
}

/* ---- capture at the defaults ------------------------------------------- */

/* The floor of the default_capture rows: keep_capture's work (both pipes
 * polled, head + tail kept and joined in place) into two keepers made once
 * and reused, as a program capturing child after child keeps its buffers.
 * Timed from before the spawn to the reaped child with its bytes in hand. */
static capture_cost keep_capture_reused(const char *writer, uint64_t bytes, char *const envp[],
                                        keeper *out, keeper *err) {
  for (keeper *k = out; k != NULL; k = k == out ? err : NULL) {
    char *buf = k->buf;
    size_t head_cap = k->head_cap, ring_cap = k->ring_cap;
    memset(k, 0, sizeof *k);
    k->buf = buf;
    k->head_cap = head_cap;
    k->ring_cap = ring_cap;
  }
  double c0 = cpu_ms_self(), t0 = now_us();
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  char *argv[] = {(char *)writer, count, NULL};
  raw_child c = raw_start(writer, argv, envp);
  raw_keep_all(&c, out, err, -1);
  int st = raw_wait(c.pid);
  size_t len, err_len;
  uint64_t total = out->total;
  out->buf = keeper_join(out, &len);
  err->buf = keeper_join(err, &err_len);
  capture_cost cost = cost_since(t0, c0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("keep writer: status %#x", st);
  if (total != bytes) die("keep capture: read %llu of %llu bytes", (unsigned long long)total,
                          (unsigned long long)bytes);
  uint64_t want = bytes < SUP_DEFAULT_MAX_OUTPUT ? bytes : SUP_DEFAULT_MAX_OUTPUT;
  if (len != want) die("keep capture: kept %zu bytes", len);
  for (size_t i = 0; i < len; i++)
    if (out->buf[i] != 'x') die("keep capture: byte %zu is wrong", i);
  return cost;
}

/* bench_sup default-capture WRITER BYTES ROUNDS: one default_capture row
 * per placement, in this fresh process, whose malloc is left at glibc's
 * defaults (main's mallopt is not called): the way a user's program runs
 * sup. sup_spawn with only argv and the writer's CPU, sup_poll(p, -1) to the
 * final result; against the keeping loop with buffers it reuses. */
static int default_capture_main(int argc, char **argv) {
  if (argc != 5) die("usage: bench_sup default-capture WRITER BYTES ROUNDS");
  const char *writer = argv[2];
  uint64_t bytes = strtoull(argv[3], NULL, 10);
  int rounds = atoi(argv[4]);
  if (bytes == 0 || rounds <= 0) die("default-capture: bad BYTES or ROUNDS");
  cpu_set_t allowed;
  int cpus[2];
  int ncpus = placements(&allowed, cpus);
  keeper out, err;
  keeper_init(&out, SUP_DEFAULT_MAX_OUTPUT);
  keeper_init(&err, SUP_DEFAULT_MAX_OUTPUT);
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  for (int place = 0; place < ncpus; place++) {
    const char *pname = place == 0 ? "1cpu" : "2cpu";
    int writer_cpu = cpus[place];
    char **envp = env_with_cpu(writer_cpu);
    char *json = spec_env(writer, count, -1, writer_cpu);
    pin_to(cpus[0]);
    samples keep = {0}, sup = {0}, keep_cpu = {0}, sup_cpu = {0};
    note("default_capture_%s: %d x %llu KiB per side", pname, rounds,
         (unsigned long long)(bytes >> 10));
    for (int r = 0; r < rounds; r++) {
      for (int k = 0; k < 2; k++) {
        capture_cost c;
        if ((k + r) % 2 == 0) {
          c = keep_capture_reused(writer, bytes, envp, &out, &err);
          push(&keep, (double)bytes / c.secs / 1e6);
          push(&keep_cpu, c.cpu_ms);
        } else {
          c = sup_capture(json, bytes);
          push(&sup, (double)bytes / c.secs / 1e6);
          push(&sup_cpu, c.cpu_ms);
        }
      }
    }
    printf("{\"row\":\"default_capture_%s_%llu\",\"placement\":\"%s\",\"unit\":\"MB/s\","
           "\"bytes\":%llu,\"host_cpu\":%d,\"writer_cpu\":%d,",
           pname, (unsigned long long)bytes, pname, (unsigned long long)bytes, cpus[0], writer_cpu);
    finish_row("keep", &keep, "sup", &sup, "keep_cpu_ms", &keep_cpu, "sup_cpu_ms", &sup_cpu, NULL);
    cJSON_free(json);
    free(envp);
    pin_threads(&allowed);
  }
  free(out.buf);
  free(err.buf);
  return 0;
}

/* Capture at the defaults, each size in a fresh process (default_capture_main):
 * the capture rows run in this one, whose mallopt makes every large buffer
 * reused heap; a program at glibc's defaults gets fresh pages for a freed
 * 16 MiB block, and sup's default path must be fast there too. */
static void row_default_capture(const struct opts *o) {
  static const uint64_t full_sizes[] = {16 << 20, 256 << 20};
  static const int full_rounds[] = {40, 11};
  static const uint64_t quick_sizes[] = {1 << 20, 24 << 20};
  static const int quick_rounds[] = {3, 2};
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) die("readlink /proc/self/exe: %s", strerror(errno));
  self[len] = '\0';
  for (size_t s = 0; s < 2; s++) {
    uint64_t bytes = o->quick ? quick_sizes[s] : full_sizes[s];
    char count[32], rounds[16];
    snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
    snprintf(rounds, sizeof rounds, "%d", o->quick ? quick_rounds[s] : full_rounds[s]);
    char *argv[] = {self, (char *)"default-capture", (char *)o->writer, count, rounds, NULL};
    /* Its rows go to this program's stdout, after what is printed so far. */
    fflush(stdout);
    pid_t pid;
    int rc = posix_spawn(&pid, self, NULL, NULL, argv, environ);
    if (rc != 0) die("posix_spawn %s: %s", self, strerror(rc));
    int st = raw_wait(pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("default-capture: status %#x", st);
  }
}

/* A live reader streaming a child's whole output through sup_output_read,
 * with backpressure_bytes set so that nothing is dropped: it polls
 * sup_output_fd (and so reads the pipe itself) and reads 64 KiB at a time
 * until the result is final and a read gives nothing. Timed from before the spawn to the last byte read
 * with the result final. Every byte must arrive, in order, with no gap. */
static capture_cost sup_stream(const char *writer, uint64_t bytes, int writer_cpu) {
  static char buf[READ_CHUNK];
  char json[PATH_MAX + 256];
  snprintf(json, sizeof json,
           "{\"argv\":[\"%s\",\"%llu\"],\"backpressure_bytes\":%d,"
           "\"env\":{\"SUP_BENCH_WRITER_CPU\":\"%d\"}}",
           writer, (unsigned long long)bytes, 1 << 20, writer_cpu);
  double c0 = cpu_ms_self(), t0 = now_us();
  sup_proc *p = sup_start(json);
  struct pollfd ready = {.fd = sup_output_fd(p, SUP_STDOUT), .events = POLLIN};
  if (ready.fd < 0) die("sup_output_fd: %s", sup_strerror(ready.fd));
  uint64_t pos = 0;
  int final = 0; /* a read that gives nothing once final is the end */
  for (;;) {
    size_t n = 0;
    uint64_t before = pos;
    int rc = sup_output_read(p, SUP_STDOUT, &pos, buf, sizeof buf, &n);
    if (rc < 0) die("sup_output_read: %s", sup_strerror(rc));
    if (pos != before + n) die("stream: a gap of %llu bytes", (unsigned long long)(pos - before - n));
    /* The first and last byte of each read: a byte-by-byte check would be
     * reader work the keeping loop does not do (the unit tests compare
     * every byte of a direct read). */
    if (n > 0 && (buf[0] != 'x' || buf[n - 1] != 'x'))
      die("stream: a wrong byte in %llu..%llu", (unsigned long long)before, (unsigned long long)pos);
    if (n > 0) continue;
    if (final) break;
    if (sup_poll(p, 0) == 1) {
      final = 1;
      continue;
    }
    if (poll(&ready, 1, -1) < 0 && errno != EINTR) die("poll: %s", strerror(errno));
  }
  capture_cost cost = cost_since(t0, c0);
  expect_outcome(p, SUP_OUTCOME_EXITED, "stream");
  if (pos != bytes) die("stream: read %llu of %llu bytes", (unsigned long long)pos, (unsigned long long)bytes);
  sup_release(p);
  return cost;
}

/* 1 GiB (24 MiB quick) streamed live through sup_output_read with
 * backpressure, against the raw loop keeping the same head + tail (sup
 * keeps them too while the reader sees every byte), on one CPU and across
 * two, as the capture rows place them. */
static void row_stream(const struct opts *o) {
  uint64_t bytes = o->quick ? (uint64_t)24 << 20 : (uint64_t)1 << 30;
  int rounds = o->quick ? 2 : 7;
  cpu_set_t allowed;
  int cpus[2];
  int ncpus = placements(&allowed, cpus);
  for (int place = 0; place < ncpus; place++) {
    const char *pname = place == 0 ? "1cpu" : "2cpu";
    int writer_cpu = cpus[place];
    char **envp = env_with_cpu(writer_cpu);
    pin_to(cpus[0]);
    samples keep = {0}, sup = {0};
    note("stream_%s: %d x %llu MiB per side", pname, rounds, (unsigned long long)(bytes >> 20));
    for (int r = 0; r < rounds; r++) {
      for (int k = 0; k < 2; k++) {
        if ((k + r) % 2 == 0) {
          char *kept;
          size_t len;
          capture_cost c = keep_capture(o->writer, bytes, envp, &kept, &len);
          free(kept);
          push(&keep, (double)bytes / c.secs / 1e6);
        } else {
          capture_cost c = sup_stream(o->writer, bytes, writer_cpu);
          push(&sup, (double)bytes / c.secs / 1e6);
        }
      }
    }
    printf("{\"row\":\"stream_%s\",\"placement\":\"%s\",\"unit\":\"MB/s\",\"bytes\":%llu,"
           "\"host_cpu\":%d,\"writer_cpu\":%d,",
           pname, pname, (unsigned long long)bytes, cpus[0], writer_cpu);
    finish_row("keep", &keep, "sup", &sup, NULL);
    pin_threads(&allowed);
    free(envp);
  }
}

/* sup_abort / sup_interrupt to final result, against what a program does
 * with a child started as sup starts one: kill() of the group, poll on the
 * pidfd and both pipes until exit and EOF, waitid. One of each, alternating. */
static void row_stop(const struct opts *o, int abort_row) {
  const char *name = abort_row ? "abort" : "interrupt";
  int sig = abort_row ? SIGKILL : SIGTERM;
  int n = o->quick ? 5 : 1000;
  char *json = spec(SLEEP_PATH, "100", -1);
  samples raw = {0}, sup = {0};
  note("%s: %d per side", name, n);
  for (int i = 0; i < n; i++) {
    char *argv[] = {(char *)SLEEP_PATH, (char *)"100", NULL};
    raw_child c = raw_start(SLEEP_PATH, argv, NULL);
    int pidfd = pidfd_of(c.pid);
    wait_sleeping(c.pid);
    double t0 = now_us();
    kill(-c.pid, sig);
    int st = raw_finish(&c, pidfd);
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

/* ---- deadlines: idle timeout and max runtime ---------------------------- */

/* Both sides run bench_child, which stamps its last byte ("w NS", idle) and
 * the SIGTERM's arrival ("t NS") with CLOCK_MONOTONIC, one clock for every
 * process. Lateness is measured from the same instant on both sides:
 *   idle:        the child's last write + the threshold (each side's idle
 *                clock starts when it reads that byte, a little later, so
 *                neither can be early by this measure unless it is wrong);
 *   max runtime: the spawn call (posix_spawn / sup_spawn) + the threshold.
 * Two lateness figures per child: the signal's arrival in the child, and the
 * result in the caller (pipes at EOF and the child reaped; sup: sup_fd
 * readable and sup_poll(p, 0) == 1).
 *
 * At hundreds of milliseconds per child, 1,000 children per side in a row
 * would take minutes, so the children overlap: one starts every
 * DEADLINE_GAP_MS, alternating raw and sup, all watched by one poll loop in
 * this thread. The gap is chosen so that every deadline falls between two
 * starts (100 and 200 are 4 and 8 mod 12): a start (half a millisecond in
 * posix_spawn or sup_spawn) never delays a deadline's handling. Each raw
 * child has its own timerfd, absolute and in nanoseconds, as sup's loop has
 * one for all. */
enum { DEADLINE_GAP_MS = 12, KIND_IDLE = 0, KIND_MAXRT = 1 };

typedef struct {
  int sup_side, done;
  int64_t t_call, t_result; /* ns */
  /* raw */
  raw_child c;
  int pidfd, tfd, exited, signaled, status;
  /* sup */
  sup_proc *p;
  int sfd;
  char text[128];
  size_t len;
} dl_job;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void arm_at(int tfd, int64_t when) {
  struct itimerspec its;
  memset(&its, 0, sizeof its);
  its.it_value.tv_sec = when / 1000000000;
  its.it_value.tv_nsec = when % 1000000000;
  if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
    die("timerfd_settime: %s", strerror(errno));
}

static void dl_start(dl_job *j, int kind, const char *child, int64_t thr_ns,
                     const char *json) {
  char *argv[] = {(char *)child, (char *)(kind == KIND_IDLE ? "idle" : "quiet"),
                  NULL};
  j->t_call = now_ns();
  if (j->sup_side) {
    j->p = sup_start(json);
    j->sfd = sup_fd(j->p);
    if (j->sfd < 0) die("sup_fd: %s", sup_strerror(j->sfd));
    return;
  }
  j->c = raw_start(child, argv, NULL);
  set_nonblocking(j->c.out);
  set_nonblocking(j->c.err);
  j->pidfd = pidfd_of(j->c.pid);
  j->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (j->tfd < 0) die("timerfd_create: %s", strerror(errno));
  /* Idle: armed from the spawn until the first byte is read, as sup does. */
  arm_at(j->tfd, j->t_call + thr_ns);
}

/* The raw loop's reaction to its fds; returns 1 when the child is done. */
static int dl_raw_event(dl_job *j, int which, int64_t thr_ns, int kind) {
  if (which == 0 || which == 1) {
    int *fd = which == 0 ? &j->c.out : &j->c.err;
    for (;;) {
      char buf[256];
      ssize_t n = read(*fd, buf, sizeof buf);
      if (n > 0) {
        if (which == 0) {
          size_t room = sizeof j->text - 1 - j->len;
          size_t m = (size_t)n < room ? (size_t)n : room;
          memcpy(j->text + j->len, buf, m);
          j->len += m;
        }
        /* Activity moves the idle deadline, until the signal is sent. */
        if (kind == KIND_IDLE && !j->signaled) arm_at(j->tfd, now_ns() + thr_ns);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) break;
      close(*fd);
      *fd = -1;
      break;
    }
  } else if (which == 2) {
    uint64_t x;
    (void)!read(j->tfd, &x, sizeof x);
    if (!j->signaled) {
      kill(-j->c.pid, SIGTERM);
      j->signaled = 1;
    }
  } else {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    while (waitid(P_PIDFD, (id_t)j->pidfd, &info, WEXITED) != 0)
      if (errno != EINTR) die("waitid: %s", strerror(errno));
    j->exited = 1;
    j->status = info.si_code == CLD_KILLED ? info.si_status : -1;
  }
  return j->exited && j->c.out < 0 && j->c.err < 0;
}

/* The child's stamp with this tag, or -1 when its output has none. */
static int64_t find_stamp(const char *text, char tag) {
  for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : s)
    if (s[0] == tag && s[1] == ' ') return strtoll(s + 2, NULL, 10);
  return -1;
}

static void row_deadline(const struct opts *o, int kind, const char *child) {
  const char *name = kind == KIND_IDLE ? "idle" : "max_runtime";
  const long thr_ms = kind == KIND_IDLE ? 100 : 200;
  const int64_t thr_ns = (int64_t)thr_ms * 1000000;
  int per_side = o->quick ? 5 : 1000, total = 2 * per_side;
  cJSON *spec_o = cJSON_CreateObject();
  cJSON *argv = cJSON_AddArrayToObject(spec_o, "argv");
  cJSON_AddItemToArray(argv, cJSON_CreateString(child));
  cJSON_AddItemToArray(argv,
                       cJSON_CreateString(kind == KIND_IDLE ? "idle" : "quiet"));
  cJSON_AddNumberToObject(spec_o, kind == KIND_IDLE ? "idle_timeout_ms"
                                                    : "max_runtime_ms",
                          (double)thr_ms);
  char *json = cJSON_PrintUnformatted(spec_o);
  cJSON_Delete(spec_o);
  dl_job *jobs = xcalloc((size_t)total, sizeof *jobs);
  samples sig[2] = {{0}}, res[2] = {{0}}, sup_own = {0};
  int early[2] = {0, 0}, unstamped[2] = {0, 0};
  note("%s: %d per side, threshold %ld ms, one start every %d ms", name,
       per_side, thr_ms, DEADLINE_GAP_MS);

  int started = 0, finished = 0, live = 0, first_live = 0;
  int64_t next_start = now_ns();
  struct pollfd *pf = xcalloc((size_t)total * 4, sizeof *pf);
  int *owner = xcalloc((size_t)total * 4, sizeof *owner);
  while (finished < total) {
    int64_t now = now_ns();
    if (started < total && now >= next_start) {
      dl_job *j = &jobs[started];
      j->sup_side = started % 2;
      dl_start(j, kind, child, thr_ns, json);
      started++;
      live++;
      next_start += (int64_t)DEADLINE_GAP_MS * 1000000;
      continue;
    }
    nfds_t n = 0;
    while (first_live < started && jobs[first_live].done) first_live++;
    for (int i = first_live; i < started; i++) {
      dl_job *j = &jobs[i];
      if (j->done) continue;
      if (j->sup_side) {
        pf[n] = (struct pollfd){j->sfd, POLLIN, 0};
        owner[n++] = i * 4;
      } else {
        int fds[4] = {j->c.out, j->c.err, j->signaled ? -1 : j->tfd,
                      j->exited ? -1 : j->pidfd};
        for (int k = 0; k < 4; k++) {
          pf[n] = (struct pollfd){fds[k], POLLIN, 0};
          owner[n++] = i * 4 + k;
        }
      }
    }
    struct timespec ts, *tsp = NULL;
    if (started < total) {
      int64_t left = next_start - now_ns();
      if (left < 0) left = 0;
      ts.tv_sec = left / 1000000000;
      ts.tv_nsec = left % 1000000000;
      tsp = &ts;
    }
    int rc = ppoll(pf, n, tsp, NULL);
    if (rc < 0 && errno != EINTR) die("ppoll: %s", strerror(errno));
    for (nfds_t k = 0; rc > 0 && k < n; k++) {
      if (!pf[k].revents) continue;
      dl_job *j = &jobs[owner[k] / 4];
      if (j->done) continue;
      int fin;
      if (j->sup_side) {
        int r = sup_poll(j->p, 0);
        if (r < 0) die("%s: sup_poll: %s", name, sup_strerror(r));
        fin = r == 1;
      } else {
        fin = dl_raw_event(j, owner[k] % 4, thr_ns, kind);
      }
      if (!fin) continue;
      j->t_result = now_ns();
      j->done = 1;
      finished++;
      live--;
      if (j->sup_side) {
        expect_outcome(j->p, kind == KIND_IDLE ? SUP_OUTCOME_IDLE_TIMEOUT
                                               : SUP_OUTCOME_MAX_RUNTIME,
                       name);
        if (sup_result_term_signal(j->p) != SIGTERM)
          die("%s: %s", name, sup_result(j->p));
        size_t len = 0;
        const char *out = sup_result_output(j->p, SUP_STDOUT, &len);
        if (out == NULL) die("%s: no output", name);
        j->len = len < sizeof j->text - 1 ? len : sizeof j->text - 1;
        memcpy(j->text, out, j->len);
        int sigs[4];
        double at[4];
        int ns = sup_result_signals(j->p, sigs, at, 4);
        if (ns >= 1 && sigs[0] == SIGTERM && kind == KIND_MAXRT)
          push(&sup_own, at[0] - (double)thr_ms);
        sup_release(j->p);
        j->p = NULL;
      } else {
        if (j->status != SIGTERM) die("%s: raw child status %d", name, j->status);
        close(j->tfd);
        close(j->pidfd);
      }
      j->text[j->len] = '\0';
      int64_t wrote = kind == KIND_IDLE ? find_stamp(j->text, 'w') : j->t_call;
      int64_t termed = find_stamp(j->text, 't');
      if (wrote < 0 || termed < 0) {
        /* Signalled before it had started its work: an idle child before
         * its first write (both sides' idle clocks run from the spawn), or
         * any before its handler was in place. A start slower than the
         * threshold (a sanitizer's runtime on a loaded machine) has no
         * lateness to measure: counted, not sampled; but its result
         * cannot have come before the spawn + the threshold either. */
        unstamped[j->sup_side]++;
        early[j->sup_side] += j->t_result - j->t_call < thr_ns;
        continue;
      }
      int64_t base = wrote + thr_ns;
      double late_sig = (double)(termed - base) / 1e6;
      double late_res = (double)(j->t_result - base) / 1e6;
      early[j->sup_side] += late_sig < 0 || late_res < 0;
      push(&sig[j->sup_side], late_sig);
      push(&res[j->sup_side], late_res);
    }
  }
  (void)live;
  if (sig[0].n == 0 || sig[1].n == 0)
    die("%s: no child of a side started its work before the threshold", name);
  free(pf);
  free(owner);
  free(jobs);
  cJSON_free(json);
  printf("{\"row\":\"%s\",\"unit\":\"ms\",\"threshold_ms\":%ld,"
         "\"gap_ms\":%d,\"early\":%d,\"baseline_early\":%d,"
         "\"unstamped\":%d,\"baseline_unstamped\":%d,",
         name, thr_ms, DEADLINE_GAP_MS, early[1], early[0], unstamped[1], unstamped[0]);
  finish_row("baseline_signal", &sig[0], "baseline", &res[0], "sup_signal",
             &sig[1], "sup", &res[1], "sup_own_clock", &sup_own, NULL);
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

/* Sleeps settle_s, then window_s: the host's CPU and context switches over
 * the second sleep. */
static void idle_window(double settle_s, double window_s, double *cpu_ms, long *csw) {
  sleep_us(settle_s * 1e6);
  double c0 = cpu_ms_self();
  long w0 = csw_self();
  sleep_us(window_s * 1e6);
  *cpu_ms = cpu_ms_self() - c0;
  *csw = csw_self() - w0;
}

/* sup's side of the input-wait rows: n silent children spawned from json,
 * supervised for window_s after settle_s; the host's CPU and context
 * switches in the window. what names the row in messages. */
static void sup_cpu_window(int n, double window_s, double settle_s, const char *json,
                           const char *what, double *cpu_ms, long *csw) {
  sup_proc **procs = xcalloc((size_t)n, sizeof *procs);
  for (int i = 0; i < n; i++) procs[i] = sup_start(json);
  idle_window(settle_s, window_s, cpu_ms, csw);
  for (int i = 0; i < n; i++)
    if (sup_poll(procs[i], 0) != 0)
      die("%s: child %d ended early: %s", what, i, sup_result(procs[i]));
  for (int i = 0; i < n; i++) sup_abort(procs[i]);
  for (int i = 0; i < n; i++) {
    sup_finish(procs[i]);
    expect_outcome(procs[i], SUP_OUTCOME_ABORTED, what);
    sup_release(procs[i]);
  }
  free(procs);
}

/* 1,000 silent children with "input_wait_timeout_ms" set: with a
 * "pipe" stdin, whose reads could wait, the loop looks at each tree (every
 * 50 ms for its first second of silence, then further and further apart,
 * each look only a read of run counts while nothing ran); with stdin null
 * and a host session without a terminal, never. The window opens once the
 * last child has been quiet for settle_s: this is what supervising quiet
 * children costs, not their first second. */
static void row_cpu_input_wait(const struct opts *o) {
  int n = o->quick ? 20 : 1000;
  double window_s = o->quick ? 0.5 : 10.0;
  double settle_s = o->quick ? 1.2 : 1.5;
  raise_limits(n);
  int tty = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  int session_tty = tty >= 0;
  if (tty >= 0) close(tty);
  note("cpu_input_wait: %d silent children with input_wait_timeout_ms, "
       "%.1f s window per side after %.1f s", n, window_s, settle_s);
  const char *pipe_json = "{\"argv\": [\"" SLEEP_PATH "\", \"600\"], "
                          "\"stdin\": \"pipe\", \"input_wait_timeout_ms\": 600000}";
  const char *null_json = "{\"argv\": [\"" SLEEP_PATH "\", \"600\"], "
                          "\"input_wait_timeout_ms\": 600000}";
  double pipe_cpu, null_cpu;
  long pipe_csw, null_csw;
  sup_cpu_window(n, window_s, settle_s, pipe_json, "cpu_input_wait", &pipe_cpu, &pipe_csw);
  sup_cpu_window(n, window_s, settle_s, null_json, "cpu_input_wait", &null_cpu, &null_csw);
  printf("{\"row\":\"cpu_input_wait\",\"unit\":\"ms\",\"children\":%d,"
         "\"seconds\":%.1f,\"settle_seconds\":%.1f,\"session_tty\":%s,"
         "\"pipe\":{\"cpu_ms\":%.3f,\"context_switches\":%ld},"
         "\"null\":{\"cpu_ms\":%.3f,\"context_switches\":%ld}}\n",
         n, window_s, settle_s, session_tty ? "true" : "false", pipe_cpu,
         pipe_csw, null_cpu, null_csw);
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

/* Children alive at once (issue 51): as many `sleep` children as the
 * hard RLIMIT_NOFILE allows at 3 descriptors each, up to 10,000 (50 quick;
 * the soft limit is raised to the hard one first), then what each costs
 * the host: descriptors (/proc/self/fd), memory (the host's RSS grown,
 * over N; the library's heap beside it), and the CPU of every thread of
 * the process (getrusage) over a 10 s window in which nothing happens.
 * The floor holds as many raw children (posix_spawn, no descriptor kept),
 * unwatched, over a window as long. */
static void row_children(const struct opts *o) {
  int want = o->quick ? 50 : 10000;
  double window_s = o->quick ? 0.5 : 10.0, settle_s = o->quick ? 0.3 : 1.0;
  raise_limits(want);
  struct rlimit nofile, nproc;
  getrlimit(RLIMIT_NOFILE, &nofile);
  getrlimit(RLIMIT_NPROC, &nproc);
  int n = want;
  /* What is open already, and a few spare for the library's own. */
  long spare = count_fds() + 64;
  if (nofile.rlim_cur != RLIM_INFINITY && ((long long)nofile.rlim_cur - spare) / 3 < n)
    n = (int)(((long long)nofile.rlim_cur - spare) / 3);
  long pid_max = 32768;
  FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
  if (f) {
    if (fscanf(f, "%ld", &pid_max) != 1) pid_max = 32768;
    fclose(f);
  }
  if (pid_max / 3 < n) n = (int)(pid_max / 3);
  if (n < 1) die("children: the descriptor limit leaves no room for children");
  note("children: %d at once (wanted %d), %.1f s window per side", n, want, window_s);

  /* The floor: the same number of children, nobody watching. */
  pid_t *pids = xcalloc((size_t)n, sizeof *pids);
  for (int i = 0; i < n; i++) pids[i] = raw_sleep("600");
  double raw_cpu;
  long raw_csw;
  idle_window(settle_s, window_s, &raw_cpu, &raw_csw);
  for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
  for (int i = 0; i < n; i++) raw_wait(pids[i]);
  free(pids);

  sup_proc **procs = xcalloc((size_t)n, sizeof *procs);
  double *spawn_us = xcalloc((size_t)n, sizeof *spawn_us);
  char *json = spec(SLEEP_PATH, "600", -1);
  /* The library's thread, loop and their descriptors are created by the
   * first spawn: made before the counting starts, so that only what each
   * child costs is counted. Handles released before are freed by the loop
   * within 5 ms: counted from after that. */
  char *true_json = spec(TRUE_PATH, NULL, -1);
  sup_true(true_json);
  cJSON_free(true_json);
  usleep(50 * 1000);
  long fd0 = count_fds();
  double heap0 = heap_bytes(), rss0 = rss_bytes();
  int reached = 0, err = 0;
  char errbuf[256] = "";
  while (reached < n) {
    double t0 = now_us();
    err = sup_spawn_ex(json, &procs[reached], errbuf, sizeof errbuf);
    spawn_us[reached] = now_us() - t0;
    if (err < 0) break;
    reached++;
  }
  if (reached == 0) die("children: no child started: %s (%s)", sup_strerror(err), errbuf);
  /* Once every child has exec'd and gone quiet: then nothing changes until
   * the window ends, so the counts are those of the window too. */
  sleep_us(settle_s * 1e6);
  long fds = count_fds() - fd0;
  double heap = heap_bytes() - heap0, rss = rss_bytes() - rss0;
  double sup_cpu;
  long sup_csw;
  idle_window(0, window_s, &sup_cpu, &sup_csw);
  int alive = 0;
  for (int i = 0; i < reached; i++) alive += sup_poll(procs[i], 0) == 0;
  int k = reached < 100 ? reached : 100;
  double first = 0, last = 0;
  for (int i = 0; i < k; i++) {
    first += spawn_us[i];
    last += spawn_us[reached - k + i];
  }
  double t0 = now_us();
  for (int i = 0; i < reached; i++) sup_abort(procs[i]);
  for (int i = 0; i < reached; i++) {
    sup_finish(procs[i]);
    expect_outcome(procs[i], SUP_OUTCOME_ABORTED, "children");
    sup_release(procs[i]);
  }
  double teardown_ms = (now_us() - t0) / 1e3;
  cJSON_free(json);
  free(procs);
  free(spawn_us);

  printf("{\"row\":\"children\",\"wanted\":%d,\"target\":%d,\"reached\":%d,\"alive\":%d,", want,
         n, reached, alive);
  if (err < 0)
    printf("\"error\":\"%s\",", sup_strerror(err));
  else
    printf("\"error\":null,");
  printf("\"fd_limit\":%lld,\"nproc_limit\":%lld,\"fds_per_child\":%.3f,"
         "\"rss_kib_per_child\":%.3f,\"heap_kib_per_child\":%.3f,"
         "\"seconds\":%.1f,\"spawn_us_first\":%.1f,\"spawn_us_last\":%.1f,"
         "\"teardown_ms\":%.1f,"
         "\"baseline\":{\"cpu_ms\":%.3f,\"context_switches\":%ld},"
         "\"sup\":{\"cpu_ms\":%.3f,\"context_switches\":%ld}}\n",
         nofile.rlim_cur == RLIM_INFINITY ? -1LL : (long long)nofile.rlim_cur,
         nproc.rlim_cur == RLIM_INFINITY ? -1LL : (long long)nproc.rlim_cur,
         (double)fds / reached, rss / 1024.0 / reached, heap / 1024.0 / reached, window_s,
         first / k, last / k, teardown_ms, raw_cpu, raw_csw, sup_cpu, sup_csw);
  fflush(stdout);
}

/* ---- scale: many chatty children ---------------------------------------- */

/* bench_child chatty writes 64-byte lines. */
enum { SCALE_LINE = 64, SCALE_PERIOD_MS = 100 };

static uint64_t count_lines(const char *buf, size_t n) {
  uint64_t lines = 0;
  for (const char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
    lines++;
  return lines;
}

typedef struct {
  double cpu_ms;
  long csw;
  uint64_t lines;
  double seconds, spawn_s;
  int children;
} scale_result;

/* One side of the scale row: `n` children each writing a line every 100 ms,
 * watched for `window_s` after `settle_s`. mode 0: sup with a live reader
 * (sup_output_fd in one epoll, sup_output_read until empty, lines counted)
 * and backpressure_bytes set, so that the reader reads each pipe itself;
 * mode 3: the same reader without backpressure, each pipe lent to the
 * reader (sup's loop takes back one whose reader leaves bytes unread); mode 1: sup capturing, nobody
 * reading; mode 2: raw, the same children started as sup starts them, their
 * stdout and stderr in one epoll, read and lines counted. CPU is getrusage(RUSAGE_SELF), every thread of this process
 * (the library's too), none of the children's. */
static scale_result scale_side(int mode, int n, double settle_s,
                               double window_s, const char *child) {
  static char buf[READ_CHUNK];
  raise_limits(n);
  scale_result r = {0};
  r.children = n;
  char period[16];
  snprintf(period, sizeof period, "%d", SCALE_PERIOD_MS);
  char *argv[] = {(char *)child, (char *)"chatty", period, NULL};
  char *json = spec(child, "chatty", -1);
  {
    /* spec() takes two argv items; the period is the third. */
    cJSON *o = cJSON_Parse(json);
    cJSON_AddItemToArray(cJSON_GetObjectItem(o, "argv"), cJSON_CreateString(period));
    if (mode == 0) cJSON_AddNumberToObject(o, "backpressure_bytes", 1 << 20);
    cJSON_free(json);
    json = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
  }
  sup_proc **procs = xcalloc((size_t)n, sizeof *procs);
  raw_child *raws = xcalloc((size_t)n, sizeof *raws);
  uint64_t *pos = xcalloc((size_t)n, sizeof *pos);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1: %s", strerror(errno));
  double t0 = now_us();
  for (int i = 0; i < n; i++) {
    struct epoll_event ev = {.events = EPOLLIN};
    if (mode == 2) {
      raws[i] = raw_start(child, argv, NULL);
      set_nonblocking(raws[i].out);
      set_nonblocking(raws[i].err);
      ev.data.u64 = (uint64_t)i * 2;
      if (epoll_ctl(ep, EPOLL_CTL_ADD, raws[i].out, &ev) != 0)
        die("epoll_ctl: %s", strerror(errno));
      ev.data.u64 = (uint64_t)i * 2 + 1;
      if (epoll_ctl(ep, EPOLL_CTL_ADD, raws[i].err, &ev) != 0)
        die("epoll_ctl: %s", strerror(errno));
      continue;
    }
    char err[256];
    int rc = sup_spawn_ex(json, &procs[i], err, sizeof err);
    if (rc < 0) die("scale: child %d: %s (%s)", i, sup_strerror(rc), err);
    if (mode == 0 || mode == 3) {
      int fd = sup_output_fd(procs[i], SUP_STDOUT);
      if (fd < 0) die("sup_output_fd: %s", sup_strerror(fd));
      ev.data.u64 = (uint64_t)i * 2;
      if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        die("epoll_ctl: %s", strerror(errno));
    }
  }
  r.spawn_s = (now_us() - t0) / 1e6;

  /* The reader runs through the settling time and the window alike; the
   * counters are read at the window's edges. */
  double phase_end[2] = {now_us() + settle_s * 1e6, 0};
  double cpu0 = 0, w_start = 0;
  long csw0 = 0;
  uint64_t lines = 0, lines0 = 0, total0 = 0;
  for (int phase = 0; phase < 2; phase++) {
    if (phase == 1) {
      if (mode == 1)
        for (int i = 0; i < n; i++)
          total0 += (uint64_t)sup_output_total(procs[i], SUP_STDOUT);
      lines0 = lines;
      csw0 = csw_self();
      cpu0 = cpu_ms_self();
      w_start = now_us();
      phase_end[1] = w_start + window_s * 1e6;
    }
    for (;;) {
      double left_ms = (phase_end[phase] - now_us()) / 1e3;
      if (left_ms <= 0) break;
      if (mode == 1) {
        sleep_us(left_ms * 1e3);
        continue;
      }
      struct epoll_event evs[256];
      int k = epoll_wait(ep, evs, 256, (int)ceil(left_ms));
      if (k < 0 && errno != EINTR) die("epoll_wait: %s", strerror(errno));
      for (int e = 0; e < k; e++) {
        int i = (int)(evs[e].data.u64 / 2);
        if (mode == 0 || mode == 3) {
          for (;;) {
            size_t got = 0;
            int rc = sup_output_read(procs[i], SUP_STDOUT, &pos[i], buf, sizeof buf, &got);
            if (rc < 0) die("sup_output_read: %s", sup_strerror(rc));
            if (got == 0) break;
            lines += count_lines(buf, got);
          }
        } else {
          int fd = evs[e].data.u64 % 2 ? raws[i].err : raws[i].out;
          for (;;) {
            ssize_t got = read(fd, buf, sizeof buf);
            if (got > 0) {
              lines += count_lines(buf, (size_t)got);
              continue;
            }
            if (got < 0 && errno == EINTR) continue;
            if (got < 0 && errno == EAGAIN) break;
            die("scale: a raw child's pipe closed early");
          }
        }
      }
    }
  }
  r.cpu_ms = cpu_ms_self() - cpu0;
  r.csw = csw_self() - csw0;
  r.seconds = (now_us() - w_start) / 1e6;
  if (mode == 1) {
    uint64_t total1 = 0;
    for (int i = 0; i < n; i++)
      total1 += (uint64_t)sup_output_total(procs[i], SUP_STDOUT);
    r.lines = (total1 - total0) / SCALE_LINE;
  } else {
    r.lines = lines - lines0;
  }

  close(ep);
  for (int i = 0; i < n; i++) {
    if (mode == 2) {
      kill(-raws[i].pid, SIGKILL);
    } else {
      if (sup_poll(procs[i], 0) != 0)
        die("scale: child %d ended early: %s", i, sup_result(procs[i]));
      sup_abort(procs[i]);
    }
  }
  for (int i = 0; i < n; i++) {
    if (mode == 2) {
      close(raws[i].out);
      close(raws[i].err);
      raw_wait(raws[i].pid);
    } else {
      sup_finish(procs[i]);
      expect_outcome(procs[i], SUP_OUTCOME_ABORTED, "scale");
      sup_release(procs[i]);
    }
  }
  free(procs);
  free(raws);
  free(pos);
  cJSON_free(json);
  return r;
}

static void print_scale(const char *key, const scale_result *r) {
  printf("\"%s\":{\"children\":%d,\"seconds\":%.3f,\"lines\":%llu,"
         "\"cpu_ms\":%.3f,\"context_switches\":%ld,\"spawn_s\":%.3f,"
         "\"us_per_line\":%.4f,\"csw_per_s\":%.1f}",
         key, r->children, r->seconds, (unsigned long long)r->lines, r->cpu_ms,
         r->csw, r->spawn_s, r->lines ? r->cpu_ms * 1e3 / (double)r->lines : -1.0,
         (double)r->csw / r->seconds);
}

/* Adds one round's side to the sums (the spawn time averaged). */
static void add_scale(scale_result *sum, const scale_result *one, int rounds) {
  sum->cpu_ms += one->cpu_ms;
  sum->csw += one->csw;
  sum->lines += one->lines;
  sum->seconds += one->seconds;
  sum->spawn_s += one->spawn_s / rounds;
  sum->children = one->children;
}

/* One window per side is at the mercy of whatever else the machine did in
 * those 5 s: the raw loop and sup's reader run in alternating rounds, each
 * round in the other order, and the row's ratio is the median of the
 * rounds' ratios. The printed sides are the sums over the rounds. */
/* The raw epoll loop and sup's side `mode` (scale_side) in alternating
 * rounds; prints the row's head up to the sides (the caller ends it). */
static void scale_rounds(const struct opts *o, const char *row, int mode, int rounds, int n,
                         double settle, double window) {
  note("%s: %d children, a line every %d ms, %.0f s window per side, %d round%s", row,
       n, SCALE_PERIOD_MS, window, rounds, rounds == 1 ? "" : "s");
  scale_result raw = {0}, reader = {0};
  double ratios[8], raw_per_line[8], sup_per_line[8];
  for (int r = 0; r < rounds; r++) {
    scale_result a, b;
    if (r % 2 == 0) {
      a = scale_side(2, n, settle, window, o->child);
      b = scale_side(mode, n, settle, window, o->child);
    } else {
      b = scale_side(mode, n, settle, window, o->child);
      a = scale_side(2, n, settle, window, o->child);
    }
    if (a.lines == 0 || b.lines == 0) die("%s: a side read no lines", row);
    raw_per_line[r] = a.cpu_ms * 1e3 / (double)a.lines;
    sup_per_line[r] = b.cpu_ms * 1e3 / (double)b.lines;
    ratios[r] = sup_per_line[r] / raw_per_line[r];
    note("%s round %d: raw %.2f us/line, sup %.2f us/line, %.3fx", row, r,
         raw_per_line[r], sup_per_line[r], ratios[r]);
    add_scale(&raw, &a, rounds);
    add_scale(&reader, &b, rounds);
  }
  double sorted[8];
  memcpy(sorted, ratios, sizeof(double) * (size_t)rounds);
  qsort(sorted, (size_t)rounds, sizeof *sorted, cmp_double);
  printf("{\"row\":\"%s\",\"period_ms\":%d,\"line_bytes\":%d,\"rounds\":%d,"
         "\"ratio_p50\":%.4f,\"round_ratios\":[",
         row, SCALE_PERIOD_MS, SCALE_LINE, rounds, sorted[rounds / 2]);
  for (int r = 0; r < rounds; r++) printf("%s%.4f", r ? "," : "", ratios[r]);
  printf("],");
  print_scale("baseline", &raw);
  putchar(',');
  print_scale("sup", &reader);
}

static void row_scale(const struct opts *o) {
  int n = o->quick ? 50 : 2000, rounds = o->quick ? 1 : 3;
  double settle = o->quick ? 0.3 : 1.0, window = o->quick ? 1.0 : 5.0;
  scale_rounds(o, "scale", 0, rounds, n, settle, window);
  putchar(',');
  scale_result drained = scale_side(3, n, settle, window, o->child);
  scale_result capture = scale_side(1, n, settle, window, o->child);
  print_scale("sup_drained", &drained);
  putchar(',');
  print_scale("sup_capture", &capture);
  printf("}\n");
  fflush(stdout);
}

/* The default live reader: the scale row's reader without
 * backpressure_bytes (every shim's line iterator, a harness showing output
 * live), each pipe lent to the reader (reader_leases.hpp), against
 * the same C epoll, in alternating rounds as the scale row. */
static void row_default_reader(const struct opts *o) {
  int n = o->quick ? 50 : 2000, rounds = o->quick ? 1 : 3;
  double settle = o->quick ? 0.3 : 1.0, window = o->quick ? 1.0 : 5.0;
  scale_rounds(o, "default_reader", 3, rounds, n, settle, window);
  printf("}\n");
  fflush(stdout);
}

/* ---- peak RSS with a large output --------------------------------------- */

static long vmhwm_kib(void) {
  FILE *f = fopen("/proc/self/status", "re");
  if (f == NULL) die("cannot open /proc/self/status");
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  fclose(f);
  if (kib < 0) die("no VmHWM in /proc/self/status");
  return kib;
}

/* bench_sup rss MODE WRITER BYTES, in a fresh process: captures BYTES from
 * the writer and prints the peak RSS. MODE: keep, the raw head + tail loop;
 * sup, at its defaults, through sup_result (the JSON text); sup-output,
 * through sup_result_output (the bytes); sup-both, sup_result and then
 * sup_result_output; base, sup on /bin/true through both (the process's own
 * footprint). */
static int rss_main(int argc, char **argv) {
  if (argc != 5) die("usage: bench_sup rss {keep|sup|sup-output|sup-both|base} WRITER BYTES");
  const char *mode = argv[2], *writer = argv[3];
  unsigned long long bytes = strtoull(argv[4], NULL, 10);
  size_t kept = 0;
  if (strcmp(mode, "keep") == 0) {
    char *out;
    keep_capture(writer, bytes, NULL, &out, &kept);
    free(out);
    /* keep_capture checked every byte: the buffer was in hand. */
  } else if (strncmp(mode, "sup", 3) == 0 || strcmp(mode, "base") == 0) {
    int base = strcmp(mode, "base") == 0;
    int text = base || strcmp(mode, "sup") == 0 || strcmp(mode, "sup-both") == 0;
    int output = base || strcmp(mode, "sup-output") == 0 || strcmp(mode, "sup-both") == 0;
    if (!text && !output) die("unknown rss mode '%s'", mode);
    char *json = base ? spec(TRUE_PATH, NULL, -1) : spec(writer, argv[4], -1);
    sup_proc *p = sup_start(json);
    sup_finish(p);
    expect_outcome(p, SUP_OUTCOME_EXITED, "rss");
    const char *r = text ? sup_result(p) : "";
    const char *out = output ? sup_result_output(p, SUP_STDOUT, &kept) : "";
    if (r == NULL || out == NULL) die("rss: no result");
    if (!output) kept = (size_t)(sup_output_total(p, SUP_STDOUT) - sup_result_omitted_bytes(p, SUP_STDOUT));
    if (!base && (uint64_t)sup_output_total(p, SUP_STDOUT) != bytes)
      die("rss: sup counted %lld of %llu bytes",
          (long long)sup_output_total(p, SUP_STDOUT), bytes);
    printf("{\"vmhwm_kib\":%ld,\"kept\":%zu,\"result_json_bytes\":%zu}\n",
           vmhwm_kib(), kept, strlen(r));
    sup_release(p);
    cJSON_free(json);
    return 0;
  } else {
    die("unknown rss mode '%s'", mode);
  }
  printf("{\"vmhwm_kib\":%ld,\"kept\":%zu,\"result_json_bytes\":0}\n",
         vmhwm_kib(), kept);
  return 0;
}

/* Runs `bench_sup rss MODE ...` in a fresh process; returns its VmHWM. */
static long rss_run(const char *mode, const char *writer, uint64_t bytes,
                    size_t *kept) {
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) die("readlink /proc/self/exe: %s", strerror(errno));
  self[len] = '\0';
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  char *argv[] = {self, (char *)"rss", (char *)mode, (char *)writer, count, NULL};
  raw_child c = raw_start(self, argv, NULL);
  char out[512];
  size_t got = 0;
  for (;;) {
    ssize_t n = read(c.out, out + got, sizeof out - 1 - got);
    if (n > 0) {
      got += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  out[got] = '\0';
  close(c.out);
  close(c.err);
  int st = raw_wait(c.pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("rss %s: status %#x", mode, st);
  long kib = -1;
  unsigned long long k = 0;
  if (sscanf(out, "{\"vmhwm_kib\":%ld,\"kept\":%llu", &kib, &k) != 2)
    die("rss %s: unexpected output '%s'", mode, out);
  *kept = (size_t)k;
  return kib;
}

static void row_rss(const struct opts *o) {
  uint64_t bytes = o->quick ? (uint64_t)64 << 20 : (uint64_t)1 << 30;
  int reps = o->quick ? 1 : 3;
  samples sup = {0}, output = {0}, both = {0}, keep = {0}, base = {0};
  size_t kept = 0, k;
  note("rss: %d fresh processes per side, %llu MiB of output", reps,
       (unsigned long long)(bytes >> 20));
  for (int i = 0; i < reps; i++) {
    push(&base, (double)rss_run("base", o->writer, bytes, &k));
    push(&keep, (double)rss_run("keep", o->writer, bytes, &k));
    push(&sup, (double)rss_run("sup", o->writer, bytes, &kept));
    if (k != kept) die("rss: raw kept %zu bytes, sup %zu", k, kept);
    push(&output, (double)rss_run("sup-output", o->writer, bytes, &kept));
    push(&both, (double)rss_run("sup-both", o->writer, bytes, &kept));
    if (k != kept) die("rss: raw kept %zu bytes, sup %zu", k, kept);
  }
  printf("{\"row\":\"rss\",\"unit\":\"KiB\",\"bytes\":%llu,\"kept_bytes\":%zu,",
         (unsigned long long)bytes, kept);
  finish_row("base", &base, "baseline", &keep, "sup", &sup, "sup_output", &output,
             "sup_both", &both, NULL);
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

static void row_abort(const struct opts *o) { row_stop(o, 1); }
static void row_interrupt(const struct opts *o) { row_stop(o, 0); }
static void row_idle(const struct opts *o) { row_deadline(o, KIND_IDLE, o->child); }
static void row_max_runtime(const struct opts *o) { row_deadline(o, KIND_MAXRT, o->child); }

/* The rows in the order they run. heap is last: after its 2 GiB heap is
 * freed nothing else runs, so no other row inherits a fragmented or
 * swollen address space. */
static const struct {
  const char *name;
  void (*run)(const struct opts *o);
} ROWS[] = {
    {"spawn", row_spawn},
    {"spawn_cgroup", row_spawn_cgroup},
    {"spawn_limits", row_spawn_limits},
    {"spawn_sandbox", row_spawn_sandbox},
    {"spawn_user", row_spawn_user},
    {"capture", row_capture},
    {"default_capture", row_default_capture},
    {"stream", row_stream},
    {"abort", row_abort},
    {"interrupt", row_interrupt},
    {"idle", row_idle},
    {"max_runtime", row_max_runtime},
    {"cpu_input_wait", row_cpu_input_wait},
    {"scale", row_scale},
    {"children", row_children},
    {"default_reader", row_default_reader},
    {"rss", row_rss},
    {"heap", row_heap},
};
enum { NROWS = sizeof ROWS / sizeof *ROWS };

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "peer") == 0) return peer(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "rss") == 0) return rss_main(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "default-capture") == 0) return default_capture_main(argc, argv);

  /* sup and the raw loops share this process's malloc. glibc raises its
   * mmap threshold each time a large block is freed, so whether a 16 MiB
   * buffer came back as fresh pages (a fault per page) or as reused heap
   * depended on what the other side had freed before: the keeping loop ran
   * at 4 or at 12 ms for 16 MiB from one build of libsup to the next. Fixed
   * thresholds (which turn the adjustment off) give both sides reused heap
   * for every buffer up to 64 MiB, as a long-running host has once warm. */
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);

  struct opts o = {0};
  beside_self(o.writer, sizeof o.writer, "bench_writer");
  beside_self(o.child, sizeof o.child, "bench_child");
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      o.quick = 1;
    } else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
      snprintf(o.rows, sizeof o.rows, "%s", argv[++i]);
    } else if (strcmp(argv[i], "--writer") == 0 && i + 1 < argc) {
      snprintf(o.writer, sizeof o.writer, "%s", argv[++i]);
    } else if (strcmp(argv[i], "--child") == 0 && i + 1 < argc) {
      snprintf(o.child, sizeof o.child, "%s", argv[++i]);
    } else {
      fprintf(stderr,
              "usage: %s [--quick] [--rows spawn,spawn_cgroup,spawn_limits,spawn_sandbox,spawn_user,\n"
              "                 heap,capture,default_capture,stream,abort,"
              "interrupt,idle,max_runtime,cpu_input_wait,children,rss,scale,default_reader]\n"
              "                 [--writer PATH] [--child PATH]\n"
              "       %s peer {raw|sup} {spawn|capture} COUNT\n"
              "       %s rss {keep|sup|sup-output|sup-both|base} WRITER BYTES\n"
              "       %s default-capture WRITER BYTES ROUNDS\n",
              argv[0], argv[0], argv[0], argv[0]);
      return 2;
    }
  }
  const char *names[NROWS];
  for (size_t k = 0; k < NROWS; k++) names[k] = ROWS[k].name;
  check_rows(o.rows, names, NROWS);
  if (access(o.writer, X_OK) != 0)
    die("writer %s: %s (pass --writer)", o.writer, strerror(errno));
  if (access(o.child, X_OK) != 0)
    die("child %s: %s (pass --child)", o.child, strerror(errno));
  if (sup_version() != SUP_VERSION_NUMBER)
    die("header is version %d, library %d", SUP_VERSION_NUMBER,
        sup_version());

  printf("{\"row\":\"meta\",\"sup_version\":%d,\"libc\":\"%s\",\"quick\":%s}\n",
         sup_version(), gnu_get_libc_version(), o.quick ? "true" : "false");
  fflush(stdout);
  for (size_t k = 0; k < NROWS; k++)
    if (row_wanted(o.rows, ROWS[k].name)) ROWS[k].run(&o);
  return 0;
}
