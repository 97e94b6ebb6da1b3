/* lsup_input.c: writing a child's stdin: p:write, p:close_stdin, p:input_fd. */

static int wait_input(lproc *lp, int s, int ms) {
  (void)s;
  return sup_input_wait(lp->p, ms);
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
