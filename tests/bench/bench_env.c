/*
 * bench_env: a child started with many environment variables, through sup
 * (the spec's "env", merged with the inherited environment) against the raw
 * way (the same environment built by hand into an envp array, posix_spawn,
 * waitpid). Both run `true`; sup's side includes parsing the spec.
 *
 *   bench_env [--rounds R] [N ...]      (default: 3 rounds of 20000 100000)
 *
 * One JSON object per N on stdout: the median of the rounds on each side,
 * and their ratio. Durations are reported, never judged.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sup.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static char *spec_for(int n)
{
  cJSON *spec = cJSON_CreateObject();
  cJSON *argv = cJSON_AddArrayToObject(spec, "argv");
  cJSON_AddItemToArray(argv, cJSON_CreateString("true"));
  cJSON *env = cJSON_AddObjectToObject(spec, "env");
  char name[32];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "V%d", i);
    cJSON_AddItemToObject(env, name, cJSON_CreateString("1"));
  }
  char *text = cJSON_PrintUnformatted(spec);
  cJSON_Delete(spec);
  return text;
}

static double sup_side(const char *spec)
{
  double start = now_ms();
  sup_proc *p = NULL;
  char err[SUP_ERRBUF_SIZE];
  int rc = sup_spawn_ex(spec, &p, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "bench_env: sup_spawn: %s: %s\n", sup_strerror(rc), err);
    exit(1);
  }
  if (sup_poll(p, -1) != 1 || sup_result_exit_code(p) != 0) {
    fprintf(stderr, "bench_env: the child failed\n");
    exit(1);
  }
  sup_release(p);
  return now_ms() - start;
}

/* The same environment by hand: the inherited entries, then N new ones. */
static double raw_side(int n)
{
  double start = now_ms();
  size_t inherited = 0;
  while (environ[inherited] != NULL) inherited++;
  char **envp = malloc((inherited + (size_t)n + 1) * sizeof *envp);
  char *strings = malloc((size_t)n * 16);
  if (envp == NULL || strings == NULL) exit(1);
  memcpy(envp, environ, inherited * sizeof *envp);
  char *at = strings;
  for (int i = 0; i < n; i++) {
    envp[inherited + (size_t)i] = at;
    at += sprintf(at, "V%d=1", i) + 1;
  }
  envp[inherited + (size_t)n] = NULL;
  char *argv[] = {"true", NULL};
  pid_t pid;
  if (posix_spawnp(&pid, "true", NULL, NULL, argv, envp) != 0) exit(1);
  int status;
  waitpid(pid, &status, 0);
  free(envp);
  free(strings);
  return now_ms() - start;
}

int main(int argc, char **argv)
{
  int rounds = 3;
  int counts[16], ncounts = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (ncounts < 16)
      counts[ncounts++] = atoi(argv[i]);
  }
  if (ncounts == 0) {
    counts[ncounts++] = 20000;
    counts[ncounts++] = 100000;
  }
  if (rounds < 1 || rounds > 64) rounds = 3;
  for (int c = 0; c < ncounts; c++) {
    int n = counts[c];
    char *spec = spec_for(n);
    double sup_ms[64], raw_ms[64];
    for (int r = 0; r < rounds; r++) {
      /* Alternating, so that drift on a shared machine hits both sides. */
      raw_ms[r] = raw_side(n);
      sup_ms[r] = sup_side(spec);
    }
    qsort(sup_ms, (size_t)rounds, sizeof *sup_ms, by_value);
    qsort(raw_ms, (size_t)rounds, sizeof *raw_ms, by_value);
    double s = sup_ms[rounds / 2], w = raw_ms[rounds / 2];
    printf("{\"row\": \"env\", \"vars\": %d, \"rounds\": %d, \"sup_ms\": %.1f, \"raw_ms\": %.1f, \"ratio\": %.2f}\n",
           n, rounds, s, w, s / w);
    fflush(stdout);
    cJSON_free(spec);
  }
  return 0;
}
