#!/usr/bin/env bash
# Runs every check of the Lua shim against an already-built meson build dir
# of the repo (absolute, or relative to the repo root): installs Lua 5.4,
# 5.3, 5.1 and LuaJIT with their headers, luv, Neovim, LuaRocks and valgrind
# from Debian if missing, makes sure the build dir has found every Lua
# (reconfiguring it if it was set up before the headers were installed),
# then runs meson's "lua" suite: the module built and tested once per Lua,
# with luv, under valgrind (5.4 and 5.1) and inside Neovim.
# Usage: shims/lua/run-tests.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: shims/lua/run-tests.sh BUILD_DIR}

bash tests/deps.sh --only lua5.4 liblua5.4-dev lua5.3 liblua5.3-dev lua5.1 liblua5.1-0-dev \
  luajit libluajit-5.1-dev lua-luv neovim luarocks valgrind binutils

# Whether the build dir was set up with every Lua and LuaRocks present.
found_all() {
  local targets v
  targets=$(meson introspect "$build" --targets)
  for v in "" lua5.3/ lua5.1/ luajit/; do
    grep -q "shims/lua/${v}sup.so\"" <<<"$targets" || return 1
  done
  meson introspect "$build" --tests | grep -q '"lua-rockspec"'
}
if ! found_all; then
  meson setup --reconfigure "$build" >/dev/null
fi
meson compile -C "$build" >/dev/null

rc=0
meson test -C "$build" --suite lua --print-errorlogs || rc=$?
log="$build/meson-logs/testlog.json"
python3 - "$log" <<'PY'
import json, sys
ok = bad = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"] in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r["result"] == "SKIP": skipped += 1
    else: bad += 1
print(f"shims/lua: {ok} passed, {bad} failed, {skipped} skipped")
PY
exit $rc
