/* lsup_output.c: reading a child's output as it comes: p:read and p:lines. */

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
