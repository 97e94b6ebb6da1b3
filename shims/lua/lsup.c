/* lsup.c: the Lua module "sup" over libsup's C ABI: its functions, metatables and luaopen_sup. */

/*
 * For Lua 5.1, LuaJIT 2.1, 5.3 and 5.4 from one source (lsup_compat.h
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
 * Split as luv is, into one file per concern, compiled as one translation
 * unit (lsup.h says why):
 *   lsup_compat.h   the 5.3/5.4 API over 5.1 and LuaJIT
 *   lsup_spec.c     the spec table, as the library's JSON
 *   lsup_result.c   the result table, res.json, os.execute's values
 *   lsup_json.c     the result's nested values ("confined") from its JSON
 *   lsup_wait.c     blocking waits, and the host's Ctrl-C
 *   lsup_process.c  the process handle: spawn, wait, signals, descriptors
 *   lsup_output.c   reading output: p:read, p:lines
 *   lsup_input.c    writing input: p:write, p:close_stdin
 */
#include "lsup.h"

#include "lsup_spec.c"
#include "lsup_result.c"
#include "lsup_json.c"
#include "lsup_wait.c"
#include "lsup_process.c"
#include "lsup_output.c"
#include "lsup_input.c"

static int l_spawn(lua_State *L) {
  lua_settop(L, 1);
  return do_spawn(L);
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

static const luaL_Reg proc_methods[] = {
    {"wait", m_wait},
    {"poll", m_poll},
    {"result", m_result},
    {"interrupt", m_interrupt},
    {"abort", m_abort},
    {"expire", m_expire},
    {"input_wanted", m_input_wanted},
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
