/* A host for host_death_test, linked to libsup.so (sup-host-helper) and to
 * libsup.a (sup-host-helper-static).
 *
 *   sup-host-helper PIDFILE
 *       supervises `sleep 30`, writes its pid to PIDFILE, then waits to be
 *       killed.
 *   sup-host-helper PIDFILE CONTAIN N [exec]
 *       supervises N trees with "contain": CONTAIN, each a shell with a
 *       `sleep` in its group and a setsid'd `sleep` outside it, writes one
 *       line "SHELL GROUP_SLEEP SETSID_SLEEP" per tree to PIDFILE (whole,
 *       by rename), then waits to be killed; with "exec" it waits for
 *       PIDFILE.go to exist and execs `sleep 30`, which ends it as a host;
 *       with "again" it waits for PIDFILE.go, supervises N more trees and
 *       writes their lines to PIDFILE.more (whole, by rename).
 *   sup-host-helper --spawn [--hidden] [--stall-mkdir] SPEC
 *       spawns SPEC, waits for its end and prints "rc N", the detail of a
 *       failure, sup_result_host_death and the result; with --hidden, first in a mount namespace
 *       of its own with an empty /proc, where /proc/self/exe cannot be
 *       exec'd (prints "skip WHY" where that cannot be made); with
 *       --stall-mkdir, the host's thread stalls for 300 ms right after it
 *       has made its cgroup directory (sup-PID-START), as a host preempted
 *       there would. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sup.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int one_sleep(const char *pid_file)
{
  sup_proc *p = NULL;
  if (sup_spawn("{\"argv\": [\"sleep\", \"30\"]}", &p) != 0)
    return 1;
  FILE *f = fopen(pid_file, "w");
  if (f == NULL)
    return 1;
  fprintf(f, "%d\n", sup_pid(p));
  fclose(f);
  sup_poll(p, -1);
  sup_release(p);
  return 0;
}

/* Reads the child's stdout until a newline: its line of pids. */
static int read_line(sup_proc *p, char *line, size_t cap)
{
  uint64_t pos = 0;
  size_t len = 0;
  while (len == 0 || line[len - 1] != '\n') {
    size_t n = 0;
    if (len + 1 >= cap || sup_output_read(p, SUP_STDOUT, &pos, line + len, cap - 1 - len, &n) != 0)
      return -1;
    len += n;
    if (n == 0 && sup_output_wait(p, pos, SUP_POS_IGNORE, 10000) != 1)
      return -1;
  }
  line[len] = '\0';
  return 0;
}

/* Supervises `trees` trees of spec, writing their lines to path (whole, by
 * rename); procs gets the handles. */
static int spawn_trees(const char *spec, int trees, sup_proc **procs, const char *path)
{
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return 1;
  for (int i = 0; i < trees; i++) {
    char err[SUP_ERRBUF_SIZE];
    if (sup_spawn_ex(spec, &procs[i], err, sizeof err) != 0) {
      fprintf(stderr, "sup-host-helper: %s\n", err);
      return 1;
    }
    char line[256];
    if (read_line(procs[i], line, sizeof line) != 0)
      return 1;
    fputs(line, f);
  }
  if (fclose(f) != 0 || rename(tmp, path) != 0)
    return 1;
  return 0;
}

/* Until PIDFILE.go exists. */
static void wait_for_go(const char *pid_file)
{
  char go[4096];
  snprintf(go, sizeof go, "%s.go", pid_file);
  while (access(go, F_OK) != 0)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static int stall_mkdir;

/* libsup's mkdir comes here: the helper is linked with --export-dynamic
 * (and, static, defines it before libc). */
int mkdir(const char *path, mode_t mode)
{
  int rc = (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode);
  const char *name = strrchr(path, '/');
  if (rc == 0 && stall_mkdir && name != NULL && strncmp(name, "/sup-", 5) == 0)
    nanosleep(&(struct timespec){0, 300 * 1000000}, NULL);
  return rc;
}

/* No /proc here: the host's own executable cannot be exec'd through
 * /proc/self/exe, which a static libsup's sentinel needs. */
static int hide_proc(void)
{
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount("none", "/proc", "tmpfs", 0, NULL) != 0) {
    printf("skip no mount namespace: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}

static int spawn_one(const char *spec)
{
  sup_proc *p = NULL;
  char err[SUP_ERRBUF_SIZE];
  int rc = sup_spawn_ex(spec, &p, err, sizeof err);
  printf("rc %d\n", rc);
  if (rc != 0) {
    printf("detail %s\n", err);
    return 0;
  }
  printf("host_death %d\n", sup_result_host_death(p)); /* known before the end */
  sup_poll(p, -1);
  printf("result %s\n", sup_result(p));
  sup_release(p);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc >= 3 && strcmp(argv[1], "--spawn") == 0) {
    int hidden = 0;
    for (int i = 2; i < argc - 1; i++) {
      if (strcmp(argv[i], "--hidden") == 0) {
        hidden = 1;
        if (hide_proc() != 0)
          return 0;
      }
      if (strcmp(argv[i], "--stall-mkdir") == 0)
        stall_mkdir = 1;
    }
    int rc = spawn_one(argv[argc - 1]);
    /* Without /proc, LeakSanitizer's check at exit cannot run: it would
     * fail loudly, before stdio is flushed. */
    if (hidden) {
      fflush(stdout);
      _exit(rc);
    }
    return rc;
  }
  if (argc == 2)
    return one_sleep(argv[1]);
  const char *then = argc == 5 ? argv[4] : "";
  if (argc != 4 && !(argc == 5 && (strcmp(then, "exec") == 0 || strcmp(then, "again") == 0)))
    return 2;
  int trees = atoi(argv[3]);
  char spec[512];
  snprintf(spec, sizeof spec,
           "{\"argv\": [\"sh\", \"-c\", \"sleep 30 & a=$!; setsid sleep 30 & b=$!; echo $$ $a $b; wait\"], "
           "\"contain\": \"%s\"}",
           argv[2]);
  sup_proc **procs = calloc(2 * (size_t)trees, sizeof *procs);
  if (procs == NULL || spawn_trees(spec, trees, procs, argv[1]) != 0)
    return 1;
  if (strcmp(then, "exec") == 0) {
    /* Once the test has seen every tree running: PIDFILE.go appears. */
    wait_for_go(argv[1]);
    execl("/bin/sleep", "sleep", "30", (char *)NULL);
    return 1;
  }
  if (strcmp(then, "again") == 0) {
    wait_for_go(argv[1]);
    char more[4096];
    snprintf(more, sizeof more, "%s.more", argv[1]);
    if (spawn_trees(spec, trees, procs + trees, more) != 0)
      return 1;
  }
  sup_poll(procs[0], -1);
  return 0;
}
