#!/bin/sh
# The rockspec builds the module with LuaRocks' builtin backend against a
# libsup found through SUP_INCDIR / SUP_LIBDIR, for each Lua installed (5.4,
# 5.3, 5.1; the 5.1 build is loaded by LuaJIT too), and the result loads
# and runs.
# Usage: check_rockspec.sh SHIM_DIR INCLUDE_DIR LIBSUP_DIR
set -eu
shim=$1
incdir=$2
libdir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy: luarocks make leaves its objects beside the sources.
cp "$shim"/lsup*.c "$shim"/lsup*.h "$shim"/sup-*.rockspec "$work/"
cd "$work"
luarocks lint sup-*.rockspec
built=""
for v in 5.4 5.3 5.1; do
  command -v "lua$v" >/dev/null && [ -f "/usr/include/lua$v/lua.h" ] || continue
  tree="$work/tree$v"
  luarocks --lua-version="$v" --tree "$tree" make sup-*.rockspec \
    SUP_INCDIR="$incdir" SUP_LIBDIR="$libdir" >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 1; }
  module=$(find "$tree" -name sup.so | head -n 1)
  [ -n "$module" ] || { echo "luarocks installed no sup.so for Lua $v" >&2; exit 1; }
  interps="lua$v"
  [ "$v" = 5.1 ] && command -v luajit >/dev/null && interps="$interps luajit"
  for lua in $interps; do
    LUA_CPATH="$(dirname "$module")/?.so" "$lua" -e '
      local sup = require "sup"
      local res = assert(sup.run{ "echo", "built by luarocks" })
      assert(res.stdout.captured == "built by luarocks\n", res.stdout.captured)'
    built="$built $lua"
  done
  rm -rf "$work"/*.o
done
[ -n "$built" ] || { echo "no Lua with headers found" >&2; exit 1; }
echo "rockspec: linted, built with luarocks make, loaded and ran in:$built"
