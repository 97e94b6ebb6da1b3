/*
 * lsup.c: the Lua module "sup", over libsup's C ABI (include/sup.h), for
 * Lua 5.1, LuaJIT 2.1, 5.3 and 5.4 from this one source (lsup_compat.h
 * fills in what 5.1 and LuaJIT lack).
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
 *
 * Blocking calls and the host's Ctrl-C: the library installs no signal
 * handler and its waits retry EINTR, so a host that stops a running script
 * by a signal (lua.c and luajit.c: SIGINT sets a debug hook that raises
 * "interrupted!" at the next Lua instruction) would stay stuck in a C call
 * until the child ended. Every blocking call here therefore waits in slices
 * of WAIT_SLICE_MS and, between slices, calls an empty Lua function: the
 * host's pending hook runs there, in the host's own way, and a signal the
 * host handles otherwise (or ignores) changes nothing. When the hook raises,
 * the call ends the child as p:interrupt() does (interrupt signal, grace,
 * SIGKILL), waits until that is final, and re-raises the host's error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lsup_compat.h"

#include <sup.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__)
#define LSUP_EXPORT __attribute__((visibility("default")))
#else
#define LSUP_EXPORT
#endif

#define PROC_MT "sup.process"
#define RESULT_MT "sup.result"
#define LINES_MT "sup.lines"
#define SPECBUF_MT "sup.specbuf"
#define MAX_DEPTH 32
/* How long a blocking call sleeps before it lets the host's hooks run. */
#define WAIT_SLICE_MS 100
/* How much p:lines() reads at a time. */
#define LINES_CHUNK ((size_t)65536)
/* How much p:read takes in one read: a pipe's whole buffer, so that with
 * backpressure_bytes set each wake-up is one read(2) from the pipe. */
#define READ_CHUNK ((size_t)65536)

typedef struct {
  sup_proc *p;       /* NULL once closed */
  uint64_t pos[2];   /* read positions of stdout and stderr, for p:read */
  int stdin_closed;  /* p:close_stdin() was called */
  int *dups;         /* descriptors from p:fd(true), p:output_fd(s, true) */
  const char *routed[2]; /* each stream's routing, as the result's "routed" */
  size_t ndups, capdups;
  char *scratch;     /* READ_CHUNK bytes for p:read, made at its first call */
  int drained[2];    /* p:read's last read of the stream emptied it: wait first */
} lproc;

static const char *const stream_names[] = {"stdout", "stderr", NULL};

/* Registry keys (their addresses). */
static char key_noop;    /* the empty Lua function the waits call */
static char key_owners;  /* weak keys: result table -> its handle */
static char key_results; /* weak values: handle -> its result table */

static void push_registry(lua_State *L, const char *key) {
  lua_pushlightuserdata(L, (void *)key);
  lua_rawget(L, LUA_REGISTRYINDEX);
}

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
  const char *route[2]; /* "stdout" and "stderr" of the spec, when known names */
  int pty;              /* the spec asks for a pty */
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
  if (lsupc_isinteger(L, idx)) {
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
  lua_Integer n = (lua_Integer)lsupc_rawlen(L, idx), count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (!lsupc_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n) {
      lua_pop(L, 1);
      return 0;
    }
    count++;
  }
  return count == n;
}

/* Any other Lua value, for the library to judge. */
static void sb_value(lua_State *L, specbuf *b, int idx, const char *where, int depth) {
  idx = lsupc_absindex(L, idx);
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
  if (is_sequence(L, idx) && lsupc_rawlen(L, idx) > 0) {
    lua_Integer n = (lua_Integer)lsupc_rawlen(L, idx);
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
  idx = lsupc_absindex(L, idx);
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
  idx = lsupc_absindex(L, idx);
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

/* The routing names the library knows, as static strings. */
static const char *route_name(const char *v) {
  static const char *const names[] = {"pipe", "tee", "inherit", "null", "stdout", NULL};
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp(v, names[i]) == 0) return names[i];
  return NULL;
}

/* pty = true | { rows = R, cols = C } | { R, C } (rows first, as stty size
 * prints them). */
static void sb_pty(lua_State *L, specbuf *b, int idx) {
  idx = lsupc_absindex(L, idx);
  if (lua_istable(L, idx) && lsupc_rawlen(L, idx) == 2 && is_sequence(L, idx)) {
    sb_lit(L, b, "{\"rows\": ");
    lua_rawgeti(L, idx, 1);
    sb_value(L, b, -1, "pty", 1);
    lua_pop(L, 1);
    sb_lit(L, b, ", \"cols\": ");
    lua_rawgeti(L, idx, 2);
    sb_value(L, b, -1, "pty", 1);
    lua_pop(L, 1);
    sb_lit(L, b, "}");
    return;
  }
  sb_value(L, b, idx, "pty", 0);
}

/* Encodes the spec table at index 1 into a specbuf pushed on the stack. */
static specbuf *encode_spec(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  specbuf *b = lsupc_newuserdata(L, sizeof *b);
  memset(b, 0, sizeof *b);
  lsupc_setmetatable(L, SPECBUF_MT);

  lua_Integer n = (lua_Integer)lsupc_rawlen(L, 1);
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
      if (lsupc_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= n) {
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
    else if (strcmp(k, "pty") == 0)
      sb_pty(L, b, -1);
    else
      sb_value(L, b, -1, k, 0);
    if ((strcmp(k, "stdout") == 0 || strcmp(k, "stderr") == 0) && lua_type(L, -1) == LUA_TSTRING)
      b->route[k[3] == 'o' ? 0 : 1] = route_name(lua_tostring(L, -1));
    if (strcmp(k, "pty") == 0 && lua_toboolean(L, -1)) b->pty = 1;
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

static int stream_of(int s) { return s == 0 ? SUP_STDOUT : SUP_STDERR; }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A timeout argument in milliseconds: nil gives `dflt`, math.huge (or
 * anything beyond INT_MAX ms) means forever (-1). */
static double timeout_arg(lua_State *L, int idx, double dflt) {
  if (lua_isnoneornil(L, idx)) return dflt;
  lua_Number t = luaL_checknumber(L, idx);
  luaL_argcheck(L, t >= 0, idx, "timeout must be >= 0 milliseconds");
  return t >= (lua_Number)INT_MAX ? -1 : (double)t;
}

/* Releases the handle and the duplicates it handed out. */
static void close_proc(lproc *lp) {
  sup_proc *p = lp->p;
  lp->p = NULL; /* first: nothing may begin on p once its release has */
  for (size_t i = 0; i < lp->ndups; i++) close(lp->dups[i]);
  free(lp->dups);
  lp->dups = NULL;
  lp->ndups = lp->capdups = 0;
  free(lp->scratch);
  lp->scratch = NULL;
  sup_release(p);
}

/* ---- waiting, and the host's Ctrl-C ------------------------------------ */

typedef struct {
  lua_State *main;    /* the main thread when the wait runs on another, else NULL */
  lua_Hook main_hook; /* its hook when the wait began */
} waitctx;

static void wait_begin(lua_State *L, waitctx *w) {
  lsupc_note_thread(L);
  w->main = lsupc_mainthread(L);
  if (w->main == L) w->main = NULL;
  w->main_hook = w->main != NULL ? lua_gethook(w->main) : NULL;
}

/* Lets the host's pending hook run (see the top of this file). Returns 1,
 * with the error value on the stack, when it raised. lua.c sets its SIGINT
 * hook on the main thread only (LuaJIT's hooks are global): a wait inside a
 * coroutine runs a hook that appeared on the main thread while it waited on
 * its own thread, once. */
static int host_stops(lua_State *L, waitctx *w) {
  luaL_checkstack(L, 2, "sup: wait");
  push_registry(L, &key_noop);
  if (lua_pcall(L, 0, 0, 0) != 0) return 1;
  if (w->main == NULL) return 0;
  lua_Hook hook = lua_gethook(w->main);
  lua_Hook own = lua_gethook(L);
  if (hook == NULL || hook == w->main_hook || hook == own) return 0;
  w->main_hook = hook;
  int mask = lua_gethookmask(L), count = lua_gethookcount(L);
  lua_sethook(L, hook, lua_gethookmask(w->main), lua_gethookcount(w->main));
  push_registry(L, &key_noop);
  int rc = lua_pcall(L, 0, 0, 0);
  lua_sethook(L, own, mask, count);
  return rc != 0;
}

/* The host stopped a blocking call: the child ends as p:interrupt() ends it
 * (interrupt signal, grace, SIGKILL), the call waits for that, then raises
 * the host's error (on the stack). With `release`, the handle is released
 * first (sup.run's own handle). */
static int stop_child(lua_State *L, lproc *lp, int release) {
  if (sup_interrupt(lp->p) >= 0) {
    while (sup_poll(lp->p, -1) == 0) {
    }
  }
  if (release) close_proc(lp);
  return lua_error(L);
}

/* One slice of a wait: 1 ready, 0 not yet, < 0 an error code. */
typedef int (*wait_fn)(lproc *lp, int s, int ms);

static int wait_final(lproc *lp, int s, int ms) {
  (void)s;
  return sup_poll(lp->p, ms);
}

/* Waits on the stream's sup_output_fd rather than in sup_output_wait: with
 * backpressure_bytes set that descriptor holds the pipe itself, and the
 * next sup_output_read takes the bytes straight from it, whereas
 * sup_output_wait would hand the pipe back to the library's thread (a
 * second thread and a second copy for every write of the child). A signal
 * (the host's Ctrl-C) ends the slice early, so its hook runs sooner. */
static int wait_output(lproc *lp, int s, int ms) {
  int fd = sup_output_fd(lp->p, stream_of(s));
  if (fd < 0) /* no descriptor to spare (SUP_EMFILE, SUP_ENOMEM): the library waits */
    return sup_output_wait(lp->p, s == 0 ? lp->pos[0] : SUP_POS_IGNORE, s == 1 ? lp->pos[1] : SUP_POS_IGNORE,
                           ms);
  struct pollfd pfd = {fd, POLLIN, 0};
  int rc = poll(&pfd, 1, ms);
  if (rc < 0) return errno == EINTR ? 0 : -errno;
  return rc > 0;
}

static int wait_input(lproc *lp, int s, int ms) {
  (void)s;
  return sup_input_wait(lp->p, ms);
}

/* Waits up to timeout_ms (-1: forever) for fn's condition, in slices, giving
 * the host's hooks a chance between them. Returns 1 ready, 0 time ran out,
 * < 0 an error code; raises (after ending the child) when the host stops. */
static int wait_until(lua_State *L, lproc *lp, wait_fn fn, int s, double timeout_ms, int release) {
  if (timeout_ms == 0) return fn(lp, s, 0);
  waitctx w;
  wait_begin(L, &w);
  double deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
  for (;;) {
    if (host_stops(L, &w)) return stop_child(L, lp, release);
    int slice = WAIT_SLICE_MS;
    if (timeout_ms > 0) {
      double left = deadline - now_ms();
      if (left <= 0) return fn(lp, s, 0);
      if (left < slice) slice = (int)ceil(left);
    }
    int rc = fn(lp, s, slice);
    if (rc != 0) return rc;
  }
}

/* ---- spawning --------------------------------------------------------- */

/* Spawns from the spec at index 1. On success pushes the handle and returns
 * 1; on a start failure pushes nil, message, code, part and returns 4; a
 * spec error raises. */
static int do_spawn(lua_State *L) {
  specbuf *b = encode_spec(L);
  /* The handle exists before the child does: if allocating it failed after
   * the spawn, the child would be left without an owner. */
  lproc *lp = lsupc_newuserdata(L, sizeof *lp);
  memset(lp, 0, sizeof *lp);
  lsupc_setmetatable(L, PROC_MT);

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
  for (int s = 0; s < 2; s++) lp->routed[s] = b->pty ? "pty" : b->route[s] ? b->route[s] : "pipe";
  return 1;
}

/* The name the result JSON gives a signal (bash's `kill -l` names). */
static void push_signal_name(lua_State *L, int sig) {
  const char *name = sup_signal_name(sig);
  if (name != NULL)
    lua_pushstring(L, name);
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
static void build_result(lua_State *L, lproc *lp) {
  sup_proc *p = lp->p;
  lua_createtable(L, 0, 16);
  const char *outcome = sup_outcome_name(sup_result_outcome(p));
  lua_pushstring(L, outcome ? outcome : "unknown");
  lua_setfield(L, -2, "outcome");
  int phase = sup_result_phase(p);
  if (phase == SUP_PHASE_FIRST_OUTPUT || phase == SUP_PHASE_IDLE) {
    lua_pushstring(L, phase == SUP_PHASE_IDLE ? "idle" : "first_output");
    lua_setfield(L, -2, "phase");
  }
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
    int stream = stream_of(s);
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
    lua_pushstring(L, lp->routed[s]);
    lua_setfield(L, -2, "routed");
    lua_setfield(L, -2, stream_names[s]);
  }

  int nsig = sup_result_signals(p, NULL, NULL, 0);
  if (nsig < 0) nsig = 0;
  lua_createtable(L, nsig, 0);
  if (nsig > 0) {
    /* Scratch space from Lua, so that nothing leaks if a push below fails;
     * the doubles first, for their alignment. */
    double *at = lsupc_newuserdata(L, (size_t)nsig * (sizeof(double) + sizeof(int)));
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

  int contained = sup_result_contained(p);
  if (contained == SUP_CONTAIN_CGROUP || contained == SUP_CONTAIN_GROUP) {
    lua_pushstring(L, contained == SUP_CONTAIN_CGROUP ? "cgroup" : "group");
    lua_setfield(L, -2, "contained");
  }
  lua_pushstring(L, sup_result_host_death(p) == SUP_HOST_DEATH_TREE ? "tree" : "main_process");
  lua_setfield(L, -2, "host_death");
  int64_t leftovers = sup_result_leftovers_ended(p);
  if (leftovers >= 0) set_int(L, "leftovers_ended", leftovers);
  double tree_user = 0, tree_sys = 0;
  if (sup_result_tree_cpu(p, &tree_user, &tree_sys) == 0) {
    lua_createtable(L, 0, 2);
    set_num(L, "user_ms", tree_user);
    set_num(L, "sys_ms", tree_sys);
    lua_setfield(L, -2, "tree_cpu");
  }

  double user_ms = 0, sys_ms = 0;
  int64_t max_rss_kb = 0;
  sup_result_rusage(p, &user_ms, &sys_ms, &max_rss_kb);
  lua_createtable(L, 0, 3);
  set_num(L, "user_ms", user_ms);
  set_num(L, "sys_ms", sys_ms);
  set_int(L, "max_rss_kb", max_rss_kb);
  lua_setfield(L, -2, "rusage");
}

/* Pushes the result table of the final handle at index ud: one table per
 * handle, built at the first call (a weak cache: rebuilt only if the
 * program dropped it). The table keeps its handle alive for `json`. */
static void push_result(lua_State *L, int ud) {
  lproc *lp = lua_touserdata(L, ud);
  push_registry(L, &key_results);
  lua_pushvalue(L, ud);
  lua_rawget(L, -2);
  if (lua_istable(L, -1)) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  build_result(L, lp);
  lsupc_setmetatable(L, RESULT_MT);
  lua_pushvalue(L, ud);
  lua_pushvalue(L, -2);
  lua_rawset(L, -4); /* results[handle] = res */
  lua_remove(L, -2);
  push_registry(L, &key_owners);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, ud);
  lua_rawset(L, -3); /* owners[res] = handle */
  lua_pop(L, 1);
}

/* Appends the UTF-8 of code point cp. */
static void add_utf8(luaL_Buffer *B, unsigned long cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    u[0] = (char)(0xF0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  luaL_addlstring(B, u, n);
}

static unsigned long hex4(const char *s) {
  unsigned long v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned long)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned long)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned long)(c - 'A' + 10);
    else return 0xFFFFFFFFul;
  }
  return v;
}

/* Pushes the string value of the result JSON's top-level key, or nil when
 * it is null or absent. Only a real key matches `"key": `: inside a JSON
 * string every '"' is escaped, so captured text cannot. */
static void push_json_string(lua_State *L, const char *json, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  const char *at = strstr(json, pat);
  if (at == NULL) {
    lua_pushnil(L);
    return;
  }
  const char *s = at + strlen(pat);
  luaL_Buffer B;
  luaL_buffinit(L, &B);
  while (*s != '\0' && *s != '"') {
    if (*s != '\\') {
      luaL_addchar(&B, *s++);
      continue;
    }
    s++;
    switch (*s) {
      case 'n': luaL_addchar(&B, '\n'); break;
      case 't': luaL_addchar(&B, '\t'); break;
      case 'r': luaL_addchar(&B, '\r'); break;
      case 'b': luaL_addchar(&B, '\b'); break;
      case 'f': luaL_addchar(&B, '\f'); break;
      case 'u': {
        unsigned long cp = hex4(s + 1);
        if (cp == 0xFFFFFFFFul) break;
        s += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && s[1] == '\\' && s[2] == 'u') {
          unsigned long lo = hex4(s + 3);
          if (lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            s += 6;
          }
        }
        add_utf8(&B, cp);
        break;
      }
      case '\0': s--; break;
      default: luaL_addchar(&B, *s); break; /* \" \\ \/ */
    }
    s++;
  }
  luaL_pushresult(&B);
}

/* res.json: the library's result JSON, built at the first access (it can be
 * large: captured output escaped as text) and kept in the table. */
static int result_index(lua_State *L) {
  static const char *const lazy[] = {"json", "contain_fallback", "cgroup_left", NULL};
  if (lua_type(L, 2) != LUA_TSTRING) {
    lua_pushnil(L);
    return 1;
  }
  const char *k = lua_tostring(L, 2);
  int which = 0;
  while (lazy[which] != NULL && strcmp(lazy[which], k) != 0) which++;
  if (lazy[which] == NULL) {
    lua_pushnil(L);
    return 1;
  }
  push_registry(L, &key_owners);
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  lproc *lp = lsupc_testudata(L, -1, PROC_MT);
  if (lp == NULL || lp->p == NULL)
    return luaL_error(L, "sup: res.%s: the process handle was closed before it was read", k);
  const char *json = sup_result(lp->p);
  if (json == NULL) return luaL_error(L, "sup: res.%s: out of memory", k);
  if (which == 0) {
    lua_pushstring(L, json);
  } else {
    /* Rare keys without a typed accessor: taken from the JSON text. */
    push_json_string(L, json, k);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, 1, k); /* rawset: the metatable has no __newindex */
  return 1;
}

/* ---- module functions ------------------------------------------------- */

static int l_spawn(lua_State *L) {
  lua_settop(L, 1);
  return do_spawn(L);
}

/* The os.execute convention: true|nil, "exit"|"signal", number. */
static int push_status(lua_State *L, sup_proc *p) {
  int code = sup_result_exit_code(p);
  int sig = sup_result_term_signal(p);
  if (code >= 0) {
    if (code == 0)
      lua_pushboolean(L, 1);
    else
      lua_pushnil(L);
    lua_pushliteral(L, "exit");
    lua_pushinteger(L, code);
  } else if (sig > 0) {
    lua_pushnil(L);
    lua_pushliteral(L, "signal");
    lua_pushinteger(L, sig);
  } else { /* status_lost: the host reaped the child itself */
    lua_pushnil(L);
    lua_pushliteral(L, "lost");
    lua_pushnil(L);
  }
  return 3;
}

/* sup.run(spec [, "result" | "status"]) */
static int l_run(lua_State *L) {
  static const char *const modes[] = {"result", "status", NULL};
  lua_settop(L, 2);
  int status = luaL_checkoption(L, 2, "result", modes) == 1;
  lua_settop(L, 1);
  int n = do_spawn(L);
  if (n != 1) return n;
  int ud = lua_gettop(L);
  lproc *lp = lua_touserdata(L, ud);
  int rc = wait_until(L, lp, wait_final, 0, -1, 1);
  if (rc < 0) {
    close_proc(lp);
    return push_fail(L, rc);
  }
  push_result(L, ud);
  if (!status) return 1;
  push_status(L, lp->p);
  lua_pushvalue(L, -4);
  return 4;
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
    sig = n > 0 && n <= 64 && sup_signal_name((int)n) != NULL ? (int)n : SUP_EINVAL;
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
  close_proc(lp);
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
  double ms = timeout_arg(L, 2, -1);
  lua_settop(L, 1);
  int rc = wait_until(L, lp, wait_final, 0, ms, 0);
  if (rc < 0) return push_fail(L, rc);
  if (rc == 0) {
    lua_pushnil(L);
    lua_pushliteral(L, "timeout");
    return 2;
  }
  push_result(L, 1);
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
  lua_settop(L, 1);
  if (sup_poll(lp->p, 0) != 1) {
    lua_pushnil(L);
    return 1;
  }
  push_result(L, 1);
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

/* A signal argument: a name as sup.signal takes it ("TERM", "SIGusr1",
 * "RTMIN+3") or a number 0..64; `dflt` when absent. */
static int signal_arg(lua_State *L, int idx, const char *dflt) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_Integer n = luaL_checkinteger(L, idx);
    luaL_argcheck(L, n >= 0 && n <= 64, idx, "a signal number is 0..64");
    return (int)n;
  }
  const char *name = luaL_optstring(L, idx, dflt);
  int sig = sup_signal_parse(name);
  if (sig < 0) luaL_argerror(L, idx, lua_pushfstring(L, "no signal named %s", name));
  return sig;
}

/* p:kill([sig]): sends sig (default "TERM"; 0 sends nothing, a liveness
 * probe) to the child's process group, as kill(2) would, without changing
 * the outcome or starting the escalation (p:interrupt() does that). true
 * when sent, false once the result is final. */
static int m_kill(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int rc = sup_signal(lp->p, signal_arg(L, 2, "TERM"));
  if (rc == SUP_ESRCH) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (rc < 0) return push_fail(L, rc);
  lua_pushboolean(L, 1);
  return 1;
}

/* p:resize(rows, cols): the pty's window size; the child gets SIGWINCH.
 * true, or false once the result is final. Raises for a child without a
 * pty. */
static int m_resize(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  lua_Integer rows = luaL_checkinteger(L, 2), cols = luaL_checkinteger(L, 3);
  luaL_argcheck(L, rows >= 1 && rows <= 65535, 2, "rows must be 1..65535");
  luaL_argcheck(L, cols >= 1 && cols <= 65535, 3, "cols must be 1..65535");
  int rc = sup_pty_resize(lp->p, (int)rows, (int)cols);
  if (rc == SUP_ENOTSUP) return luaL_error(L, "sup: p:resize: the child has no pty (spawn with pty = true)");
  if (rc == SUP_ESRCH) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (rc < 0) return push_fail(L, rc);
  lua_pushboolean(L, 1);
  return 1;
}

/* The descriptor rc, or with `dup` a duplicate of it that the handle owns
 * too (closed by p:close()), so that two watchers of one loop (epoll refuses
 * the same descriptor twice) can each have their own. */
static int push_fd(lua_State *L, lproc *lp, int rc, int dup) {
  if (rc < 0) return push_fail(L, rc);
  if (dup) {
    if (lp->ndups == lp->capdups) {
      size_t cap = lp->capdups ? lp->capdups * 2 : 4;
      int *dups = realloc(lp->dups, cap * sizeof *dups);
      if (dups == NULL) return push_fail(L, SUP_ENOMEM);
      lp->dups = dups;
      lp->capdups = cap;
    }
    int fd = fcntl(rc, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return push_fail(L, -errno);
    lp->dups[lp->ndups++] = fd;
    rc = fd;
  }
  lua_pushinteger(L, rc);
  return 1;
}

static int m_fd(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  return push_fd(L, lp, sup_fd(lp->p), lua_toboolean(L, 2));
}

static int m_output_fd(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int s = stream_arg(L, 2);
  return push_fd(L, lp, sup_output_fd(lp->p, stream_of(s)), lua_toboolean(L, 3));
}

static int m_pid(lua_State *L) {
  int pid = sup_pid(check_proc(L, 1)->p);
  if (pid < 0) return push_fail(L, pid);
  lua_pushinteger(L, pid);
  return 1;
}

/* Copies up to cap bytes of stream s from the handle's position into dst.
 * Bytes from both sides of a gap (output dropped beyond max_output_bytes)
 * never come in one read: with bytes already in hand (`have`, or read by
 * this call) a read stops where the gap begins, and the next read reports
 * it. *skipped gets the bytes lost just before the bytes copied. Returns
 * the count (< cap: nothing more now, or a gap), or an error code. */
static int64_t read_some(lproc *lp, int s, char *dst, size_t cap, int have, uint64_t *skipped) {
  size_t got = 0;
  *skipped = 0;
  while (got < cap) {
    uint64_t before = lp->pos[s];
    size_t n = 0;
    int rc = sup_output_read(lp->p, stream_of(s), &lp->pos[s], dst + got, cap - got, &n);
    if (rc < 0) return rc;
    uint64_t jump = lp->pos[s] - before - n;
    if (jump > 0) {
      if (have || got > 0) {
        lp->pos[s] = before; /* the gap and what follows it: next time */
        break;
      }
      *skipped = jump;
    }
    if (n == 0) break;
    got += n;
    /* Short: nothing more now. Asking again would cost a read(2) of an
     * empty pipe on every wake-up. */
    if (n < cap - (got - n)) break;
  }
  return (int64_t)got;
}

/* p:read([stream [, max [, timeout_ms]]]): the bytes of stream since this
 * handle's last read of it, at most max; nil at the end (final and all
 * read). Waits up to timeout_ms (default 0: never; math.huge: until bytes
 * come or the stream ends) and gives "" when none came. The second value
 * counts the bytes lost just before this chunk (dropped beyond
 * max_output_bytes); a chunk never spans such a gap.
 *
 * It reads first and waits only when nothing came, or when its last read
 * emptied the stream: a reader that falls behind the child goes from one
 * read(2) of the pipe to the next without polling, and one that keeps up
 * makes one poll(2) on sup_output_fd (wait_output) and one read(2) per
 * wake-up. */
static int m_read(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int s = stream_arg(L, 2);
  lua_Integer max = luaL_optinteger(L, 3, LSUPC_MAXINTEGER);
  luaL_argcheck(L, max > 0, 3, "must be positive");
  double timeout = timeout_arg(L, 4, 0);
  lua_settop(L, 1);
  if (lp->scratch == NULL && (lp->scratch = malloc(READ_CHUNK)) == NULL) return push_fail(L, SUP_ENOMEM);
  size_t first = (lua_Integer)READ_CHUNK < max ? READ_CHUNK : (size_t)max;
  double deadline = timeout > 0 ? now_ms() + timeout : 0;
  int final;
  int64_t n;
  uint64_t skipped;
  /* After a read that emptied the stream, a read now would most likely
   * find the pipe empty: wait first (the wait returns at once when bytes
   * came meanwhile). */
  int wait_first = lp->drained[s];
  for (;;) {
    if (wait_first && timeout != 0) {
      double left = timeout;
      if (timeout > 0 && (left = deadline - now_ms()) <= 0) left = 0;
      int rc = left == 0 ? 0 : wait_until(L, lp, wait_output, s, left, 0);
      if (rc < 0) return push_fail(L, rc);
      if (rc == 0) timeout = 0; /* time is up: one more read, then "" */
    }
    /* Final is checked before reading, so that bytes landing between the
     * two are never mistaken for the end. */
    final = sup_poll(lp->p, 0) == 1;
    n = read_some(lp, s, lp->scratch, first, 0, &skipped);
    if (n < 0) return luaL_error(L, "sup: output read: %s", sup_strerror((int)n));
    lp->drained[s] = (size_t)n < first;
    if (n > 0 || skipped > 0 || final || timeout == 0) break;
    /* Nothing yet, or woken without bytes (the pipe's end of file, which
     * goes back to the library before the result is final): wait, in what
     * is left of the time. */
    wait_first = 1;
  }
  if (n == 0 && skipped == 0 && final) {
    lua_pushnil(L);
    return 1;
  }
  /* The scratch bytes become a Lua string before anything else may
   * allocate (and so run a finalizer that could read this handle). */
  if ((size_t)n < first || (lua_Integer)n == max) {
    lua_pushlstring(L, lp->scratch, (size_t)n);
  } else {
    luaL_Buffer B;
    luaL_buffinit(L, &B);
    lua_pushlstring(L, lp->scratch, (size_t)n);
    luaL_addvalue(&B);
    size_t got = (size_t)n;
    while ((lua_Integer)got < max) {
      size_t want = (size_t)(max - (lua_Integer)got);
      if (want > LSUPC_CHUNK) want = LSUPC_CHUNK;
      char *dst = lsupc_prepbuffsize(&B, want);
      uint64_t lost = 0;
      int64_t more = read_some(lp, s, dst, want, 1, &lost);
      if (more < 0) return luaL_error(L, "sup: output read: %s", sup_strerror((int)more));
      luaL_addsize(&B, (size_t)more);
      got += (size_t)more;
      if ((size_t)more < want) break;
    }
    luaL_pushresult(&B);
  }
  lua_pushinteger(L, (lua_Integer)skipped);
  return 2;
}

/* The state of one p:lines() iterator: bytes read ahead of the lines given
 * out so far. */
typedef struct {
  char *data;
  size_t off, len, cap;
  uint64_t lost; /* bytes lost just before the next line */
  int ended;
} linebuf;

static int linebuf_gc(lua_State *L) {
  linebuf *b = luaL_checkudata(L, 1, LINES_MT);
  free(b->data);
  b->data = NULL;
  b->off = b->len = b->cap = 0;
  return 0;
}

static int push_line(lua_State *L, linebuf *b, size_t end, size_t next) {
  lua_pushlstring(L, b->data + b->off, end - b->off);
  lua_pushinteger(L, (lua_Integer)b->lost);
  b->lost = 0;
  b->off = next;
  return 2;
}

/* The iterator of p:lines(): upvalues handle, linebuf, stream. */
static int lines_next(lua_State *L) {
  lproc *lp = lua_touserdata(L, lua_upvalueindex(1));
  if (lp->p == NULL) return luaL_error(L, "attempt to use a closed sup process");
  linebuf *b = lua_touserdata(L, lua_upvalueindex(2));
  int s = (int)lua_tointeger(L, lua_upvalueindex(3));
  for (;;) {
    char *nl = b->off < b->len ? memchr(b->data + b->off, '\n', b->len - b->off) : NULL;
    if (nl != NULL) return push_line(L, b, (size_t)(nl - b->data), (size_t)(nl - b->data) + 1);
    if (b->ended) {
      /* The last line without its newline; a loss at the very end comes as
       * an empty line, so that it is never silent. */
      if (b->len > b->off || b->lost > 0) return push_line(L, b, b->len, b->len);
      lua_pushnil(L);
      return 1;
    }
    if (b->off > 0) { /* keep only the partial line */
      memmove(b->data, b->data + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
    if (b->cap - b->len < LINES_CHUNK) {
      if (b->len > SIZE_MAX / 2 - LINES_CHUNK) return luaL_error(L, "sup: lines: line too long");
      size_t cap = b->cap ? b->cap : LINES_CHUNK;
      while (cap - b->len < LINES_CHUNK) cap *= 2;
      char *data = realloc(b->data, cap);
      if (data == NULL) return luaL_error(L, "sup: lines: out of memory");
      b->data = data;
      b->cap = cap;
    }
    int final = sup_poll(lp->p, 0) == 1;
    uint64_t lost = 0;
    int64_t n = read_some(lp, s, b->data + b->len, LINES_CHUNK, 0, &lost);
    if (n < 0) return luaL_error(L, "sup: output read: %s", sup_strerror((int)n));
    size_t split = b->len;
    b->len += (size_t)n;
    if (lost > 0) {
      /* A gap ends the line it falls in: the part before it is a line of
       * its own, and the next line carries the count. */
      if (split > b->off) {
        int pushed = push_line(L, b, split, split);
        b->lost = lost;
        return pushed;
      }
      b->lost += lost;
    }
    if (n > 0 || lost > 0) continue;
    if (final) {
      b->ended = 1;
      continue;
    }
    int rc = wait_until(L, lp, wait_output, s, -1, 0);
    if (rc < 0) return luaL_error(L, "sup: lines: %s", sup_strerror(rc));
  }
}

/* p:lines([stream]): for line, lost in p:lines("stdout") do ... end: each
 * line without its "\n", waiting for output as it comes, until the stream
 * ends; `lost` counts the bytes dropped just before the line. */
static int m_lines(lua_State *L) {
  check_proc(L, 1);
  int s = stream_arg(L, 2);
  lua_settop(L, 1);
  linebuf *b = lsupc_newuserdata(L, sizeof *b);
  memset(b, 0, sizeof *b);
  lsupc_setmetatable(L, LINES_MT);
  lua_pushinteger(L, s);
  lua_pushcclosure(L, lines_next, 3);
  return 1;
}

/* Raises for a stdin that is not (or no longer) a pipe: programmer misuse. */
static void check_stdin(lua_State *L, lproc *lp, int rc, const char *what) {
  if (rc != SUP_EBADF) return;
  if (lp->stdin_closed) luaL_error(L, "sup: %s: stdin was closed by p:close_stdin()", what);
  luaL_error(L, "sup: %s: stdin is not a pipe (spawn with stdin = \"pipe\")", what);
}

/* p:write(data [, ms]) with stdin = "pipe": writes data, waiting for room up
 * to ms (default: forever; 0: never waits). Returns the count written (all
 * of data unless the time ran out), or nil, message, code, count. */
static int m_write(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  size_t len;
  const char *data = luaL_checklstring(L, 2, &len);
  double limit = timeout_arg(L, 3, -1);
  check_stdin(L, lp, sup_input_fd(lp->p), "p:write");
  lua_settop(L, 2);
  double deadline = limit > 0 ? now_ms() + limit : 0;
  size_t off = 0;
  while (off < len) {
    size_t w = 0;
    int rc = sup_input_write(lp->p, data + off, len - off, &w);
    if (rc == 0) {
      off += w;
      continue;
    }
    if (rc == SUP_EAGAIN) {
      double left = limit;
      if (limit > 0) {
        left = deadline - now_ms();
        if (left <= 0) break;
      }
      if (limit == 0) break;
      rc = wait_until(L, lp, wait_input, 0, left, 0);
      if (rc >= 0) continue;
    }
    check_stdin(L, lp, rc, "p:write");
    push_fail(L, rc);
    lua_pushinteger(L, (lua_Integer)off);
    return 4;
  }
  lua_pushinteger(L, (lua_Integer)off);
  return 1;
}

/* p:close_stdin(): EOF for the child; true (again true if already closed). */
static int m_close_stdin(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  if (!lp->stdin_closed) {
    int rc = sup_input_close(lp->p);
    check_stdin(L, lp, rc, "p:close_stdin");
    if (rc < 0) return push_fail(L, rc);
    lp->stdin_closed = 1;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int m_input_fd(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  int rc = sup_input_fd(lp->p);
  check_stdin(L, lp, rc, "p:input_fd");
  return push_fd(L, lp, rc, 0);
}

static const luaL_Reg proc_methods[] = {
    {"wait", m_wait},
    {"poll", m_poll},
    {"result", m_result},
    {"interrupt", m_interrupt},
    {"abort", m_abort},
    {"kill", m_kill},
    {"resize", m_resize},
    {"fd", m_fd},
    {"output_fd", m_output_fd},
    {"pid", m_pid},
    {"read", m_read},
    {"lines", m_lines},
    {"write", m_write},
    {"close_stdin", m_close_stdin},
    {"input_fd", m_input_fd},
    {"close", m_close},
    {"closed", m_closed},
    {NULL, NULL},
};

static const luaL_Reg proc_meta[] = {
    {"__gc", m_close},
    {"__close", m_close},
    {"__tostring", m_tostring},
    {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"spawn", l_spawn},     {"run", l_run},       {"strerror", l_strerror},
    {"version", l_version}, {"signal", l_signal}, {NULL, NULL},
};

/* A table with weak keys or values, stored in the registry under key. */
static void new_weak_table(lua_State *L, const char *key, const char *mode) {
  lua_pushlightuserdata(L, (void *)key);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushstring(L, mode);
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

LSUP_EXPORT int luaopen_sup(lua_State *L) {
  lsupc_checkversion(L);
  lsupc_note_thread(L);
  luaL_newmetatable(L, PROC_MT);
  lsupc_setfuncs(L, proc_meta, 0);
  lsupc_newlib(L, proc_methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);

  luaL_newmetatable(L, RESULT_MT);
  lua_pushcfunction(L, result_index);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);

  luaL_newmetatable(L, LINES_MT);
  lua_pushcfunction(L, linebuf_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);

  luaL_newmetatable(L, SPECBUF_MT);
  lua_pushcfunction(L, specbuf_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);

  /* A handle's result stays while the program holds it (and holds the
   * handle, for json); a handle is collected once neither is held. */
  new_weak_table(L, &key_owners, "k");
  new_weak_table(L, &key_results, "v");

  lua_pushlightuserdata(L, (void *)&key_noop);
  if (luaL_loadbuffer(L, "", 0, "=(sup wait)") != 0) return lua_error(L);
  lua_rawset(L, LUA_REGISTRYINDEX);

  lsupc_newlib(L, funcs);
  lua_pushfstring(L, "sup %d.%d.%d", SUP_VERSION_MAJOR, SUP_VERSION_MINOR, SUP_VERSION_PATCH);
  lua_setfield(L, -2, "_VERSION");
  return 1;
}
