/*
 * A growing string, for the spec's JSON text and sup-run's messages.
 */
#define _GNU_SOURCE

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sup-run.h"

_Noreturn void die_oom(void)
{
  fprintf(stderr, "%s: out of memory\n", g_progname);
  exit(EXIT_SUPRUN);
}

void sb_append(struct strbuf *sb, const char *s, size_t n)
{
  if (sb->cap - sb->len <= n) {
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap - sb->len <= n) {
      if (cap > SIZE_MAX / 2)
        die_oom();
      cap *= 2;
    }
    char *data = realloc(sb->data, cap);
    if (data == NULL)
      die_oom();
    sb->data = data;
    sb->cap = cap;
  }
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s) { sb_append(sb, s, strlen(s)); }

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp)
    die_oom();
  sb_append(sb, tmp, (size_t)n);
}

/* A JSON string from arbitrary argv bytes. Bytes >= 0x80 pass through
 * unchanged: they are not ours to reinterpret, and an argument that is not
 * UTF-8 must still reach exec byte for byte. */
void sb_json_string(struct strbuf *sb, const char *s)
{
  sb_puts(sb, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      char esc[2] = {'\\', (char)*p};
      sb_append(sb, esc, 2);
    } else if (*p < 0x20 || *p == 0x7f) {
      sb_printf(sb, "\\u%04x", *p);
    } else {
      sb_append(sb, (const char *)p, 1);
    }
  }
  sb_puts(sb, "\"");
}

