/* lsup_compat.h: the 5.3/5.4 C API that the module uses, over Lua 5.1 and LuaJIT 2.1 where they lack it. */

/*
 * Every replacement is a static function with a name of its own (lsupc_*),
 * never the 5.2+ name: LuaJIT 2.1 exports some 5.2 functions
 * (luaL_setfuncs, luaL_setmetatable), and a module built against the 5.1
 * headers must load in both lua5.1 and luajit without depending on them.
 */
#ifndef LSUP_COMPAT_H
#define LSUP_COMPAT_H

#include <lauxlib.h>
#include <lua.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#if LUA_VERSION_NUM >= 503

#define lsupc_isinteger lua_isinteger
#define lsupc_rawlen(L, i) ((size_t)lua_rawlen((L), (i)))
#define lsupc_absindex lua_absindex
#define lsupc_setmetatable luaL_setmetatable
#define lsupc_setfuncs luaL_setfuncs
#define lsupc_checkversion luaL_checkversion
#define lsupc_prepbuffsize luaL_prepbuffsize
#define lsupc_testudata luaL_testudata
#define LSUPC_MAXINTEGER LUA_MAXINTEGER
/* The most bytes one luaL_prepbuffsize call is asked for. */
#define LSUPC_CHUNK ((size_t)65536)

#if LUA_VERSION_NUM >= 504
#define lsupc_newuserdata(L, n) lua_newuserdatauv((L), (n), 0)
#else
#define lsupc_newuserdata(L, n) lua_newuserdata((L), (n))
#endif

/* The state's main thread (never collected), for its hook. */
static lua_State *lsupc_mainthread(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *main = lua_tothread(L, -1);
  lua_pop(L, 1);
  return main;
}

#elif LUA_VERSION_NUM == 501

#include <lualib.h> /* LUA_FILEHANDLE */

/* 5.1 numbers are doubles: an integer is a number with an integral value
 * that lua_Integer (ptrdiff_t) can hold. */
static int lsupc_isinteger(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TNUMBER) return 0;
  lua_Number n = lua_tonumber(L, idx);
  return n == floor(n) && n >= -9007199254740992.0 && n <= 9007199254740992.0;
}

#define lsupc_rawlen(L, i) ((size_t)lua_objlen((L), (i)))
#define lsupc_newuserdata(L, n) lua_newuserdata((L), (n))
#define LSUPC_MAXINTEGER PTRDIFF_MAX
/* luaL_prepbuffer gives LUAL_BUFFERSIZE bytes at a time. */
#define LSUPC_CHUNK ((size_t)LUAL_BUFFERSIZE)
#define lsupc_prepbuffsize(B, n) luaL_prepbuffer(B)
#define lsupc_checkversion(L) ((void)0)

static int lsupc_absindex(lua_State *L, int idx) {
  return idx > 0 || idx <= LUA_REGISTRYINDEX ? idx : lua_gettop(L) + idx + 1;
}

static void lsupc_setmetatable(lua_State *L, const char *name) {
  luaL_getmetatable(L, name);
  lua_setmetatable(L, -2);
}

static void *lsupc_testudata(lua_State *L, int idx, const char *name) {
  void *p = lua_touserdata(L, idx);
  if (p == NULL || !lua_getmetatable(L, idx)) return NULL;
  luaL_getmetatable(L, name);
  int same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same ? p : NULL;
}

static void lsupc_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  (void)nup; /* the module registers no upvalues */
  for (; l->name != NULL; l++) {
    lua_pushcfunction(L, l->func);
    lua_setfield(L, -2, l->name);
  }
}

/* 5.1 keeps no reference to its main thread in the registry: luaopen_sup
 * and every blocking call store it here when they run on it. */
static char lsupc_mainthread_key;

static void lsupc_note_thread(lua_State *L) {
  if (lua_pushthread(L) == 1) {
    lua_pushlightuserdata(L, &lsupc_mainthread_key);
    lua_insert(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  } else {
    lua_pop(L, 1);
  }
}

static lua_State *lsupc_mainthread(lua_State *L) {
  lua_pushlightuserdata(L, &lsupc_mainthread_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_State *main = lua_tothread(L, -1);
  lua_pop(L, 1);
  return main;
}

#else
#error "sup: Lua 5.1 (or LuaJIT 2.1), 5.3 or 5.4 expected"
#endif

#if LUA_VERSION_NUM >= 503
static void lsupc_note_thread(lua_State *L) { (void)L; }
#endif

/* The descriptor of the Lua file handle (io.open's) at idx, after its
 * buffered writes are flushed, so that the child's bytes come after them;
 * -1 for a closed handle, -2 for a value that is no file handle. 5.2+ keep
 * a luaL_Stream (closef NULL once closed); 5.1 and LuaJIT a FILE * (NULL
 * once closed) first in the userdata. */
static int lsupc_filefd(lua_State *L, int idx) {
  void *ud = lsupc_testudata(L, idx, LUA_FILEHANDLE);
  if (ud == NULL) return -2;
#if LUA_VERSION_NUM >= 502
  luaL_Stream *s = ud;
  if (s->closef == NULL || s->f == NULL) return -1;
  FILE *f = s->f;
#else
  FILE *f = *(FILE **)ud;
  if (f == NULL) return -1;
#endif
  fflush(f);
  return fileno(f);
}

#define lsupc_newlib(L, l) (lua_createtable((L), 0, (int)(sizeof(l) / sizeof((l)[0]) - 1)), lsupc_setfuncs((L), (l), 0))

#endif
