#!/bin/sh
# pack-rock.sh: makes the .src.rock that `luarocks install` builds anywhere: the rockspec and the repository's include/, lib/ and shims/lua/.
#
# On a machine without libsup, `luarocks install sup-X.Y.Z-1.src.rock`
# compiles libsup into the module from the sources inside the rock (see
# rock.mk), with only libuv's and cJSON's headers.
# Usage: shims/lua/pack-rock.sh [OUTDIR]   (default: the current directory)
set -eu
shim=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$shim/../.." && pwd)
out=$(cd "${1:-.}" && pwd)
set -- "$shim"/sup-*.rockspec
[ $# -eq 1 ] || { echo "pack-rock.sh: expected one rockspec in $shim, found $#" >&2; exit 1; }
rockspec=$1
base=$(basename "$rockspec" .rockspec) # sup-0.3.0-1
version=${base#sup-}
version=${version%-*} # 0.3.0
grep -q "url = \"file://sup-$version.tar.gz\"" "$rockspec" ||
  { echo "pack-rock.sh: $rockspec: source.url is not file://sup-$version.tar.gz" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/sup-$version"
# What a build in the checkout left beside the sources stays out.
tar -C "$root" --exclude=rock-build --exclude='*.o' --exclude='*.so' -cf - include lib shims/lua |
  tar -C "$work/sup-$version" -xf -
tar -C "$work" -czf "$work/sup-$version.tar.gz" "sup-$version"
# A .src.rock is a zip of the rockspec and its source archive, as `luarocks
# pack` makes it; zipped here because luarocks pack would fetch the
# rockspec's relative file:// URL from a directory of its own.
cp "$rockspec" "$work/"
(cd "$work" && zip -q "$base.src.rock" "$base.rockspec" "sup-$version.tar.gz")
mv "$work/$base.src.rock" "$out/"
echo "$out/$base.src.rock"
