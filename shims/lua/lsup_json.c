/* lsup_json.c: the result JSON's nested values ("confined") as Lua values, for keys without a typed accessor. */

/*
 * A reader for the JSON that libsup itself writes (well-formed, ASCII
 * outside strings): objects become tables, arrays sequences, null nil (a
 * key with null is left out, as everywhere in the result table). It reads
 * only the keys after "waiting_for_input", which never hold captured
 * output, so it stays small and never sees megabytes of text.
 */

static const char *json_skip_ws(const char *s) {
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
  return s;
}

/* Pushes the string starting at s (its '"'); returns what follows it. */
static const char *json_push_string(lua_State *L, const char *s) {
  luaL_Buffer B;
  luaL_buffinit(L, &B);
  s++;
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
      default: luaL_addchar(&B, *s); break;
    }
    s++;
  }
  luaL_pushresult(&B);
  return *s == '"' ? s + 1 : s;
}

/* Pushes the value at s (nil for null or anything unexpected); returns
 * what follows it. */
static const char *json_push_value(lua_State *L, const char *s, int depth) {
  s = json_skip_ws(s);
  luaL_checkstack(L, 4, "sup: result nested too deeply");
  if (*s == '"') return json_push_string(L, s);
  if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
    lua_pushboolean(L, *s == 't');
    return s + (*s == 't' ? 4 : 5);
  }
  if (strncmp(s, "null", 4) == 0) {
    lua_pushnil(L);
    return s + 4;
  }
  if (*s == '-' || (*s >= '0' && *s <= '9')) {
    /* The JSON's '.' read whatever the host's LC_NUMERIC says, as Lua's
     * own tonumber does it: with the locale's decimal point. */
    char num[64];
    size_t n = strspn(s, "-+.eE0123456789");
    size_t m = n < sizeof num - 1 ? n : sizeof num - 1;
    memcpy(num, s, m);
    num[m] = '\0';
    char *dot = strchr(num, '.');
    if (dot != NULL) *dot = localeconv()->decimal_point[0];
    double d = strtod(num, NULL);
    if (d == floor(d) && fabs(d) < 9007199254740992.0)
      lua_pushinteger(L, (lua_Integer)d);
    else
      lua_pushnumber(L, d);
    return s + n;
  }
  if ((*s != '{' && *s != '[') || depth > MAX_DEPTH) {
    lua_pushnil(L);
    return s;
  }
  char close = *s == '{' ? '}' : ']';
  int n = 0;
  lua_newtable(L);
  s = json_skip_ws(s + 1);
  while (*s != '\0' && *s != close) {
    if (close == '}') {
      if (*s != '"') break;
      s = json_push_string(L, s);
      s = json_skip_ws(s);
      if (*s == ':') s++;
      s = json_push_value(L, s, depth + 1);
      lua_rawset(L, -3); /* a nil value sets nothing */
    } else {
      s = json_push_value(L, s, depth + 1);
      lua_rawseti(L, -2, ++n);
    }
    s = json_skip_ws(s);
    if (*s == ',') s = json_skip_ws(s + 1);
  }
  return *s == close ? s + 1 : s;
}

/* Sets the table on top's "waiting_for_input", "confined" and "limit"
 * from the result JSON's keys from "waiting_for_input" on (the last ones,
 * after both streams), each that is not null. The others there have typed
 * accessors. */
static void set_json_tail(lua_State *L, const char *json) {
  static const char *const wanted[] = {"waiting_for_input", "confined", "limit", NULL};
  const char *s = strstr(json, "\"waiting_for_input\": ");
  if (s == NULL) return;
  int t = lua_gettop(L);
  while (*s == '"') {
    s = json_push_string(L, s);
    const char *k = lua_tostring(L, -1);
    int i = 0;
    while (wanted[i] != NULL && strcmp(wanted[i], k) != 0) i++;
    if (wanted[i] == NULL) lua_pop(L, 1);
    s = json_skip_ws(s);
    if (*s != ':') {
      lua_settop(L, t);
      return;
    }
    s = json_push_value(L, s + 1, 0);
    if (wanted[i] != NULL)
      lua_rawset(L, t);
    else
      lua_pop(L, 1);
    s = json_skip_ws(s);
    if (*s != ',') break;
    s = json_skip_ws(s + 1);
  }
  lua_settop(L, t);
}
