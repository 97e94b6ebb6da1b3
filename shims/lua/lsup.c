/*
 * lsup.c: the Lua 5.4 module "sup", over libsup's C ABI (include/sup.h).
 *
 *   local sup = require "sup"
 *   local p, err, code = sup.spawn{ "make", "-j8", idle_timeout_ms = 30000 }
 *   local res = p:wait()
 *
 * Modelled on Lua's own liolib.c and on luv: one metatable per type with
 * __gc and __close both releasing, methods through __index, a released
 * handle raises when used; programmer misuse raises; a command that cannot
 * start returns nil, message, code.
 *
 * The spec is JSON built here by hand, so that every byte of a Lua string
 * reaches the kernel unchanged: only '"', '\' and bytes below 0x20 are
 * escaped, bytes >= 0x80 pass through raw (valid UTF-8 or not), and stdin
 * data goes as base64. Everything but argv, env and stdin.data is encoded
 * generically and validated by the library, so that a bad key or value
 * raises with the library's own detail ("spec: KEY: problem").
 *
 * A Lua state is single-threaded: a handle is never used by two threads at
 * once, so the "no call may begin after sup_release" rule reduces to
 * clearing the pointer before releasing it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <lauxlib.h>
#include <lua.h>

#include <sup.h>

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__)
#define LSUP_EXPORT __attribute__((visibility("default")))
#else
#define LSUP_EXPORT
#endif

#define PROC_MT "sup.process"
#define SPECBUF_MT "sup.specbuf"
#define MAX_DEPTH 32

typedef struct {
  sup_proc *p;     /* NULL once closed */
  uint64_t pos[2]; /* read positions of stdout and stderr, for p:read */
} lproc;

static const char *const stream_names[] = {"stdout", "stderr", NULL};

/* ---- errors ----------------------------------------------------------- */

/* Runtime failure, Lua style: nil, message, code. */
static int push_fail(lua_State *L, int code) {
  lua_pushnil(L);
  lua_pushstring(L, sup_strerror(code));
  lua_pushinteger(L, code);
  return 3;
}

static const char *part_name(int part) {
  switch (part) {
    case SUP_PART_SPEC: return "spec";
    case SUP_PART_EXEC: return "exec";
    case SUP_PART_CWD: return "cwd";
    case SUP_PART_SYSTEM: return "system";
    default: return "none";
  }
}

/* ---- the spec, as JSON ------------------------------------------------ */

/* A growable buffer living in a userdata, so that a Lua error raised while
 * the spec is encoded (a bad value) cannot leak it: __gc frees it. */
typedef struct {
  char *data;
  size_t len, cap;
} specbuf;

static int specbuf_gc(lua_State *L) {
  specbuf *b = luaL_checkudata(L, 1, SPECBUF_MT);
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  return 0;
}

static void sb_reserve(lua_State *L, specbuf *b, size_t more) {
  if (more <= b->cap - b->len) return;
  if (more > (SIZE_MAX / 2) - b->len) luaL_error(L, "sup.spawn: spec too large");
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < more) cap *= 2;
  char *data = realloc(b->data, cap);
  if (data == NULL) luaL_error(L, "sup.spawn: out of memory");
  b->data = data;
  b->cap = cap;
}

static void sb_add(lua_State *L, specbuf *b, const char *s, size_t n) {
  sb_reserve(L, b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
}

static void sb_lit(lua_State *L, specbuf *b, const char *s) { sb_add(L, b, s, strlen(s)); }

/* A JSON string: '"', '\' and control bytes escaped, every other byte raw. */
static void sb_str(lua_State *L, specbuf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  sb_reserve(L, b, n + 2);
  b->data[b->len++] = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      sb_add(L, b, esc, 2);
    } else if (c < 0x20) {
      char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      sb_add(L, b, esc, 6);
    } else {
      sb_reserve(L, b, 1);
      b->data[b->len++] = (char)c;
    }
  }
  sb_reserve(L, b, 1);
  b->data[b->len++] = '"';
}

static void sb_base64(lua_State *L, specbuf *b, const unsigned char *s, size_t n) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (n > (SIZE_MAX / 4) * 3 - 8) luaL_error(L, "sup.spawn: stdin data too large");
  sb_reserve(L, b, (n + 2) / 3 * 4 + 2);
  char *o = b->data + b->len;
  *o++ = '"';
  size_t i = 0;
  for (; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
    *o++ = alphabet[v >> 18];
    *o++ = alphabet[(v >> 12) & 63];
    *o++ = alphabet[(v >> 6) & 63];
    *o++ = alphabet[v & 63];
  }
  if (i < n) {
    uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
    *o++ = alphabet[v >> 18];
    *o++ = alphabet[(v >> 12) & 63];
    *o++ = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
  *o++ = '"';
  b->len = (size_t)(o - b->data);
}

static void sb_number(lua_State *L, specbuf *b, int idx, const char *where) {
  char num[64];
  if (lua_isinteger(L, idx)) {
    snprintf(num, sizeof num, "%lld", (long long)lua_tointeger(L, idx));
  } else {
    double d = lua_tonumber(L, idx);
    if (!isfinite(d)) luaL_error(L, "sup.spawn: %s: not a finite number", where);
    if (d == floor(d) && fabs(d) < 9007199254740992.0)
      snprintf(num, sizeof num, "%.0f", d);
    else
      snprintf(num, sizeof num, "%.17g", d);
  }
  sb_lit(L, b, num);
}

/* Whether the table at idx is a sequence 1..n with nothing else (n may be 0). */
static int is_sequence(lua_State *L, int idx) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n) {
      lua_pop(L, 1);
      return 0;
    }
    count++;
  }
  return count == n;
}

/* Any other Lua value, for the library to judge. */
static void sb_value(lua_State *L, specbuf *b, int idx, const char *where, int depth) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: sb_lit(L, b, lua_toboolean(L, idx) ? "true" : "false"); return;
    case LUA_TNUMBER: sb_number(L, b, idx, where); return;
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, idx, &n);
      sb_str(L, b, s, n);
      return;
    }
    case LUA_TTABLE: break;
    default:
      luaL_error(L, "sup.spawn: %s: cannot pass a %s", where, luaL_typename(L, idx));
      return;
  }
  if (depth > MAX_DEPTH) luaL_error(L, "sup.spawn: %s: nested too deeply", where);
  luaL_checkstack(L, 4, "sup.spawn: nested too deeply");
  if (is_sequence(L, idx) && lua_rawlen(L, idx) > 0) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    sb_lit(L, b, "[");
    for (lua_Integer i = 1; i <= n; i++) {
      if (i > 1) sb_lit(L, b, ", ");
      lua_rawgeti(L, idx, i);
      sb_value(L, b, -1, where, depth + 1);
      lua_pop(L, 1);
    }
    sb_lit(L, b, "]");
    return;
  }
  sb_lit(L, b, "{");
  int first = 1;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "sup.spawn: %s: keys must be strings, not %s", where, luaL_typename(L, -2));
    if (!first) sb_lit(L, b, ", ");
    first = 0;
    size_t kn;
    const char *k = lua_tolstring(L, -2, &kn);
    sb_str(L, b, k, kn);
    sb_lit(L, b, ": ");
    sb_value(L, b, -1, where, depth + 1);
    lua_pop(L, 1);
  }
  sb_lit(L, b, "}");
}

/* env = { NAME = "value" | false }: false removes a variable. */
static void sb_env(lua_State *L, specbuf *b, int idx) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx)) {
    sb_value(L, b, idx, "env", 0); /* the library names the problem */
    return;
  }
  sb_lit(L, b, "{");
  int first = 1;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "sup.spawn: env: names must be strings, not %s", luaL_typename(L, -2));
    size_t kn;
    const char *k = lua_tolstring(L, -2, &kn);
    if (!first) sb_lit(L, b, ", ");
    first = 0;
    sb_str(L, b, k, kn);
    sb_lit(L, b, ": ");
    int t = lua_type(L, -1);
    if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
      sb_lit(L, b, "null");
    } else if (t == LUA_TSTRING || t == LUA_TNUMBER) {
      size_t vn;
      /* A number becomes its decimal text, as in os.getenv's world. The
       * conversion happens in place on the value slot, never on the key. */
      const char *v = lua_tolstring(L, -1, &vn);
      sb_str(L, b, v, vn);
    } else {
      luaL_error(L, "sup.spawn: env.%s: expected a string or false, got %s", k, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  sb_lit(L, b, "}");
}

/* stdin = "null" | "inherit" | "pipe" | { data = bytes }: data goes as
 * base64, so that any byte (NUL, invalid UTF-8) arrives exactly. */
static void sb_stdin(lua_State *L, specbuf *b, int idx) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx)) {
    sb_value(L, b, idx, "stdin", 0);
    return;
  }
  sb_lit(L, b, "{");
  int first = 1;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "sup.spawn: stdin: keys must be strings, not %s", luaL_typename(L, -2));
    size_t kn;
    const char *k = lua_tolstring(L, -2, &kn);
    if (!first) sb_lit(L, b, ", ");
    first = 0;
    if (strcmp(k, "data") == 0 && kn == 4 && lua_type(L, -1) == LUA_TSTRING) {
      size_t vn;
      const char *v = lua_tolstring(L, -1, &vn);
      sb_lit(L, b, "\"base64\": ");
      sb_base64(L, b, (const unsigned char *)v, vn);
    } else {
      sb_str(L, b, k, kn);
      sb_lit(L, b, ": ");
      sb_value(L, b, -1, "stdin", 1);
    }
    lua_pop(L, 1);
  }
  sb_lit(L, b, "}");
}

/* Encodes the spec table at index 1 into a specbuf pushed on the stack. */
static specbuf *encode_spec(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  specbuf *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->data = NULL;
  b->len = b->cap = 0;
  luaL_setmetatable(L, SPECBUF_MT);

  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  sb_lit(L, b, "{\"argv\": [");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    int t = lua_type(L, -1);
    if (t != LUA_TSTRING && t != LUA_TNUMBER)
      luaL_error(L, "sup.spawn: argv[%d]: expected a string, got %s", (int)i, luaL_typename(L, -1));
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (i > 1) sb_lit(L, b, ", ");
    sb_str(L, b, s, len);
    lua_pop(L, 1);
  }
  sb_lit(L, b, "]");

  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    int kt = lua_type(L, -2);
    if (kt == LUA_TNUMBER) {
      if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= n) {
        lua_pop(L, 1);
        continue;
      }
      lua_pushvalue(L, -2);
      luaL_error(L, "sup.spawn: key [%s]: argv must be the sequence 1..n of the table",
                 lua_tostring(L, -1));
    }
    if (kt != LUA_TSTRING)
      luaL_error(L, "sup.spawn: keys must be strings or argv indices, not %s", luaL_typename(L, -2));
    size_t kn;
    const char *k = lua_tolstring(L, -2, &kn);
    if (strcmp(k, "argv") == 0)
      luaL_error(L, "sup.spawn: argv goes in the array part: sup.spawn{ \"prog\", \"arg\", ... }");
    sb_lit(L, b, ", ");
    sb_str(L, b, k, kn);
    sb_lit(L, b, ": ");
    if (strcmp(k, "env") == 0)
      sb_env(L, b, -1);
    else if (strcmp(k, "stdin") == 0)
      sb_stdin(L, b, -1);
    else
      sb_value(L, b, -1, k, 0);
    lua_pop(L, 1);
  }
  sb_lit(L, b, "}");
  sb_reserve(L, b, 1);
  b->data[b->len] = '\0';
  return b;
}

/* ---- handles ---------------------------------------------------------- */

static lproc *check_proc(lua_State *L, int idx) {
  lproc *lp = luaL_checkudata(L, idx, PROC_MT);
  if (lp->p == NULL) luaL_error(L, "attempt to use a closed sup process");
  return lp;
}

static int stream_arg(lua_State *L, int idx) {
  return luaL_checkoption(L, idx, "stdout", stream_names); /* 0 or 1 */
}

/* Spawns from the spec at index 1. On success pushes the handle and returns
 * 1; on a start failure pushes nil, message, code, part and returns 4; a
 * spec error raises. */
static int do_spawn(lua_State *L) {
  specbuf *b = encode_spec(L);
  /* The handle exists before the child does: if allocating it failed after
   * the spawn, the child would be left without an owner. */
  lproc *lp = lua_newuserdatauv(L, sizeof *lp, 0);
  lp->p = NULL;
  lp->pos[0] = lp->pos[1] = 0;
  luaL_setmetatable(L, PROC_MT);

  char why[SUP_ERRBUF_SIZE];
  int part = SUP_PART_NONE;
  sup_proc *p = NULL;
  int rc = sup_spawn_v2(b->data, &p, why, sizeof why, &part);
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  if (rc < 0) {
    if (part == SUP_PART_SPEC) return luaL_error(L, "sup.spawn: %s", why);
    lua_pushnil(L);
    lua_pushstring(L, why[0] ? why : sup_strerror(rc));
    lua_pushinteger(L, rc);
    lua_pushstring(L, part_name(part));
    return 4;
  }
  lp->p = p;
  return 1;
}

/* The name the result JSON gives a signal (the library's signal_name). */
static void push_signal_name(lua_State *L, int sig) {
  static const struct {
    const char *name;
    int number;
  } names[] = {
      {"HUP", SIGHUP},     {"INT", SIGINT},         {"QUIT", SIGQUIT},   {"ILL", SIGILL},
      {"TRAP", SIGTRAP},   {"ABRT", SIGABRT},       {"BUS", SIGBUS},     {"FPE", SIGFPE},
      {"KILL", SIGKILL},   {"USR1", SIGUSR1},       {"SEGV", SIGSEGV},   {"USR2", SIGUSR2},
      {"PIPE", SIGPIPE},   {"ALRM", SIGALRM},       {"TERM", SIGTERM},   {"STKFLT", SIGSTKFLT},
      {"CHLD", SIGCHLD},   {"CONT", SIGCONT},       {"STOP", SIGSTOP},   {"TSTP", SIGTSTP},
      {"TTIN", SIGTTIN},   {"TTOU", SIGTTOU},       {"URG", SIGURG},     {"XCPU", SIGXCPU},
      {"XFSZ", SIGXFSZ},   {"VTALRM", SIGVTALRM},   {"PROF", SIGPROF},   {"WINCH", SIGWINCH},
      {"IO", SIGIO},       {"PWR", SIGPWR},         {"SYS", SIGSYS},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (names[i].number == sig) {
      lua_pushfstring(L, "SIG%s", names[i].name);
      return;
    }
  }
  if (sig == SIGRTMIN)
    lua_pushliteral(L, "SIGRTMIN");
  else if (sig > SIGRTMIN && sig <= SIGRTMAX)
    lua_pushfstring(L, "SIGRTMIN+%d", sig - SIGRTMIN);
  else
    lua_pushfstring(L, "SIG%d", sig);
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void set_num(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

/* The final result as a table mirroring the result JSON, from the typed
 * accessors; captured holds the exact bytes. */
static void push_result(lua_State *L, sup_proc *p) {
  lua_createtable(L, 0, 14);
  const char *outcome = sup_outcome_name(sup_result_outcome(p));
  lua_pushstring(L, outcome ? outcome : "unknown");
  lua_setfield(L, -2, "outcome");
  int code = sup_result_exit_code(p);
  if (code >= 0) set_int(L, "exit_code", code);
  int sig = sup_result_term_signal(p);
  if (sig > 0) {
    push_signal_name(L, sig);
    lua_setfield(L, -2, "term_signal");
  }
  set_bool(L, "status_lost", sup_result_status_lost(p) == 1);
  set_bool(L, "forced_kill", sup_result_forced_kill(p) == 1);
  set_int(L, "pid", sup_pid(p));
  set_num(L, "duration_ms", sup_result_duration_ms(p));

  for (int s = 0; s < 2; s++) {
    int stream = s == 0 ? SUP_STDOUT : SUP_STDERR;
    lua_createtable(L, 0, 4);
    set_int(L, "bytes", sup_output_total(p, stream));
    size_t len = 0;
    const char *bytes = sup_result_output(p, stream, &len);
    lua_pushlstring(L, bytes ? bytes : "", bytes ? len : 0);
    lua_setfield(L, -2, "captured");
    int64_t omitted = sup_result_omitted_bytes(p, stream);
    if (omitted < 0) omitted = 0;
    set_bool(L, "truncated", omitted > 0);
    set_int(L, "omitted_bytes", omitted);
    lua_setfield(L, -2, stream_names[s]);
  }

  int nsig = sup_result_signals(p, NULL, NULL, 0);
  if (nsig < 0) nsig = 0;
  lua_createtable(L, nsig, 0);
  if (nsig > 0) {
    /* Scratch space from Lua, so that nothing leaks if a push below fails;
     * the doubles first, for their alignment. */
    double *at = lua_newuserdatauv(L, (size_t)nsig * (sizeof(double) + sizeof(int)), 0);
    int *sigs = (int *)(void *)(at + nsig);
    int got = sup_result_signals(p, sigs, at, (size_t)nsig);
    if (got > nsig) got = nsig;
    for (int i = 0; i < got; i++) {
      lua_createtable(L, 0, 2);
      push_signal_name(L, sigs[i]);
      lua_setfield(L, -2, "signal");
      set_num(L, "at_ms", at[i]);
      lua_rawseti(L, -3, i + 1);
    }
    lua_pop(L, 1); /* scratch */
  }
  lua_setfield(L, -2, "signals_sent");

  double user_ms = 0, sys_ms = 0;
  int64_t max_rss_kb = 0;
  sup_result_rusage(p, &user_ms, &sys_ms, &max_rss_kb);
  lua_createtable(L, 0, 3);
  set_num(L, "user_ms", user_ms);
  set_num(L, "sys_ms", sys_ms);
  set_int(L, "max_rss_kb", max_rss_kb);
  lua_setfield(L, -2, "rusage");

  const char *json = sup_result(p);
  if (json != NULL) {
    lua_pushstring(L, json);
    lua_setfield(L, -2, "json");
  }
}

/* ---- module functions ------------------------------------------------- */

static int l_spawn(lua_State *L) {
  lua_settop(L, 1);
  return do_spawn(L);
}

static int l_run(lua_State *L) {
  lua_settop(L, 1);
  int n = do_spawn(L);
  if (n != 1) return n;
  lproc *lp = lua_touserdata(L, -1);
  int rc = sup_poll(lp->p, -1);
  if (rc < 0) {
    sup_proc *p = lp->p;
    lp->p = NULL;
    sup_release(p);
    return push_fail(L, rc);
  }
  push_result(L, lp->p);
  sup_proc *p = lp->p;
  lp->p = NULL;
  sup_release(p);
  return 1;
}

static int l_strerror(lua_State *L) {
  lua_pushstring(L, sup_strerror((int)luaL_checkinteger(L, 1)));
  return 1;
}

static int l_version(lua_State *L) {
  lua_pushinteger(L, sup_version());
  return 1;
}

static int l_signal(lua_State *L) {
  int sig;
  if (lua_type(L, 1) == LUA_TNUMBER) {
    lua_Integer n = luaL_checkinteger(L, 1);
    sig = n > 0 && n <= SIGRTMAX ? (int)n : SUP_EINVAL;
  } else {
    sig = sup_signal_parse(luaL_checkstring(L, 1));
  }
  if (sig < 0) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushinteger(L, sig);
  push_signal_name(L, sig);
  return 2;
}

/* ---- methods ---------------------------------------------------------- */

static int m_close(lua_State *L) {
  lproc *lp = luaL_checkudata(L, 1, PROC_MT);
  sup_proc *p = lp->p;
  lp->p = NULL; /* first: nothing may begin on p once its release has */
  sup_release(p);
  return 0;
}

static int m_closed(lua_State *L) {
  lproc *lp = luaL_checkudata(L, 1, PROC_MT);
  lua_pushboolean(L, lp->p == NULL);
  return 1;
}

static int m_tostring(lua_State *L) {
  lproc *lp = luaL_checkudata(L, 1, PROC_MT);
  if (lp->p == NULL) {
    lua_pushfstring(L, "sup.process (closed): %p", (void *)lp);
    return 1;
  }
  int pid = sup_pid(lp->p);
  if (sup_poll(lp->p, 0) != 1) {
    lua_pushfstring(L, "sup.process (pid %d, running): %p", pid, (void *)lp);
    return 1;
  }
  const char *outcome = sup_outcome_name(sup_result_outcome(lp->p));
  int code = sup_result_exit_code(lp->p);
  if (code >= 0)
    lua_pushfstring(L, "sup.process (pid %d, %s %d): %p", pid, outcome, code, (void *)lp);
  else
    lua_pushfstring(L, "sup.process (pid %d, %s): %p", pid, outcome ? outcome : "final", (void *)lp);
  return 1;
}

/* p:wait([ms]): the result table once final; nil, "timeout" when ms ran out. */
static int m_wait(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int ms = -1;
  if (!lua_isnoneornil(L, 2)) {
    lua_Number t = luaL_checknumber(L, 2);
    luaL_argcheck(L, t >= 0, 2, "timeout must be >= 0 milliseconds");
    ms = t >= (lua_Number)INT_MAX ? -1 : (int)ceil(t);
  }
  int rc = sup_poll(lp->p, ms);
  if (rc < 0) return push_fail(L, rc);
  if (rc == 0) {
    lua_pushnil(L);
    lua_pushliteral(L, "timeout");
    return 2;
  }
  push_result(L, lp->p);
  return 1;
}

static int m_poll(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int rc = sup_poll(lp->p, 0);
  if (rc < 0) return push_fail(L, rc);
  lua_pushboolean(L, rc == 1);
  return 1;
}

/* p:result(): the result table if final, else nil. Never blocks. */
static int m_result(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  if (sup_poll(lp->p, 0) != 1) {
    lua_pushnil(L);
    return 1;
  }
  push_result(L, lp->p);
  return 1;
}

/* true when the request was latched, false when the result was already final. */
static int push_request(lua_State *L, int rc) {
  if (rc < 0) return push_fail(L, rc);
  lua_pushboolean(L, rc == 0);
  return 1;
}

static int m_interrupt(lua_State *L) { return push_request(L, sup_interrupt(check_proc(L, 1)->p)); }

static int m_abort(lua_State *L) { return push_request(L, sup_abort(check_proc(L, 1)->p)); }

static int push_fd(lua_State *L, int rc) {
  if (rc < 0) return push_fail(L, rc);
  lua_pushinteger(L, rc);
  return 1;
}

static int m_fd(lua_State *L) { return push_fd(L, sup_fd(check_proc(L, 1)->p)); }

static int m_output_fd(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int s = stream_arg(L, 2);
  return push_fd(L, sup_output_fd(lp->p, s == 0 ? SUP_STDOUT : SUP_STDERR));
}

static int m_pid(lua_State *L) { return push_fd(L, sup_pid(check_proc(L, 1)->p)); }

/* p:read([stream [, max]]): the bytes of stream since this handle's last read
 * of it, "" when nothing new yet, nil at the end (final and all read). When
 * bytes were dropped (beyond max_output_bytes), the second value counts
 * those skipped. */
static int m_read(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int s = stream_arg(L, 2);
  lua_Integer max = luaL_optinteger(L, 3, LUA_MAXINTEGER);
  luaL_argcheck(L, max > 0, 3, "must be positive");
  int stream = s == 0 ? SUP_STDOUT : SUP_STDERR;
  /* Final is checked before reading, so that bytes landing between the two
   * are never mistaken for the end. */
  int final = sup_poll(lp->p, 0) == 1;
  uint64_t start = lp->pos[s];
  size_t got = 0;
  luaL_Buffer B;
  luaL_buffinit(L, &B);
  while ((lua_Integer)got < max) {
    size_t want = (size_t)(max - (lua_Integer)got);
    if (want > 65536) want = 65536;
    char *dst = luaL_prepbuffsize(&B, want);
    size_t n = 0;
    int rc = sup_output_read(lp->p, stream, &lp->pos[s], dst, want, &n);
    if (rc < 0) return luaL_error(L, "sup: output read: %s", sup_strerror(rc));
    if (n == 0) break;
    luaL_addsize(&B, n);
    got += n;
  }
  if (got == 0 && final) {
    lua_pushnil(L);
    return 1;
  }
  luaL_pushresult(&B);
  lua_pushinteger(L, (lua_Integer)(lp->pos[s] - start - got));
  return 2;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* p:write(data [, ms]) with stdin = "pipe": writes data, waiting for room up
 * to ms (default: forever; 0: never waits). Returns the count written (all
 * of data unless the time ran out), or nil, message, code, count. */
static int m_write(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  size_t len;
  const char *data = luaL_checklstring(L, 2, &len);
  double limit = -1;
  if (!lua_isnoneornil(L, 3)) {
    limit = luaL_checknumber(L, 3);
    luaL_argcheck(L, limit >= 0, 3, "timeout must be >= 0 milliseconds");
  }
  double deadline = limit >= 0 ? now_ms() + limit : 0;
  size_t off = 0;
  while (off < len) {
    size_t w = 0;
    int rc = sup_input_write(lp->p, data + off, len - off, &w);
    if (rc == 0) {
      off += w;
      continue;
    }
    if (rc != SUP_EAGAIN) {
      push_fail(L, rc);
      lua_pushinteger(L, (lua_Integer)off);
      return 4;
    }
    int ms = -1;
    if (limit >= 0) {
      double left = deadline - now_ms();
      if (left <= 0) break;
      ms = left >= (double)INT_MAX ? INT_MAX : (int)ceil(left);
    }
    rc = sup_input_wait(lp->p, ms);
    if (rc < 0) {
      push_fail(L, rc);
      lua_pushinteger(L, (lua_Integer)off);
      return 4;
    }
  }
  lua_pushinteger(L, (lua_Integer)off);
  return 1;
}

static int m_close_stdin(lua_State *L) {
  int rc = sup_input_close(check_proc(L, 1)->p);
  if (rc < 0) return push_fail(L, rc);
  lua_pushboolean(L, 1);
  return 1;
}

static int m_input_fd(lua_State *L) { return push_fd(L, sup_input_fd(check_proc(L, 1)->p)); }

static const luaL_Reg proc_methods[] = {
    {"wait", m_wait},           {"poll", m_poll},         {"result", m_result},
    {"interrupt", m_interrupt}, {"abort", m_abort},       {"fd", m_fd},
    {"output_fd", m_output_fd}, {"pid", m_pid},           {"read", m_read},
    {"write", m_write},         {"close_stdin", m_close_stdin}, {"input_fd", m_input_fd},
    {"close", m_close},         {"closed", m_closed},     {NULL, NULL},
};

static const luaL_Reg proc_meta[] = {
    {"__gc", m_close},
    {"__close", m_close},
    {"__tostring", m_tostring},
    {"__index", NULL},
    {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"spawn", l_spawn},   {"run", l_run},       {"strerror", l_strerror},
    {"version", l_version}, {"signal", l_signal}, {NULL, NULL},
};

LSUP_EXPORT int luaopen_sup(lua_State *L) {
  luaL_checkversion(L);
  luaL_newmetatable(L, PROC_MT);
  luaL_setfuncs(L, proc_meta, 0);
  luaL_newlibtable(L, proc_methods);
  luaL_setfuncs(L, proc_methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);

  luaL_newmetatable(L, SPECBUF_MT);
  lua_pushcfunction(L, specbuf_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);

  luaL_newlib(L, funcs);
  lua_pushfstring(L, "sup %d.%d.%d", SUP_VERSION_MAJOR, SUP_VERSION_MINOR, SUP_VERSION_PATCH);
  lua_setfield(L, -2, "_VERSION");
  return 1;
}
