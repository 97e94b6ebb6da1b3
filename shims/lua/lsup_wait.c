/* lsup_wait.c: blocking waits in slices, and the host's Ctrl-C between them. */

/*
 * The library installs no signal handler and its waits retry EINTR, so a
 * host that stops a running script by a signal (lua.c and luajit.c: SIGINT
 * sets a debug hook that raises "interrupted!" at the next Lua instruction)
 * would stay stuck in a C call until the child ended. Every blocking call
 * therefore waits in slices of WAIT_SLICE_MS and, between slices, calls an
 * empty Lua function: the host's pending hook runs there, in the host's own
 * way, and a signal the host handles otherwise (or ignores) changes nothing.
 * When the hook raises, the call ends the child as p:interrupt() does
 * (interrupt signal, grace, SIGKILL), waits until that is final, and
 * re-raises the host's error.
 */

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
 * its own thread, once, on the main thread's behalf. What the hook does to
 * its own thread's hook is done to the main thread's too: lua.c's hook
 * clears itself before it raises, and a main thread left armed would raise
 * "interrupted!" a second time, outside the pcall that caught the first. */
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
  int main_mask = lua_gethookmask(w->main), main_count = lua_gethookcount(w->main);
  lua_sethook(L, hook, main_mask, main_count);
  push_registry(L, &key_noop);
  int rc = lua_pcall(L, 0, 0, 0);
  lua_Hook left = lua_gethook(L);
  int left_mask = lua_gethookmask(L), left_count = lua_gethookcount(L);
  if ((left != hook || left_mask != main_mask || left_count != main_count) && lua_gethook(w->main) == hook)
    lua_sethook(w->main, left, left_mask, left_count);
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
