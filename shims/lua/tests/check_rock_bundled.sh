#!/bin/sh
# The README's LuaRocks steps on a machine without libsup: from a copy of
# the repository's include/, lib/ and shims/lua/ (outside any build dir),
# `luarocks make` compiles libsup into the module with nothing but libuv's
# and cJSON's headers, and so does `luarocks install` of the .src.rock that
# pack-rock.sh makes; each module loads (lua5.4; lua5.1 and luajit for the
# packed rock), runs a child, and holds libsup inside itself.
# Usage: check_rock_bundled.sh SOURCE_ROOT
set -eu
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Nothing of a build tree: the module must not find libsup there.
unset LD_LIBRARY_PATH SUP_DIR SUP_INCDIR SUP_LIBDIR
mkdir -p "$work/src/shims"
cp -R "$root/include" "$root/lib" "$work/src/"
cp -R "$root/shims/lua" "$work/src/shims/"
rm -rf "$work/src/shims/lua/rock-build" "$work/src/shims/lua/sup.so"

# Where a libsup is installed, luarocks would rightly link it: the
# bundled build is then asked for by name.
if pkg-config --exists sup 2>/dev/null ||
  printf '#include <sup.h>\nint main(void) { return sup_version(); }\n' | cc -x c - -o /dev/null -lsup 2>/dev/null; then
  echo "a libsup is installed here: asking for the bundled build with SUP_BUNDLED=yes"
  export SUP_BUNDLED=yes
fi

fail() {
  echo "$*" >&2
  exit 1
}

# Both builds compile the same libsup sources with the same flags, from the
# same relative paths (../../lib of shims/lua): with ccache, its cache in
# this check's own directory, the second takes the first's objects instead
# of compiling them again.
if command -v ccache >/dev/null; then
  unset CCACHE_DISABLE
  export CCACHE_DIR="$work/ccache" CXX="ccache ${CXX:-g++}"
fi

# check LUA_VERSION TREE INTERPRETERS...
check() {
  v=$1
  tree=$2
  shift 2
  module=$(find "$tree" -name sup.so | head -n 1)
  [ -n "$module" ] || fail "luarocks installed no sup.so for Lua $v"
  needed=$(readelf -d "$module" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  case " $needed" in *" libsup."*) fail "$module links libsup.so ($needed): not bundled" ;; esac
  exported=$(nm -D --defined-only "$module" | awk '$2 == "T" { print $3 }' | tr '\n' ' ')
  [ "$exported" = "luaopen_sup " ] || fail "$module exports more than luaopen_sup: $exported"
  cpath=$(luarocks --lua-version="$v" --tree "$tree" path --lr-cpath)
  for lua in "$@"; do
    command -v "$lua" >/dev/null || continue
    LUA_CPATH="$cpath" "$lua" -e '
      local sup = require "sup"
      local res = assert(sup.run{ "sh", "-c", "echo built by luarocks; exit 3" })
      assert(res.stdout.captured == "built by luarocks\n", res.stdout.captured)
      assert(res.exit_code == 3, res.outcome)
      local p = assert(sup.spawn{ "sleep", "60" })
      assert(p:wait(50) == nil)
      assert(p:interrupt())
      assert(p:wait().outcome == "interrupted")' || fail "$lua: the bundled module failed"
    echo "$lua: loaded $module and ran children"
  done
}

# 1. luarocks make, from shims/lua of the copy, as the README says.
(cd "$work/src/shims/lua" &&
  luarocks --lua-version=5.4 --tree "$work/tree54" make sup-*.rockspec >"$work/make.log" 2>&1) ||
  { cat "$work/make.log" >&2; fail "luarocks make failed"; }
grep -q "compiling libsup into the module" "$work/make.log" ||
  { cat "$work/make.log" >&2; fail "luarocks make did not compile libsup in"; }
check 5.4 "$work/tree54" lua5.4

# 2. The packed rock, installed with a Lua of its own.
if [ -f /usr/include/lua5.1/lua.h ] && command -v lua5.1 >/dev/null; then
  rm -rf "$work/src/shims/lua/rock-build" "$work/src/shims/lua/sup.so"
  rock=$("$work/src/shims/lua/pack-rock.sh" "$work")
  (cd "$work" && luarocks --lua-version=5.1 --tree "$work/tree51" install "$rock" >"$work/install.log" 2>&1) ||
    { cat "$work/install.log" >&2; fail "luarocks install $rock failed"; }
  check 5.1 "$work/tree51" lua5.1 luajit
fi
if command -v ccache >/dev/null; then
  echo "ccache: $(ccache --print-stats | awk '$1 ~ /^(direct|preprocessed)_cache_hit$/ { hit += $2 } $1 == "cache_miss" { miss = $2 } END { print hit + 0 " objects shared, " miss + 0 " compiled" }')"
fi
echo "rock: built with libsup compiled in, by luarocks make and from a packed rock"
