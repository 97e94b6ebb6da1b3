/* A host that loads a sup-using plugin, runs one supervised command through
 * it, unloads it, and does so again: N cycles must leave no thread, no fd and
 * no memory behind. Usage: plugin-host PLUGIN.so [CYCLES] */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*run_fn)(const char *spec, char *out, size_t out_size);

static long status_field(const char *name) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long value = -1;
  size_t len = strlen(name);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, name, len) == 0 && line[len] == ':') value = atol(line + len + 1);
  if (f) fclose(f);
  return value;
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') ++n;
  if (d) closedir(d);
  return n - 1; /* the DIR's own */
}

/* A joined thread leaves /proc a moment after join() returns. */
static long settled_threads(void) {
  long n = status_field("Threads");
  for (int i = 0; i < 200 && n != 1; ++i) {
    struct timespec ms = {0, 5 * 1000 * 1000};
    nanosleep(&ms, NULL);
    n = status_field("Threads");
  }
  return n;
}

static int cycle(const char *path, int i) {
  void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return -1;
  }
  run_fn run;
  void *symbol = dlsym(plugin, "plugin_run");
  memcpy(&run, &symbol, sizeof run); /* POSIX's way from object to function pointer */
  char out[64];
  char spec[128];
  snprintf(spec, sizeof spec, "{\"argv\": [\"echo\", \"cycle %d\"], \"idle_timeout_ms\": 5000}", i);
  int outcome = run ? run(spec, out, sizeof out) : -1;
  char want[32];
  snprintf(want, sizeof want, "cycle %d\n", i);
  dlclose(plugin);
  return outcome == 1 && strcmp(out, want) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PLUGIN.so [CYCLES]\n", argv[0]);
    return 2;
  }
  int cycles = argc > 2 ? atoi(argv[2]) : 100;
  /* Warm up: the first load maps libraries and grows the heap once. */
  for (int i = 0; i < 5; ++i)
    if (cycle(argv[1], i) != 0) return 1;
  long threads = settled_threads(), rss = status_field("VmRSS");
  int fds = open_fds();
  for (int i = 5; i < cycles; ++i) {
    if (cycle(argv[1], i) != 0) {
      fprintf(stderr, "cycle %d failed\n", i);
      return 1;
    }
  }
  long threads_after = settled_threads(), rss_after = status_field("VmRSS");
  int fds_after = open_fds();
  printf("%d cycles: threads %ld -> %ld, fds %d -> %d, VmRSS %ld -> %ld KiB\n", cycles, threads, threads_after,
         fds, fds_after, rss, rss_after);
  if (threads_after != 1 || threads != 1) return 1; /* unloading stopped the library's threads */
  if (fds_after != fds) return 1;
#if defined(__SANITIZE_ADDRESS__)
  (void)rss_after; /* ASan's quarantine holds freed memory on purpose */
#else
  if (rss_after - rss > 2048) return 1; /* no per-cycle growth (2 MiB of slack for the allocator) */
#endif
  return 0;
}
