/*
 * Durations and byte counts on the command line: sup-run's exact form
 * (250ms, 1.5s), GNU timeout's (1d, 1e3, 0x1p-3, inf), and back to text for
 * messages.
 */
#define _GNU_SOURCE /* strtod_l */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sup-run.h"

/* Digits into *n; on overflow *n saturates and the caller learns from
 * *too_large. Returns the first byte that is not a digit. */
static const char *parse_digits(const char *p, uint64_t *n, bool *too_large)
{
  for (*n = 0; isdigit((unsigned char)*p); p++) {
    if (*n > (UINT64_MAX - 9) / 10)
      *too_large = true;
    else
      *n = *n * 10 + (uint64_t)(*p - '0');
  }
  return p;
}

/* sup-run's own form: digits with an optional fraction and unit, parsed by
 * hand so that the conversion to milliseconds is exact: the fraction is
 * multiplied digit by digit and rounded up. */
static enum parse_result parse_exact_duration(const char *s, uint64_t *out_ms)
{
  static const struct {
    const char *suffix;
    uint64_t ms;
  } units[] = {{"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
  bool too_large = false;
  uint64_t whole;
  const char *p = parse_digits(s, &whole, &too_large);
  bool any_digit = p != s;
  const char *frac = p;
  size_t nfrac = 0;
  if (*p == '.') {
    frac = ++p;
    for (; isdigit((unsigned char)*p); p++)
      nfrac++;
    any_digit = any_digit || nfrac > 0;
  }
  if (!any_digit)
    return PARSE_INVALID;

  uint64_t unit = 0;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(p, units[i].suffix) == 0)
      unit = units[i].ms;
  if (unit == 0)
    return PARSE_INVALID;
  if (too_large || whole > MAX_DURATION_MS / unit)
    return PARSE_TOO_LARGE;

  /* 0.frac * unit by long multiplication from the last digit: `carry` ends as
   * the whole milliseconds, `remainder` says whether a part of one is left. */
  uint64_t carry = 0;
  bool remainder = false;
  for (size_t i = nfrac; i-- > 0;) {
    uint64_t t = (uint64_t)(frac[i] - '0') * unit + carry;
    remainder = remainder || t % 10 != 0;
    carry = t / 10;
  }
  uint64_t ms = whole * unit + carry + (remainder ? 1 : 0);
  if (ms > MAX_DURATION_MS)
    return PARSE_TOO_LARGE;
  *out_ms = ms;
  return PARSE_OK;
}

bool parse_gnu_duration(const char *s, double *out)
{
  /* GNU reads the number in the C locale first, then in the user's (a
   * decimal comma), as its cl_strtod does. */
  static locale_t c_locale;
  if (c_locale == (locale_t)0)
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
  char *end = NULL;
  errno = 0;
  double d = c_locale != (locale_t)0 ? strtod_l(s, &end, c_locale) : strtod(s, &end);
  bool underflow = errno == ERANGE && fabs(d) < 1;
  if (end == s || (*end != '\0' && end[1] != '\0')) {
    errno = 0;
    char *other = NULL;
    double d2 = strtod(s, &other);
    if (other != s && (*other == '\0' || other[1] == '\0')) {
      d = d2;
      end = other;
      underflow = errno == ERANGE && fabs(d) < 1;
    }
  }
  /* GNU 9.1 refuses a leading '-' even for "-0". */
  if (end == s || s[0] == '-' || !(d >= 0) || (*end != '\0' && end[1] != '\0'))
    return false;
  switch (*end) {
  case '\0':
  case 's':
    break;
  case 'm':
    d *= 60;
    break;
  case 'h':
    d *= 60 * 60;
    break;
  case 'd':
    d *= 60 * 60 * 24;
    break;
  default:
    return false;
  }
  /* A number too small for a double (1e-10000) is still more than 0: the
   * shortest timeout, as newer GNU timeouts take it, not "no timeout". */
  if (d == 0 && underflow && strpbrk(s, "123456789") != NULL)
    d = 1e-9;
  *out = d;
  return true;
}

enum parse_result seconds_to_ms(double seconds, uint64_t *out_ms)
{
  if (!(seconds * 1000 <= (double)MAX_DURATION_MS)) {
    *out_ms = MAX_DURATION_MS;
    return PARSE_TOO_LARGE;
  }
  double ms = ceil(seconds * 1000);
  *out_ms = seconds > 0 && ms < 1 ? 1 : (uint64_t)ms;
  return PARSE_OK;
}

enum parse_result parse_duration(const char *s, uint64_t *out_ms)
{
  enum parse_result r = parse_exact_duration(s, out_ms);
  if (r == PARSE_TOO_LARGE)
    *out_ms = MAX_DURATION_MS;
  if (r != PARSE_INVALID)
    return r;
  double seconds;
  if (!parse_gnu_duration(s, &seconds))
    return PARSE_INVALID;
  return seconds_to_ms(seconds, out_ms);
}

/* BYTES: digits with an optional binary unit. At most MAX_BYTES. */
enum parse_result parse_bytes(const char *s, uint64_t *out)
{
  static const struct {
    const char *suffix;
    uint64_t mult;
  } units[] = {{"", 1},
               {"K", UINT64_C(1) << 10}, {"KiB", UINT64_C(1) << 10},
               {"M", UINT64_C(1) << 20}, {"MiB", UINT64_C(1) << 20},
               {"G", UINT64_C(1) << 30}, {"GiB", UINT64_C(1) << 30}};
  bool too_large = false;
  uint64_t n;
  const char *p = parse_digits(s, &n, &too_large);
  if (p == s)
    return PARSE_INVALID;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(p, units[i].suffix) == 0) {
      if (too_large || n > MAX_BYTES / units[i].mult)
        return PARSE_TOO_LARGE;
      *out = n * units[i].mult;
      return PARSE_OK;
    }
  }
  return PARSE_INVALID;
}

void format_duration(char *out, size_t size, uint64_t ms)
{
  if (ms >= 3600000 && ms % 3600000 == 0)
    snprintf(out, size, "%" PRIu64 "h", ms / 3600000);
  else if (ms >= 60000 && ms % 60000 == 0)
    snprintf(out, size, "%" PRIu64 "m", ms / 60000);
  else if (ms % 1000 == 0)
    snprintf(out, size, "%" PRIu64 "s", ms / 1000);
  else if (ms < 1000)
    snprintf(out, size, "%" PRIu64 "ms", ms);
  else {
    int len = snprintf(out, size, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
    while (len > 0 && out[len - 1] == '0')
      out[--len] = '\0';
    snprintf(out + len, size - (size_t)len, "s");
  }
}
