/* lsup.h: what the parts of the Lua module share: the handle's type, names, registry keys and small helpers. */

/*
 * The module is one translation unit, as luv's is: lsup.c includes this
 * header and then each part (lsup_*.c), so that every function stays static
 * and no internal name leaves sup.so. A part reaches a function defined in
 * a part included after it through a declaration here.
 */
#ifndef LSUP_H
#define LSUP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lsup_compat.h"

#include <sup.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
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

/* A process handle: the userdata behind p (lsup_process.c). */
typedef struct {
  sup_proc *p;       /* NULL once closed */
  uint64_t pos[2];   /* read positions of stdout and stderr, for p:read */
  int stdin_closed;  /* p:close_stdin() was called */
  int *dups;         /* descriptors from p:fd(true), p:output_fd(s, true) */
  const char *routed[2]; /* each stream's routing, as the result's "routed" */
  size_t ndups, capdups;
  char *scratch;     /* READ_CHUNK bytes for p:read, made at its first call */
  int drained[2];    /* p:read's last read of the stream emptied it: wait first */
  int tail;          /* the result may have "waiting_for_input", "confined", "limit" */
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

/* Runtime failure, Lua style: nil, message, code. */
static int push_fail(lua_State *L, int code) {
  lua_pushnil(L);
  lua_pushstring(L, sup_strerror(code));
  lua_pushinteger(L, code);
  return 3;
}

static int stream_arg(lua_State *L, int idx) {
  return luaL_checkoption(L, idx, "stdout", stream_names); /* 0 or 1 */
}

static int stream_of(int s) { return s == 0 ? SUP_STDOUT : SUP_STDERR; }

/* Defined in lsup_process.c; a wait that the host stops releases sup.run's
 * own handle (lsup_wait.c). */
static void close_proc(lproc *lp);

/* Defined in lsup_json.c: the result's keys without a typed accessor. */
static void set_json_tail(lua_State *L, const char *json);

#endif
