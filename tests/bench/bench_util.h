/* bench_util: what bench_sup and bench_modes share (messages, clock, samples and their JSON rows, sup's spawn done by hand, the head + tail keeper, sup calls, options). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sup.h"

/* The program's name, defined by each program: the prefix of its messages. */
extern const char bench_prog[];

/* Absolute paths for every implementation, so that no side pays for a PATH
 * search the other skips (a PATH may list many directories before /bin). */
#define TRUE_PATH "/bin/true"
#define SLEEP_PATH "/bin/sleep"

enum { READ_CHUNK = 64 * 1024 };

/* sup's default max_output_bytes: the raw loops keep as much. */
#define SUP_DEFAULT_MAX_OUTPUT ((uint64_t)16 << 20)

/* ---- messages and the clock --------------------------------------------- */

void vnote(const char *fmt, va_list ap);
void note(const char *fmt, ...);
_Noreturn void die(const char *fmt, ...);
double now_us(void);
void *xcalloc(size_t n, size_t size);

/* ---- samples and the JSON rows ------------------------------------------ */

typedef struct {
  double *v;
  size_t n, cap;
} samples;

void push(samples *s, double x);
int cmp_double(const void *a, const void *b); /* for qsort */
double pct(const samples *s, double q);
double mean(const samples *s);
double smin(const samples *s);
double smax(const samples *s);
void print_stats(const char *key, const samples *s);
void finish_row(const char *key, samples *s, ...);

/* One side of a row that alternates batches: each call of fn(arg) is one
 * sample, its duration in microseconds pushed to s. */
typedef struct {
  void (*fn)(const void *arg);
  const void *arg;
  samples *s;
} bench_side;

void alternate_batches(int warm, int rounds, int batch, bench_side a, bench_side b);

/* ---- raw side: what a program would do without sup ---------------------- */

int raw_wait(pid_t pid);
int dev_null(void);
void set_nonblocking(int fd);
void write_all(int fd, const char *d, size_t n);

/* A child started the way sup starts one: stdin from /dev/null, stdout and
 * stderr each into a pipe of their own, in a new process group. */
typedef struct {
  pid_t pid;
  int out, err; /* read ends; -1 once at EOF and closed */
} raw_child;

raw_child raw_start(const char *path, char *const argv[], char *const envp[]);
void raw_drain(int *fd, char *buf, size_t cap);
int raw_finish(raw_child *c, int pidfd);
void raw_true(void);
void raw_true_side(const void *unused);

/* ---- the head + tail sup keeps, by hand --------------------------------- */

/* What sup keeps of a stream past its limit, done by hand: the first half
 * of the limit, then the newest half in a ring, in one buffer of the limit;
 * at the end the ring is rotated in place, so the kept bytes are one piece,
 * as sup_result_output hands them out, with no second copy. */
typedef struct {
  size_t head_cap, ring_cap, head_len, ring_start, ring_len;
  char *buf; /* head_cap bytes of head, then ring_cap of ring */
  uint64_t total;
} keeper;

void keeper_init(keeper *k, uint64_t limit);
void keeper_append(keeper *k, const char *d, size_t n);
char *keeper_join(keeper *k, size_t *len);
void raw_keep_all(raw_child *c, keeper *out, keeper *err, int tee_fd);
/* In a vfork/clone child before exec: every handled signal back to its
 * default, as posix_spawn and sup do (ignored ones stay ignored). */
void reset_handled_signals(void);

/* ---- sup side ----------------------------------------------------------- */

sup_proc *sup_start(const char *json);
void sup_finish(sup_proc *p);
void sup_true(const char *json);
void sup_true_side(const void *json);

/* ---- options ------------------------------------------------------------ */

int row_wanted(const char *rows, const char *name);
void check_rows(const char *rows, const char *const known[], size_t n_known);
void beside_self(char *out, size_t cap, const char *rel);

#endif
