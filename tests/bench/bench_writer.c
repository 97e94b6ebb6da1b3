/*
 * bench_writer BYTES: write BYTES bytes to stdout as fast as the reader takes
 * them, then exit 0. The capture rows of sup and of every peer run this same
 * child, so they differ only in how the parent reads the pipe.
 *
 * With SUP_BENCH_WRITER_CPU=N in its environment the writer first moves
 * itself to CPU N. Pipe throughput depends on whether reader and writer share
 * a CPU (2x apart on a 2-core VM); the benchmark fixes the placement instead
 * of leaving it to the scheduler, and this variable reaches the writer
 * through every library's normal environment inheritance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One pipe's default capacity: each write fills the pipe at most once, so the
 * writer never makes the reader wait on a half-empty pipe for long. */
enum { CHUNK = 64 * 1024 };

static char chunk[CHUNK];

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s BYTES\n", argv[0]);
    return 2;
  }
  char *end = NULL;
  errno = 0;
  unsigned long long left = strtoull(argv[1], &end, 10);
  if (errno != 0 || end == argv[1] || *end != '\0') {
    fprintf(stderr, "%s: bad byte count '%s'\n", argv[0], argv[1]);
    return 2;
  }
  const char *cpu = getenv("SUP_BENCH_WRITER_CPU");
  if (cpu != NULL && *cpu != '\0') {
    long n = strtol(cpu, &end, 10);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (*end != '\0' || n < 0 || n >= CPU_SETSIZE) {
      fprintf(stderr, "%s: bad SUP_BENCH_WRITER_CPU '%s'\n", argv[0], cpu);
      return 2;
    }
    CPU_SET((int)n, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      perror("bench_writer: sched_setaffinity");
      return 1;
    }
  }
  /* Not zeros, so that no layer can take a shortcut on zero pages. */
  memset(chunk, 'x', sizeof chunk);
  while (left > 0) {
    size_t want = left < CHUNK ? (size_t)left : (size_t)CHUNK;
    ssize_t n = write(STDOUT_FILENO, chunk, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      perror("bench_writer: write");
      return 1;
    }
    left -= (unsigned long long)n;
  }
  return 0;
}
