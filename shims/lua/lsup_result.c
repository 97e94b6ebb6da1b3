/* lsup_result.c: the final result as a Lua table, its JSON, and os.execute's three values. */

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
  if (phase == SUP_PHASE_FIRST_OUTPUT || phase == SUP_PHASE_IDLE || phase == SUP_PHASE_INPUT) {
    lua_pushstring(L, phase == SUP_PHASE_IDLE ? "idle" : phase == SUP_PHASE_INPUT ? "input" : "first_output");
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

  /* Only a spec or a call that can set them makes the JSON for them: it
   * holds the captured output as text, which can be large. */
  if (lp->tail) {
    const char *json = sup_result(p);
    if (json == NULL) luaL_error(L, "sup: the result: out of memory");
    set_json_tail(L, json);
  }
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
