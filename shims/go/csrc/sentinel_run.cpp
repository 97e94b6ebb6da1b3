// The sentinel's work (sentinel_run.hpp): shared by the sup-sentinel
// program and the library's entry in a re-executed host, so that both end
// the same things the same way. Plain libc only: in a re-executed host it
// runs from a constructor, before the host's own runtime has started.
#include "sentinel_run.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace {

/* Everything is done within this of the host's death: the trees are
 * killed at once, the rest is waiting for them to empty. */
#define CLEANUP_MS 1500

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static pid_t *groups;
static size_t ngroups, groups_cap;
static char **dirs;
static size_t ndirs, dirs_cap;

static void *grow(void *array, size_t *cap, size_t size)
{
  size_t n = *cap ? *cap * 2 : 64;
  void *bigger = realloc(array, n * size);
  if (bigger != NULL)
    *cap = n;
  return bigger;
}

static void add_group(pid_t pgid)
{
  /* kill(-1, ...) and kill(0, ...) are not groups. */
  if (pgid <= 1)
    return;
  if (ngroups == groups_cap) {
    pid_t *g = (pid_t *)grow(groups, &groups_cap, sizeof *groups);
    if (g == NULL)
      return;
    groups = g;
  }
  groups[ngroups++] = pgid;
}

static int listed(pid_t pgid)
{
  for (size_t i = 0; i < ngroups; i++)
    if (groups[i] == pgid)
      return 1;
  return 0;
}

static void remove_group(pid_t pgid)
{
  for (size_t i = ngroups; i-- > 0;) {
    if (groups[i] == pgid) {
      groups[i] = groups[--ngroups];
      return;
    }
  }
}

static void add_dir(const char *path)
{
  if (path[0] != '/')
    return;
  if (ndirs == dirs_cap) {
    char **d = (char **)grow(dirs, &dirs_cap, sizeof *dirs);
    if (d == NULL)
      return;
    dirs = d;
  }
  char *copy = strdup(path);
  if (copy != NULL)
    dirs[ndirs++] = copy;
}

static void write_file(const char *dir, const char *name, const char *text)
{
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  ssize_t ignored = write(fd, text, strlen(text));
  (void)ignored;
  close(fd);
}

/* Until cgroup.events says "populated 0", or the deadline. */
static void wait_empty(const char *dir, double deadline)
{
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/cgroup.events", dir);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  char buf[256];
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n < 0)
      break;
    buf[n] = '\0';
    if (strstr(buf, "populated 0") != NULL)
      break;
    double left = deadline - now_ms();
    if (left <= 0)
      break;
    struct pollfd changed = {fd, POLLPRI, 0};
    poll(&changed, 1, left < 10 ? (int)left + 1 : 10);
  }
  close(fd);
}

static int remove_depth_first(const char *path)
{
  DIR *d = opendir(path);
  if (d != NULL) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_type != DT_DIR || e->d_name[0] == '.')
        continue;
      char sub[PATH_MAX];
      if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
        remove_depth_first(sub);
    }
    closedir(d);
  }
  return rmdir(path) == 0 || errno == ENOENT;
}

static void end_everything(void)
{
  double deadline = now_ms() + CLEANUP_MS;
  for (size_t i = 0; i < ndirs; i++)
    write_file(dirs[i], "cgroup.kill", "1");
  for (size_t i = 0; i < ngroups; i++)
    kill(-groups[i], SIGKILL);
  for (size_t i = 0; i < ndirs; i++) {
    for (;;) {
      wait_empty(dirs[i], deadline);
      if (remove_depth_first(dirs[i]) || now_ms() >= deadline)
        break;
      write_file(dirs[i], "cgroup.kill", "1");
      struct timespec pause = {0, 10 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
  }
}

}  // namespace

extern "C" int sup_sentinel_run(int ready_status)
{
  /* The first half exits at once, so that the second is nobody's child in
   * the host; a session of its own keeps the host's kill(0, ...) and its
   * terminal's signals away. */
  pid_t pid = fork();
  if (pid < 0)
    return 1;
  if (pid > 0)
    return ready_status;
  setsid();
  if (chdir("/") != 0)
    return 1;

  /* Records are read in batches: the poll asks for the host's end only
   * (POLLRDHUP: its shutdown after "q", POLLHUP: its death), so a record
   * arriving does not wake this process (the host pays no wake-up per
   * spawn); only the host's end or the timer does. The timer
   * drains what came meanwhile, every 10 ms while records come, backing off
   * to 100 ms when none do; the host's socket buffer holds the rest (some
   * 280 records at the smallest, more than a spawner clones in 100 ms). */
  char record[PATH_MAX + 2];
  int wait_ms = 10;
  for (;;) {
    struct pollfd host = {0, POLLRDHUP, 0};
    int ready = poll(&host, 1, wait_ms);
    if (ready < 0 && errno != EINTR)
      break;
    int got = 0, ended = 0;
    for (;;) {
      ssize_t n = recv(0, record, sizeof record - 1, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        break;
      if (n <= 0) {
        ended = 1; /* the host is gone */
        break;
      }
      got = 1;
      record[n] = '\0';
      switch (record[0]) {
      case '+':
        add_group((pid_t)atoi(record + 1));
        break;
      case '=': /* sent again: a restarted sentinel's list, or a record
                 * that may have gone to the one before */
        if (!listed((pid_t)atoi(record + 1)))
          add_group((pid_t)atoi(record + 1));
        break;
      case '-':
        remove_group((pid_t)atoi(record + 1));
        break;
      case 'c':
        add_dir(record + 1);
        break;
      case 'q':
        return 0; /* the engine ended everything itself */
      default:
        break;
      }
    }
    if (ended)
      break;
    wait_ms = got ? 10 : (wait_ms * 2 > 100 ? 100 : wait_ms * 2);
  }
  end_everything();
  return 0;
}
