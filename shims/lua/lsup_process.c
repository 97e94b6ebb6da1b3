/* lsup_process.c: the process handle: spawning, waiting for the end, signals, descriptors, release. */

/*
 * A Lua state is single-threaded: a handle is never used by two threads at
 * once, so the "no call may begin after sup_release" rule reduces to
 * clearing the pointer before releasing it.
 */

static lproc *check_proc(lua_State *L, int idx) {
  lproc *lp = luaL_checkudata(L, idx, PROC_MT);
  if (lp->p == NULL) luaL_error(L, "attempt to use a closed sup process");
  return lp;
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

static const char *part_name(int part) {
  switch (part) {
    case SUP_PART_SPEC: return "spec";
    case SUP_PART_EXEC: return "exec";
    case SUP_PART_CWD: return "cwd";
    case SUP_PART_SYSTEM: return "system";
    default: return "none";
  }
}

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
  lp->tail = b->late_keys;
  return 1;
}

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

/* p:expire(): ends the child as its max_runtime_ms would, now. */
static int m_expire(lua_State *L) { return push_request(L, sup_expire(check_proc(L, 1)->p)); }

/* p:input_wanted(): true while the child waits for input it cannot get,
 * false when not; nil, message, code when sup cannot tell (SUP_EPERM) or
 * the result is final (SUP_ESRCH). May block ~40 ms (sup.h says when). */
static int m_input_wanted(lua_State *L) {
  lproc *lp = check_proc(L, 1);
  lp->tail = 1; /* the result's "waiting_for_input" answers now */
  int rc = sup_input_wanted(lp->p);
  if (rc < 0) return push_fail(L, rc);
  lua_pushboolean(L, rc == 1);
  return 1;
}

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
