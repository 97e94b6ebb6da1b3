#!/bin/sh
# A consumer that knows only `pkg-config sup` builds and runs against the
# uninstalled library in the build tree.
set -eu
build_root=$1
source=$2
sanitize=${3:-none}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PKG_CONFIG_PATH="$build_root/meson-uninstalled"
flags=$(pkg-config --cflags --libs sup)
rpath=""
for dir in $(pkg-config --libs-only-L sup); do rpath="$rpath -Wl,-rpath,${dir#-L}"; done
# A sanitized libsup needs its runtime loaded first, by the program.
extra=""
[ "$sanitize" = none ] || extra="-fsanitize=$sanitize"
cc -std=c11 -Wall -Werror $extra "$source" $flags $rpath -o "$work/consumer"
"$work/consumer"
