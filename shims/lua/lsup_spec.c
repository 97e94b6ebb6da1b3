/* lsup_spec.c: the spec table of sup.spawn, encoded as the library's JSON. */

/*
 * The spec is JSON built here by hand, so that every byte of a Lua string
 * reaches the kernel unchanged: only '"', '\' and bytes below 0x20 are
 * escaped, bytes >= 0x80 pass through raw (valid UTF-8 or not), and stdin
 * data goes as base64. Everything but argv, env and stdin.data is encoded
 * generically and validated by the library, so that a bad key or value
 * raises with the library's own detail ("spec: KEY: problem").
 */

/* A growable buffer living in a userdata, so that a Lua error raised while
 * the spec is encoded (a bad value) cannot leak it: __gc frees it. */
typedef struct {
  char *data;
  size_t len, cap;
  const char *route[2]; /* "stdout" and "stderr" of the spec, when known names */
  int pty;              /* the spec asks for a pty */
  int late_keys;        /* the result may have "waiting_for_input", "confined", "limit" */
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

static void sb_value(lua_State *L, specbuf *b, int idx, const char *where, int depth);

/* The value of key k: an empty table is [] where the library takes an
 * array (Lua has one {} for both), else {}. */
static void sb_keyed(lua_State *L, specbuf *b, const char *k, int idx, const char *where, int depth) {
  static const char *const arrays[] = {"groups", "reset_signals", "write", "read", "exec", NULL};
  idx = lsupc_absindex(L, idx);
  if (lua_istable(L, idx)) {
    lua_pushnil(L);
    if (lua_next(L, idx) != 0) {
      lua_pop(L, 2);
    } else {
      for (int i = 0; arrays[i] != NULL; i++) {
        if (strcmp(k, arrays[i]) == 0) {
          sb_lit(L, b, "[]");
          return;
        }
      }
    }
  }
  sb_value(L, b, idx, where, depth);
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
    sb_keyed(L, b, k, -1, where, depth + 1);
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
    if (lua_type(L, -2) == LUA_TNUMBER && lua_type(L, -1) == LUA_TSTRING)
      /* luv's (and execve's) form: the same words, another meaning. */
      luaL_error(L,
                 "sup.spawn: env[%d] = \"%s\": names must be strings: env = { NAME = \"value\" } changes the "
                 "inherited environment; to replace it, as luv's list of \"NAME=value\" does, add env_clear = true",
                 (int)lua_tointeger(L, -2), lua_tostring(L, -1));
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

/* Whether the value at idx names a host descriptor: a Lua file handle
 * (io.open's, io.stdout) or an integer. */
static int is_descriptor(lua_State *L, int idx) {
  return lsupc_isinteger(L, idx) || lsupc_testudata(L, idx, LUA_FILEHANDLE) != NULL;
}

/* A descriptor as the library's {"fd": N}; a file handle gives its fileno,
 * its buffered writes flushed first. */
static void sb_fd(lua_State *L, specbuf *b, int idx, const char *where) {
  char num[48];
  if (lsupc_isinteger(L, idx)) {
    snprintf(num, sizeof num, "{\"fd\": %lld}", (long long)lua_tointeger(L, idx));
  } else {
    int fd = lsupc_filefd(L, idx);
    if (fd == -1) luaL_error(L, "sup.spawn: %s: the file is closed", where);
    if (fd < 0) luaL_error(L, "sup.spawn: %s: the file has no descriptor", where);
    snprintf(num, sizeof num, "{\"fd\": %d}", fd);
  }
  sb_lit(L, b, num);
}

/* fds = { [3] = file_or_number, ... }: the child's descriptor number ->
 * the host's, as the library's {"3": N}. */
static void sb_fds(lua_State *L, specbuf *b, int idx) {
  idx = lsupc_absindex(L, idx);
  if (!lua_istable(L, idx)) {
    sb_value(L, b, idx, "fds", 0);
    return;
  }
  sb_lit(L, b, "{");
  int first = 1;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (!lsupc_isinteger(L, -2))
      luaL_error(L, "sup.spawn: fds: keys are the child's descriptor numbers (fds = { [3] = file }), not %s",
                 luaL_typename(L, -2));
    char key[40], where[48];
    snprintf(key, sizeof key, "\"%lld\": ", (long long)lua_tointeger(L, -2));
    snprintf(where, sizeof where, "fds[%lld]", (long long)lua_tointeger(L, -2));
    if (!first) sb_lit(L, b, ", ");
    first = 0;
    sb_lit(L, b, key);
    if (lsupc_testudata(L, -1, LUA_FILEHANDLE) != NULL) {
      int fd = lsupc_filefd(L, -1);
      if (fd == -1) luaL_error(L, "sup.spawn: %s: the file is closed", where);
      if (fd < 0) luaL_error(L, "sup.spawn: %s: the file has no descriptor", where);
      snprintf(key, sizeof key, "%d", fd);
      sb_lit(L, b, key);
    } else {
      sb_value(L, b, -1, where, 1);
    }
    lua_pop(L, 1);
  }
  sb_lit(L, b, "}");
}

/* stdin = "null" | "inherit" | "pipe" | { data = bytes } | file | fd: data
 * goes as base64, so that any byte (NUL, invalid UTF-8) arrives exactly. */
static void sb_stdin(lua_State *L, specbuf *b, int idx) {
  idx = lsupc_absindex(L, idx);
  if (is_descriptor(L, idx)) {
    sb_fd(L, b, idx, "stdin");
    return;
  }
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
    else if (strcmp(k, "fds") == 0)
      sb_fds(L, b, -1);
    else if ((strcmp(k, "stdout") == 0 || strcmp(k, "stderr") == 0) && is_descriptor(L, -1))
      sb_fd(L, b, -1, k);
    else if (strcmp(k, "max_output_bytes") == 0 && lua_type(L, -1) == LUA_TNUMBER &&
             lua_tonumber(L, -1) == HUGE_VAL)
      sb_lit(L, b, "null"); /* math.huge: every byte kept */
    else
      sb_keyed(L, b, k, -1, k, 0);
    if (strcmp(k, "stdout") == 0 || strcmp(k, "stderr") == 0) {
      int s = k[3] == 'o' ? 0 : 1;
      if (lua_type(L, -1) == LUA_TSTRING)
        b->route[s] = route_name(lua_tostring(L, -1));
      else if (is_descriptor(L, -1) || lua_istable(L, -1))
        b->route[s] = "fd"; /* a table is {fd = N}: anything else raised */
    }
    if (strcmp(k, "input_wait_timeout_ms") == 0 || strcmp(k, "limits") == 0 || strcmp(k, "sandbox") == 0 ||
        strcmp(k, "user") == 0 || strcmp(k, "group") == 0 || strcmp(k, "groups") == 0)
      b->late_keys = 1;
    if (strcmp(k, "pty") == 0 && lua_toboolean(L, -1)) b->pty = 1;
    lua_pop(L, 1);
  }
  sb_lit(L, b, "}");
  sb_reserve(L, b, 1);
  b->data[b->len] = '\0';
  return b;
}
