#!/bin/sh
# A consumer that knows only `pkg-config sup` builds and runs against the
# uninstalled library in the build tree.
set -eu
build_root=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PKG_CONFIG_PATH="$build_root/meson-uninstalled"
flags=$(pkg-config --cflags --libs sup)
libdir=$(pkg-config --variable=libdir sup)
cc -std=c11 -Wall -Werror "$source" $flags -Wl,-rpath,"$libdir" -o "$work/consumer"
"$work/consumer"
