/* bench_modes: sup's modes and scale (CLI, PTY, tee, threads, many children) against raw floors, interleaved in one process. */
/*
 *   bench_modes [--quick] [--rows LIST] [--writer PATH] [--sup-run PATH]
 *               [--sup-timeout PATH] [--timeout PATH]
 *       Runs the rows (default all; LIST is comma-separated names from ROWS
 *       below) and prints one JSON object per row on stdout, as bench_sup
 *       does. Every sup side alternates with a floor doing the same work by
 *       hand in the same run, so that drift on a shared machine hits both.
 *       Durations are reported, never judged; a wrong result (lost bytes, a
 *       failed child) exits non-zero.
 *
 *   bench_modes drain
 *       Reads stdin to EOF and prints how many bytes it read: the other
 *       process that drains the "tee" row's pipe.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

extern char **environ;

const char bench_prog[] = "bench_modes";

/* ---- checking what a keeper kept --------------------------------------- */

/* Joins the kept bytes into one piece in place (as sup_result_output hands
 * them out), checks they are all 'x' and the count, frees them. */
static void keeper_finish(keeper *k, uint64_t want_total, const char *what) {
  size_t len;
  char *kept = keeper_join(k, &len);
  if (k->total != want_total)
    die("%s: read %llu of %llu bytes", what, (unsigned long long)k->total,
        (unsigned long long)want_total);
  for (size_t i = 0; i < len; i++)
    if (kept[i] != 'x') die("%s: kept byte %zu is wrong", what, i);
  free(kept);
}

/* ---- the sup side ------------------------------------------------------- */

/* Spec {"argv": [a0, a1?], extra members...} as text (cJSON, so that a path
 * with quotes still makes valid JSON). */
static char *spec_with(const char *a0, const char *a1, const char *key, cJSON *value) {
  cJSON *o = cJSON_CreateObject();
  cJSON *argv = cJSON_AddArrayToObject(o, "argv");
  cJSON_AddItemToArray(argv, cJSON_CreateString(a0));
  if (a1) cJSON_AddItemToArray(argv, cJSON_CreateString(a1));
  if (key) cJSON_AddItemToObject(o, key, value);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (s == NULL) die("out of memory");
  return s;
}

/* ---- options ------------------------------------------------------------ */

struct opts {
  int quick;
  char rows[256];
  char writer[PATH_MAX], sup_run[PATH_MAX], sup_timeout[PATH_MAX], timeout[PATH_MAX];
  char self[PATH_MAX]; /* this program, run again as the tee row's drain */
};

/* ---- cli: sup-run and sup-timeout as whole processes -------------------- */

/* posix_spawn of argv with stdin, stdout and stderr on /dev/null, waited
 * for; exits the benchmark unless it exits 0. What a shell does per command. */
static void run_program(char *const argv[]) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd = 0; fd < 3; fd++) posix_spawn_file_actions_adddup2(&fa, dev_null(), fd);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) die("posix_spawn %s: %s", argv[0], strerror(rc));
  int st = raw_wait(pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("%s: status %#x", argv[0], st);
}

/* `sup-run -- true` and `sup-timeout 10 true` against GNU `timeout 10 true`,
 * each a whole process (exec, library load, the engine's start, the first
 * child), the three in turn, in a new order each round. */
static void row_cli(const struct opts *o) {
  int rounds = o->quick ? 5 : 300;
  char *sides[3][5] = {
      {(char *)o->timeout, "10", "true", NULL},
      {(char *)o->sup_run, "--", "true", NULL},
      {(char *)o->sup_timeout, "10", "true", NULL},
  };
  samples s[3] = {{0}};
  note("cli: %d rounds of timeout, sup-run, sup-timeout", rounds);
  for (int k = 0; k < 3; k++) run_program(sides[k]);
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 3; k++) {
      int side = (k + r) % 3;
      double t0 = now_us();
      run_program(sides[side]);
      push(&s[side], now_us() - t0);
    }
  }
  printf("{\"row\":\"cli\",\"unit\":\"us\",\"timeout\":\"%s\",", o->timeout);
  finish_row("baseline", &s[0], "sup_run", &s[1], "sup_timeout", &s[2], NULL);
}

/* ---- PTY: the floor spawns as sup's "pty" does -------------------------- */

/* A child on a new pseudo-terminal of 24 x 80 (sup's default), leading a
 * new session with the terminal as its controlling one (setsid, then
 * TIOCSCTTY), stdin/stdout/stderr the slave; the caller gets the master.
 * vfork + exec: what posix_spawn does, with the two steps it cannot do. */
typedef struct {
  pid_t pid;
  int master;
} pty_child;

static pty_child pty_start(char *const argv[]) {
  struct winsize ws = {.ws_row = 24, .ws_col = 80};
  int master, slave;
  if (openpty(&master, &slave, NULL, NULL, &ws) != 0) die("openpty: %s", strerror(errno));
  if (fcntl(master, F_SETFD, FD_CLOEXEC) != 0 || fcntl(slave, F_SETFD, FD_CLOEXEC) != 0)
    die("fcntl FD_CLOEXEC: %s", strerror(errno));
  pid_t pid = vfork();
  if (pid < 0) die("vfork: %s", strerror(errno));
  if (pid == 0) {
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) != 0 || dup2(slave, 0) < 0 ||
        dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
      _exit(126);
    execve(argv[0], argv, environ);
    _exit(127);
  }
  close(slave);
  pty_child c = {pid, master};
  return c;
}

/* Reads the master until the slave is closed everywhere (EIO on Linux, or
 * EOF), then reaps the child. */
static void pty_finish(pty_child *c, keeper *k, const char *what) {
  static char buf[READ_CHUNK];
  for (;;) {
    ssize_t n = read(c->master, buf, sizeof buf);
    if (n > 0) {
      if (k) keeper_append(k, buf, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno == EIO) break;
    die("%s: read master: %s", what, strerror(errno));
  }
  close(c->master);
  int st = raw_wait(c->pid);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("%s: status %#x", what, st);
}

/* The floor above for /bin/true, as a bench_side's fn. */
static void pty_true_side(const void *unused) {
  (void)unused;
  char *argv[] = {(char *)TRUE_PATH, NULL};
  pty_child c = pty_start(argv);
  pty_finish(&c, NULL, "pty true");
}

/* Spawn and reap /bin/true on a PTY: sup's "pty": true against the floor
 * above, in alternating batches. */
static void row_pty_spawn(const struct opts *o) {
  int rounds = o->quick ? 2 : 300, batch = o->quick ? 5 : 10;
  char *json = spec_with(TRUE_PATH, NULL, "pty", cJSON_CreateTrue());
  samples raw = {0}, sup = {0};
  note("pty_spawn: %d x %d per side", rounds, batch);
  alternate_batches(5, rounds, batch, (bench_side){pty_true_side, NULL, &raw},
                    (bench_side){sup_true_side, json, &sup});
  cJSON_free(json);
  printf("{\"row\":\"pty_spawn\",\"unit\":\"us\",\"batch\":%d,", batch);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

/* sup's capture of a stream at its defaults, timed from before the spawn
 * to the final result; checks the count and the kept bytes. */
static double sup_capture_secs(const char *json, uint64_t bytes, const char *what) {
  double t0 = now_us();
  sup_proc *p = sup_start(json);
  sup_finish(p);
  double secs = (now_us() - t0) / 1e6;
  if (sup_result_outcome(p) != SUP_OUTCOME_EXITED || sup_result_exit_code(p) != 0)
    die("%s: result %.300s", what, sup_result(p));
  int64_t total = sup_output_total(p, SUP_STDOUT);
  size_t kept = 0;
  const char *out = sup_result_output(p, SUP_STDOUT, &kept);
  if (total < 0 || (uint64_t)total != bytes || out == NULL)
    die("%s: %llu bytes written, sup counted %lld", what, (unsigned long long)bytes,
        (long long)total);
  for (size_t i = 0; i < kept; i++)
    if (out[i] != 'x') die("%s: kept byte %zu is wrong", what, i);
  sup_release(p);
  return secs;
}

/* 1 GiB (16 MiB quick) from bench_writer through a PTY, captured: sup's
 * "pty" at its defaults against a loop reading the master and keeping the
 * same head and tail (16 MiB), alternating. The writer writes only 'x', so
 * the terminal's output processing (\n to \r\n) changes no byte. */
static void row_pty_capture(const struct opts *o) {
  uint64_t bytes = o->quick ? (uint64_t)16 << 20 : (uint64_t)1 << 30;
  /* Three: a terminal moves tens to a few hundred MB/s, so a GiB takes
   * seconds, up to half a minute on a busy machine. */
  int rounds = o->quick ? 2 : 3;
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  char *json = spec_with(o->writer, count, "pty", cJSON_CreateTrue());
  char *argv[] = {(char *)o->writer, count, NULL};
  samples raw = {0}, sup = {0};
  note("pty_capture: %d x %llu MiB per side", rounds, (unsigned long long)(bytes >> 20));
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      if ((k + r) % 2 == 0) {
        double t0 = now_us();
        keeper kp;
        keeper_init(&kp, SUP_DEFAULT_MAX_OUTPUT);
        pty_child c = pty_start(argv);
        pty_finish(&c, &kp, "pty capture");
        double secs = (now_us() - t0) / 1e6;
        keeper_finish(&kp, bytes, "pty capture");
        push(&raw, (double)bytes / secs / 1e6);
      } else {
        push(&sup, (double)bytes / sup_capture_secs(json, bytes, "sup pty capture") / 1e6);
      }
    }
  }
  cJSON_free(json);
  printf("{\"row\":\"pty_capture\",\"unit\":\"MB/s\",\"bytes\":%llu,", (unsigned long long)bytes);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

/* ---- tee ---------------------------------------------------------------- */

/* The floor of "stdout": "tee": the child started as sup starts one (stdin
 * /dev/null, stdout and stderr in pipes, own group), both pipes polled,
 * every chunk read kept (head + tail) and written whole to fd 1. */
static double raw_tee_secs(const char *writer, const char *count, uint64_t bytes) {
  double t0 = now_us();
  char *argv[] = {(char *)writer, (char *)count, NULL};
  raw_child c = raw_start(writer, argv, NULL);
  keeper kept[2];
  keeper_init(&kept[0], SUP_DEFAULT_MAX_OUTPUT);
  keeper_init(&kept[1], SUP_DEFAULT_MAX_OUTPUT);
  raw_keep_all(&c, &kept[0], &kept[1], STDOUT_FILENO);
  int st = raw_wait(c.pid);
  double secs = (now_us() - t0) / 1e6;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("raw tee: status %#x", st);
  keeper_finish(&kept[0], bytes, "raw tee");
  keeper_finish(&kept[1], 0, "raw tee stderr");
  return secs;
}

/* 1 GiB (16 MiB quick) with "stdout": "tee" while fd 1 is a pipe that
 * another process (`bench_modes drain`) empties, against the floor above
 * writing to the same pipe; alternating. The drain counts every byte. */
static void row_tee(const struct opts *o) {
  const char *self = o->self;
  uint64_t bytes = o->quick ? (uint64_t)16 << 20 : (uint64_t)1 << 30;
  int rounds = o->quick ? 2 : 5;
  char count[32];
  snprintf(count, sizeof count, "%llu", (unsigned long long)bytes);
  char *json = spec_with(o->writer, count, "stdout", cJSON_CreateString("tee"));
  int pipefd[2], result[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0 || pipe2(result, O_CLOEXEC) != 0)
    die("pipe2: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
  posix_spawn_file_actions_adddup2(&fa, result[1], 1);
  char *dargv[] = {(char *)self, "drain", NULL};
  pid_t drain;
  int rc = posix_spawn(&drain, self, &fa, NULL, dargv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) die("posix_spawn %s drain: %s", self, strerror(rc));
  close(pipefd[0]);
  close(result[1]);
  note("tee: %d x %llu MiB per side", rounds, (unsigned long long)(bytes >> 20));
  fflush(stdout);
  int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved < 0 || dup2(pipefd[1], STDOUT_FILENO) < 0) die("dup2: %s", strerror(errno));
  close(pipefd[1]);
  samples raw = {0}, sup = {0};
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      if ((k + r) % 2 == 0) {
        push(&raw, (double)bytes / raw_tee_secs(o->writer, count, bytes) / 1e6);
      } else {
        double t0 = now_us();
        sup_proc *p = sup_start(json);
        sup_finish(p);
        double secs = (now_us() - t0) / 1e6;
        if (sup_result_outcome(p) != SUP_OUTCOME_EXITED || sup_result_exit_code(p) != 0 ||
            sup_output_total(p, SUP_STDOUT) != (int64_t)bytes)
          die("sup tee: result %.300s", sup_result(p));
        /* Every copy reached the pipe: its fd never failed. */
        cJSON *res = cJSON_Parse(sup_result(p));
        cJSON *tee_error = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "stdout"), "tee_error");
        if (tee_error == NULL || !cJSON_IsNull(tee_error))
          die("sup tee: stdout's tee_error is %s", tee_error ? cJSON_Print(tee_error) : "absent");
        cJSON_Delete(res);
        sup_release(p);
        push(&sup, (double)bytes / secs / 1e6);
      }
    }
  }
  if (dup2(saved, STDOUT_FILENO) < 0) die("dup2: %s", strerror(errno));
  close(saved);
  /* The pipe's last writer is gone: the drain sees EOF and says how much. */
  char text[64] = "";
  ssize_t n = 0, got;
  while ((got = read(result[0], text + n, sizeof text - 1 - (size_t)n)) > 0) n += got;
  close(result[0]);
  int st = raw_wait(drain);
  unsigned long long drained = strtoull(text, NULL, 10);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || drained != bytes * 2 * (uint64_t)rounds)
    die("tee: the drain read %llu bytes of %llu (status %#x)", drained,
        (unsigned long long)(bytes * 2 * (uint64_t)rounds), st);
  cJSON_free(json);
  printf("{\"row\":\"tee\",\"unit\":\"MB/s\",\"bytes\":%llu,", (unsigned long long)bytes);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

static int drain_main(void) {
  static char buf[128 * 1024];
  unsigned long long total = 0;
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n > 0) {
      total += (unsigned long long)n;
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      perror("bench_modes drain: read");
      return 1;
    }
  }
  printf("%llu\n", total);
  return 0;
}

/* ---- spawns from 8 threads, and with thousands of children alive -------- */

enum { THREADS = 8 };

typedef struct {
  pthread_barrier_t *start;
  const char *json; /* NULL: the raw side */
  int spawns;
} spawner;

static void *spawner_main(void *arg) {
  spawner *s = arg;
  pthread_barrier_wait(s->start);
  for (int i = 0; i < s->spawns; i++) {
    if (s->json)
      sup_true(s->json);
    else
      raw_true();
  }
  return NULL;
}

/* Spawns per second of 8 threads each spawning and reaping /bin/true at
 * once, from the barrier that starts them to the last one joined: sup_spawn
 * + sup_poll + sup_release against the raw spawn above, alternating rounds. */
static double threads_round(const char *json, int per_thread) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, THREADS + 1);
  pthread_t tid[THREADS];
  spawner s = {&start, json, per_thread};
  for (int t = 0; t < THREADS; t++)
    if (pthread_create(&tid[t], NULL, spawner_main, &s) != 0) die("pthread_create failed");
  pthread_barrier_wait(&start);
  double t0 = now_us();
  for (int t = 0; t < THREADS; t++) pthread_join(tid[t], NULL);
  double secs = (now_us() - t0) / 1e6;
  pthread_barrier_destroy(&start);
  return THREADS * per_thread / secs;
}

static void row_threads(const struct opts *o) {
  int rounds = o->quick ? 2 : 20, per_thread = o->quick ? 3 : 25;
  char *json = spec_with(TRUE_PATH, NULL, NULL, NULL);
  samples raw = {0}, sup = {0};
  note("threads: %d rounds of %d threads x %d spawns per side", rounds, THREADS, per_thread);
  (void)dev_null(); /* opened here, before the threads share it */
  threads_round(NULL, 2);
  threads_round(json, 2);
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < 2; k++) {
      if ((k + r) % 2 == 0)
        push(&raw, threads_round(NULL, per_thread));
      else
        push(&sup, threads_round(json, per_thread));
    }
  }
  cJSON_free(json);
  printf("{\"row\":\"threads\",\"unit\":\"spawns/s\",\"threads\":%d,\"per_thread\":%d,", THREADS,
         per_thread);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

/* Spawn and reap /bin/true with thousands of children alive: N `sleep`
 * children under sup (3 descriptors each: the pidfd and two pipes) and N raw
 * ones (posix_spawn, /dev/null, no descriptor kept: the floor is "posix_spawn
 * + waitpid with N raw children alive"), all alive through the whole row, so
 * that each side's spawns copy the same descriptor table and run beside the
 * same number of processes; alternating batches. N is 6,000 (100 quick), or
 * fewer where the hard RLIMIT_NOFILE (3 per child, 512 spare) or pid_max
 * (both populations, two fifths of it at most) allows fewer. */
static void row_alive(const struct opts *o) {
  int want = o->quick ? 100 : 6000;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) die("getrlimit: %s", strerror(errno));
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  int n = want;
  if (rl.rlim_cur != RLIM_INFINITY && (long long)(rl.rlim_cur - 512) / 3 < n)
    n = (int)((rl.rlim_cur - 512) / 3);
  long pid_max = 32768;
  FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
  if (f) {
    if (fscanf(f, "%ld", &pid_max) != 1) pid_max = 32768;
    fclose(f);
  }
  if (pid_max / 5 < n) n = (int)(pid_max / 5);
  if (n < 1) die("alive: the descriptor limit leaves no room for children");
  int rounds = o->quick ? 3 : 100, batch = o->quick ? 5 : 10;
  note("alive: %d sup + %d raw sleeping children, then %d x %d spawns per side", n, n, rounds,
       batch);
  char *sleep_json = spec_with(SLEEP_PATH, "600", NULL, NULL);
  char *true_json = spec_with(TRUE_PATH, NULL, NULL, NULL);
  sup_proc **procs = xcalloc((size_t)n, sizeof *procs);
  pid_t *pids = xcalloc((size_t)n, sizeof *pids);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd = 0; fd < 3; fd++) posix_spawn_file_actions_adddup2(&fa, dev_null(), fd);
  char *sargv[] = {(char *)SLEEP_PATH, "600", NULL};
  double t0 = now_us();
  for (int i = 0; i < n; i++) {
    procs[i] = sup_start(sleep_json);
    int rc = posix_spawn(&pids[i], SLEEP_PATH, &fa, NULL, sargv, environ);
    if (rc != 0) die("alive: posix_spawn sleep (child %d): %s", i, strerror(rc));
  }
  posix_spawn_file_actions_destroy(&fa);
  double start_s = (now_us() - t0) / 1e6;
  samples raw = {0}, sup = {0};
  alternate_batches(0, rounds, batch, (bench_side){raw_true_side, NULL, &raw},
                    (bench_side){sup_true_side, true_json, &sup});
  int alive = 0;
  for (int i = 0; i < n; i++) alive += sup_poll(procs[i], 0) == 0;
  for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
  for (int i = 0; i < n; i++) sup_abort(procs[i]);
  for (int i = 0; i < n; i++) raw_wait(pids[i]);
  for (int i = 0; i < n; i++) {
    sup_finish(procs[i]);
    sup_release(procs[i]);
  }
  if (alive != n) die("alive: %d of %d sup children ended before the row did", n - alive, n);
  free(procs);
  free(pids);
  cJSON_free(sleep_json);
  cJSON_free(true_json);
  printf("{\"row\":\"alive\",\"unit\":\"us\",\"children\":%d,\"wanted\":%d,\"batch\":%d,"
         "\"start_s\":%.1f,\"fd_limit\":%lld,",
         n, want, batch, start_s,
         rl.rlim_cur == RLIM_INFINITY ? -1LL : (long long)rl.rlim_cur);
  finish_row("baseline", &raw, "sup", &sup, NULL);
}

/* ---- main --------------------------------------------------------------- */

/* The rows in the order they run. */
static const struct {
  const char *name;
  void (*run)(const struct opts *o);
} ROWS[] = {
    {"cli", row_cli},         {"pty_spawn", row_pty_spawn}, {"pty_capture", row_pty_capture},
    {"tee", row_tee},         {"threads", row_threads},     {"alive", row_alive},
};
enum { NROWS = sizeof ROWS / sizeof *ROWS };

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "drain") == 0) return drain_main();
  struct opts o = {0};
  beside_self(o.writer, sizeof o.writer, "bench_writer");
  beside_self(o.sup_run, sizeof o.sup_run, "../../examples/sup-run/sup-run");
  beside_self(o.sup_timeout, sizeof o.sup_timeout, "../../examples/sup-run/sup-timeout");
  snprintf(o.timeout, sizeof o.timeout, "/usr/bin/timeout");
  for (int i = 1; i < argc; i++) {
    char *dest = NULL;
    if (strcmp(argv[i], "--quick") == 0) {
      o.quick = 1;
      continue;
    }
    if (strcmp(argv[i], "--rows") == 0) dest = o.rows;
    if (strcmp(argv[i], "--writer") == 0) dest = o.writer;
    if (strcmp(argv[i], "--sup-run") == 0) dest = o.sup_run;
    if (strcmp(argv[i], "--sup-timeout") == 0) dest = o.sup_timeout;
    if (strcmp(argv[i], "--timeout") == 0) dest = o.timeout;
    if (dest == NULL || i + 1 >= argc) {
      fprintf(stderr,
              "usage: %s [--quick] [--rows cli,pty_spawn,pty_capture,tee,threads,alive]\n"
              "           [--writer PATH] [--sup-run PATH] [--sup-timeout PATH] [--timeout PATH]\n"
              "       %s drain\n",
              argv[0], argv[0]);
      return 2;
    }
    snprintf(dest, dest == o.rows ? sizeof o.rows : PATH_MAX, "%s", argv[++i]);
  }
  const char *names[NROWS];
  for (size_t k = 0; k < NROWS; k++) names[k] = ROWS[k].name;
  check_rows(o.rows, names, NROWS);
  const char *need[][2] = {{o.writer, "--writer"},
                           {o.sup_run, "--sup-run"},
                           {o.sup_timeout, "--sup-timeout"},
                           {o.timeout, "--timeout"}};
  for (size_t k = 0; k < sizeof need / sizeof *need; k++)
    if (access(need[k][0], X_OK) != 0)
      die("%s: %s (pass %s)", need[k][0], strerror(errno), need[k][1]);
  beside_self(o.self, sizeof o.self, "bench_modes");

  printf("{\"row\":\"modes_meta\",\"sup_version\":%d,\"quick\":%s}\n", sup_version(),
         o.quick ? "true" : "false");
  fflush(stdout);
  for (size_t k = 0; k < NROWS; k++)
    if (row_wanted(o.rows, ROWS[k].name)) ROWS[k].run(&o);
  return 0;
}
