/*
 * The options sup-run and sup-timeout share for libsup's descriptors,
 * input wait and confinement (--stdin, --fd, --input-wait-timeout,
 * --tty-stop-timeout, --limit, --sandbox-*, --no-network, --user, --group,
 * --require-sentinel), and the spec keys they become.
 */
#define _GNU_SOURCE /* getopt_long */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sup-run.h"

void confine_defaults(struct confine_options *c)
{
  *c = (struct confine_options){.memory_bytes = -1,
                                .cpu_seconds = -1,
                                .processes = -1,
                                .file_bytes = -1,
                                .open_files = -1};
}

void confine_release(struct confine_options *c)
{
  free(c->fds.data);
  free(c->fd_children);
  free(c->sandbox_write.data);
  free(c->sandbox_read.data);
  confine_defaults(c);
}

/* A descriptor number: decimal digits, no sign, at most INT_MAX. */
static bool parse_fd_number(const char *s, int *out)
{
  if (*s < '0' || *s > '9')
    return false;
  char *end;
  errno = 0;
  long n = strtol(s, &end, 10);
  if (*end != '\0' || errno != 0 || n > INT_MAX)
    return false;
  *out = (int)n;
  return true;
}

/* The library would refuse it too (SUP_EBADF), but only after sup-run has
 * opened its --json file, whose number a mistyped N could then name. */
static void require_open(int fd, const char *option)
{
  if (fcntl(fd, F_GETFD) < 0)
    usage_error("%s: descriptor %d is not open", option, fd);
}

int fd_mode(const char *arg, const char *option)
{
  if (strncmp(arg, "fd:", 3) != 0)
    return -1;
  int fd;
  if (!parse_fd_number(arg + 3, &fd))
    usage_error("%s: invalid descriptor '%s' (expected fd:N, N a number)", option, arg + 3);
  require_open(fd, option);
  return fd;
}

void append_routing(struct strbuf *sb, const char *mode)
{
  int fd;
  /* Printed from the number: "fd:007" is 7, and JSON has no leading 0. */
  if (strncmp(mode, "fd:", 3) == 0 && parse_fd_number(mode + 3, &fd))
    sb_printf(sb, "{\"fd\": %d}", fd);
  else
    sb_json_string(sb, mode);
}

static void fd_option(const char *arg, struct confine_options *o)
{
  const char *eq = strchr(arg, '=');
  char child_text[32];
  int child, host;
  if (eq == NULL || (size_t)(eq - arg) >= sizeof child_text)
    usage_error("--fd: invalid value '%s' (expected CHILD=HOST, e.g. 3=7)", arg);
  memcpy(child_text, arg, (size_t)(eq - arg));
  child_text[eq - arg] = '\0';
  if (!parse_fd_number(child_text, &child) || !parse_fd_number(eq + 1, &host))
    usage_error("--fd: invalid value '%s' (expected CHILD=HOST, e.g. 3=7)", arg);
  if (child < 3)
    usage_error("--fd: child descriptor %d: 0, 1 and 2 are --stdin, --stdout and --stderr",
                child);
  for (size_t i = 0; i < o->fd_count; i++)
    if (o->fd_children[i] == child)
      usage_error("--fd: child descriptor %d given twice", child);
  require_open(host, "--fd");
  int *grown = realloc(o->fd_children, (o->fd_count + 1) * sizeof *grown);
  if (grown == NULL)
    die_oom();
  o->fd_children = grown;
  o->fd_children[o->fd_count++] = child;
  sb_printf(&o->fds, "%s\"%d\": %d", o->fds.len > 0 ? ", " : "", child, host);
}

/* A positive count for --limit; sizes take parse_bytes's suffixes. */
static int64_t limit_value(const char *key, const char *value, bool size)
{
  uint64_t n = 0;
  bool ok;
  if (size) {
    ok = parse_bytes(value, &n) == PARSE_OK;
  } else {
    char *end;
    errno = 0;
    unsigned long long v = value[0] >= '0' && value[0] <= '9' ? strtoull(value, &end, 10) : 0;
    ok = value[0] >= '0' && value[0] <= '9' && *end == '\0' && errno == 0 &&
         v <= (unsigned long long)INT64_MAX;
    n = v;
  }
  if (!ok)
    usage_error("--limit: %s: invalid value '%s' (expected a %s)", key, value,
                size ? "size such as 512M or 1G" : "whole number");
  if (n == 0)
    usage_error("--limit: %s: must be above 0", key);
  return (int64_t)n;
}

/* --limit memory=1G,cpu=60,...: each KEY=VALUE in turn; a later one wins. */
static void limit_option(const char *arg, struct confine_options *o)
{
  char *list = strdup(arg);
  if (list == NULL)
    die_oom();
  char *save = NULL;
  bool any = false;
  for (char *item = strtok_r(list, ",", &save); item != NULL;
       item = strtok_r(NULL, ",", &save)) {
    any = true;
    char *value = strchr(item, '=');
    if (value == NULL)
      usage_error("--limit: '%s' has no value (expected KEY=VALUE)", item);
    *value++ = '\0';
    if (strcmp(item, "memory") == 0)
      o->memory_bytes = limit_value(item, value, true);
    else if (strcmp(item, "cpu") == 0)
      o->cpu_seconds = limit_value(item, value, false);
    else if (strcmp(item, "processes") == 0)
      o->processes = limit_value(item, value, false);
    else if (strcmp(item, "file") == 0)
      o->file_bytes = limit_value(item, value, true);
    else if (strcmp(item, "open-files") == 0)
      o->open_files = limit_value(item, value, false);
    else if (strcmp(item, "core") == 0) {
      /* The library can only turn core dumps off: the host's limit is
       * otherwise the child's. */
      if (strcmp(value, "0") != 0)
        usage_error("--limit: core: invalid value '%s' (only 0: no core dumps)", value);
      o->core_zero = true;
    } else
      usage_error("--limit: unknown limit '%s' (expected memory, cpu, processes, file, "
                  "open-files or core)", item);
  }
  free(list);
  if (!any)
    usage_error("--limit: empty list (expected KEY=VALUE,...)");
}

/* The library takes absolute paths: a relative one is the caller's, from
 * the current directory, and must exist (a sandbox rule needs the file). */
static void path_option(const char *arg, const char *option, struct strbuf *list)
{
  if (arg[0] == '\0')
    usage_error("%s: empty path", option);
  char *abs = realpath(arg, NULL);
  if (abs == NULL)
    usage_error("%s: '%s': %s", option, arg, strerror(errno));
  if (list->len > 0)
    sb_puts(list, ", ");
  sb_json_string(list, abs);
  free(abs);
}

static const char *id_option(const char *arg, const char *option)
{
  if (arg[0] == '\0')
    usage_error("%s: empty name", option);
  return arg;
}

void confine_option(int c, const char *arg, struct confine_options *o)
{
  switch ((enum confine_option)c) {
  case COPT_STDIN:
    if (strcmp(arg, "inherit") != 0 && strcmp(arg, "null") != 0 &&
        fd_mode(arg, "--stdin") < 0)
      usage_error("--stdin: invalid mode '%s' (expected 'inherit', 'null' or 'fd:N')", arg);
    o->stdin_mode = arg;
    break;
  case COPT_FD:
    fd_option(arg, o);
    break;
  case COPT_INPUT_WAIT:
    duration_option(arg, "--input-wait-timeout", &o->input_wait_timeout_ms, 0);
    break;
  case COPT_TTY_STOP:
    duration_option(arg, "--tty-stop-timeout", &o->tty_stop_timeout_ms, 0);
    break;
  case COPT_LIMIT:
    limit_option(arg, o);
    break;
  case COPT_SANDBOX_WRITE:
    path_option(arg, "--sandbox-write", &o->sandbox_write);
    break;
  case COPT_SANDBOX_READ:
    path_option(arg, "--sandbox-read", &o->sandbox_read);
    o->sandbox_read_given = true;
    break;
  case COPT_NO_NETWORK:
    o->no_network = true;
    break;
  case COPT_SANDBOX_TMP:
    o->sandbox_tmp = true;
    break;
  case COPT_SANDBOX_STRICT:
    o->sandbox_strict = true;
    break;
  case COPT_USER:
    o->user = id_option(arg, "--user");
    break;
  case COPT_GROUP:
    o->group = id_option(arg, "--group");
    break;
  case COPT_REQUIRE_SENTINEL:
    o->require_sentinel = true;
    break;
  }
}

/* A user or group: digits as an id (the library bounds it and names the
 * key), else a name. */
static void append_id(struct strbuf *sb, const char *key, const char *value)
{
  sb_printf(sb, ", \"%s\": ", key);
  char *end;
  errno = 0;
  unsigned long long id = strtoull(value, &end, 10);
  if (value[0] >= '0' && value[0] <= '9' && *end == '\0' && errno == 0)
    sb_printf(sb, "%llu", id);
  else
    sb_json_string(sb, value);
}

static void append_limit(struct strbuf *sb, bool *first, const char *key, int64_t value)
{
  if (value < 0)
    return;
  sb_printf(sb, "%s\"%s\": %" PRId64, *first ? "" : ", ", key, value);
  *first = false;
}

void append_confine_spec(struct strbuf *sb, const struct options *o)
{
  const struct confine_options *c = &o->confine;
  if (c->fds.len > 0)
    sb_printf(sb, ", \"fds\": {%s}", c->fds.data);
  if (c->input_wait_timeout_ms > 0)
    sb_printf(sb, ", \"input_wait_timeout_ms\": %" PRIu64, c->input_wait_timeout_ms);
  if (c->tty_stop_timeout_ms > 0)
    sb_printf(sb, ", \"tty_stop_timeout_ms\": %" PRIu64, c->tty_stop_timeout_ms);
  bool first = true;
  struct strbuf limits = {0};
  append_limit(&limits, &first, "memory_bytes", c->memory_bytes);
  append_limit(&limits, &first, "cpu_seconds", c->cpu_seconds);
  append_limit(&limits, &first, "processes", c->processes);
  append_limit(&limits, &first, "file_bytes", c->file_bytes);
  append_limit(&limits, &first, "open_files", c->open_files);
  if (c->core_zero)
    sb_printf(&limits, "%s\"core_dump\": false", first ? "" : ", ");
  if (limits.len > 0)
    sb_printf(sb, ", \"limits\": {%s}", limits.data);
  free(limits.data);

  bool filesystem = c->sandbox_write.len > 0 || c->sandbox_read_given || c->sandbox_tmp;
  if (filesystem || c->no_network || c->sandbox_strict) {
    /* --no-network alone leaves the filesystem as it is: a sandbox without
     * "write" would make everything read-only. */
    sb_printf(sb, ", \"sandbox\": {\"write\": [%s]",
              filesystem ? (c->sandbox_write.data ? c->sandbox_write.data : "") : "\"/\"");
    if (c->sandbox_read_given)
      sb_printf(sb, ", \"read\": [%s]", c->sandbox_read.data);
    if (c->no_network)
      sb_puts(sb, ", \"network\": false");
    if (c->sandbox_tmp)
      sb_puts(sb, ", \"tmp\": true");
    if (c->sandbox_strict)
      sb_puts(sb, ", \"strict\": true");
    sb_puts(sb, "}");
  }
  if (c->user != NULL)
    append_id(sb, "user", c->user);
  if (c->group != NULL)
    append_id(sb, "group", c->group);
  if (c->require_sentinel)
    sb_puts(sb, ", \"require_sentinel\": true");
}
