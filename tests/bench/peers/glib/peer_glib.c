/*
 * GLib GSubprocess peer: peer_glib {spawn|capture} COUNT, printing one BENCH
 * line (see ../README.md). spawn runs /bin/true with stdout and stderr piped
 * and g_subprocess_communicate, as a GLib program capturing a command would;
 * capture reads SUP_BENCH_WRITER's stdout through the GInputStream.
 */
#define _GNU_SOURCE
#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { WARMUP = 5, READ_CHUNK = 64 * 1024 };

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void fail(const char *what, GError *err) {
  fprintf(stderr, "peer_glib: %s: %s\n", what, err ? err->message : "failed");
  exit(1);
}

static void spawn_true(void) {
  GError *err = NULL;
  GSubprocess *p = g_subprocess_new(
      G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &err,
      "/bin/true", NULL);
  if (p == NULL) fail("spawn /bin/true", err);
  GBytes *out = NULL, *errb = NULL;
  if (!g_subprocess_communicate(p, NULL, NULL, &out, &errb, &err))
    fail("communicate", err);
  if (!g_subprocess_get_successful(p)) fail("/bin/true did not exit 0", NULL);
  g_bytes_unref(out);
  g_bytes_unref(errb);
  g_object_unref(p);
}

static guint64 capture(const char *writer, const char *count) {
  GError *err = NULL;
  GSubprocess *p = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE, &err,
                                    writer, count, NULL);
  if (p == NULL) fail("spawn writer", err);
  GInputStream *in = g_subprocess_get_stdout_pipe(p);
  static char buf[READ_CHUNK];
  guint64 total = 0;
  for (;;) {
    gssize n = g_input_stream_read(in, buf, sizeof buf, NULL, &err);
    if (n < 0) fail("read", err);
    if (n == 0) break;
    total += (guint64)n;
  }
  if (!g_subprocess_wait_check(p, NULL, &err)) fail("writer", err);
  g_object_unref(p);
  return total;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s {spawn|capture} COUNT\n", argv[0]);
    return 2;
  }
  char *end = NULL;
  unsigned long long count = strtoull(argv[2], &end, 10);
  if (*argv[2] == '\0' || *end != '\0' || count == 0) {
    fprintf(stderr, "peer_glib: bad count '%s'\n", argv[2]);
    return 2;
  }
  char version[32];
  snprintf(version, sizeof version, "%u.%u.%u", glib_major_version,
           glib_minor_version, glib_micro_version);

  if (strcmp(argv[1], "spawn") == 0) {
    double *samples = g_new(double, count);
    for (unsigned long long i = 0; i < count + WARMUP; i++) {
      double t0 = now_us();
      spawn_true();
      if (i >= WARMUP) samples[i - WARMUP] = now_us() - t0;
    }
    printf("BENCH impl=glib version=%s mode=spawn count=%llu samples_us=",
           version, count);
    for (unsigned long long i = 0; i < count; i++)
      printf(i ? ",%.2f" : "%.2f", samples[i]);
    putchar('\n');
    g_free(samples);
    return 0;
  }
  if (strcmp(argv[1], "capture") == 0) {
    const char *writer = getenv("SUP_BENCH_WRITER");
    if (writer == NULL || *writer == '\0') {
      fprintf(stderr, "peer_glib: SUP_BENCH_WRITER is not set\n");
      return 2;
    }
    double t0 = now_us();
    guint64 got = capture(writer, argv[2]);
    double secs = (now_us() - t0) / 1e6;
    if (got != count) {
      fprintf(stderr, "peer_glib: read %llu of %llu bytes\n",
              (unsigned long long)got, count);
      return 1;
    }
    printf("BENCH impl=glib version=%s mode=capture count=%llu bytes=%llu "
           "seconds=%.6f\n",
           version, count, (unsigned long long)got, secs);
    return 0;
  }
  fprintf(stderr, "peer_glib: unknown mode '%s'\n", argv[1]);
  return 2;
}
