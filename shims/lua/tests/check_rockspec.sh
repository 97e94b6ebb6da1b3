#!/bin/sh
# The rockspec builds the module with LuaRocks (rock.mk) against an
# installed libsup named by SUP_INCDIR / SUP_LIBDIR in the environment, for
# each Lua installed (5.4, 5.3, 5.1; the 5.1 build is loaded by LuaJIT
# too): the module links that libsup rather than compiling its own, and
# loads and runs. check_rock_bundled.sh covers a machine without libsup.
# Usage: check_rockspec.sh SHIM_DIR INCLUDE_DIR LIBSUP_DIR
set -eu
shim=$1
incdir=$2
libdir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy: luarocks make leaves its objects beside the sources.
cp "$shim"/lsup*.c "$shim"/lsup*.h "$shim"/rock.mk "$shim"/sup-*.rockspec "$work/"
cd "$work"
luarocks lint sup-*.rockspec
built=""
for v in 5.4 5.3 5.1; do
  command -v "lua$v" >/dev/null && [ -f "/usr/include/lua$v/lua.h" ] || continue
  tree="$work/tree$v"
  SUP_INCDIR="$incdir" SUP_LIBDIR="$libdir" luarocks --lua-version="$v" --tree "$tree" make sup-*.rockspec \
    >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 1; }
  module=$(find "$tree" -name sup.so | head -n 1)
  [ -n "$module" ] || { echo "luarocks installed no sup.so for Lua $v" >&2; exit 1; }
  readelf -d "$module" | grep -q 'NEEDED.*\[libsup\.so\.0\]' ||
    { echo "$module does not link the libsup of $libdir" >&2; exit 1; }
  interps="lua$v"
  [ "$v" = 5.1 ] && command -v luajit >/dev/null && interps="$interps luajit"
  for lua in $interps; do
    LUA_CPATH="$(dirname "$module")/?.so" "$lua" -e '
      local sup = require "sup"
      local res = assert(sup.run{ "echo", "built by luarocks" })
      assert(res.stdout.captured == "built by luarocks\n", res.stdout.captured)'
    built="$built $lua"
  done
  make -f rock.mk clean >/dev/null
done
[ -n "$built" ] || { echo "no Lua with headers found" >&2; exit 1; }
echo "rockspec: linted, built with luarocks make against $libdir, loaded and ran in:$built"
