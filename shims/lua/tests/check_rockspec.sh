#!/bin/sh
# The rockspec builds the module with LuaRocks' builtin backend against a
# libsup found through SUP_INCDIR / SUP_LIBDIR, and the result loads and runs.
# Usage: check_rockspec.sh SHIM_DIR INCLUDE_DIR LIBSUP_DIR
set -eu
shim=$1
incdir=$2
libdir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy: luarocks make leaves its objects beside the sources.
cp "$shim/lsup.c" "$shim"/sup-*.rockspec "$work/"
cd "$work"
luarocks --lua-version=5.4 lint sup-*.rockspec
luarocks --lua-version=5.4 --tree "$work/tree" make sup-*.rockspec \
  SUP_INCDIR="$incdir" SUP_LIBDIR="$libdir" >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 1; }
module=$(find "$work/tree" -name sup.so | head -n 1)
[ -n "$module" ] || { echo "luarocks installed no sup.so" >&2; exit 1; }
LUA_CPATH="$(dirname "$module")/?.so" lua5.4 -e '
  local sup = require "sup"
  local res = assert(sup.run{ "echo", "built by luarocks" })
  assert(res.stdout.captured == "built by luarocks\n", res.stdout.captured)'
echo "rockspec: linted, built with luarocks make, loaded and ran"
