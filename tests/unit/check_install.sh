#!/bin/sh
# A consumer of an installed sup: `meson install --destdir` into a staged
# prefix, then programs built only from `pkg-config sup` against that prefix,
# once against libsup.so and once statically against libsup.a
# (`pkg-config --static`, with libuv and libcjson from Requires.private).
set -eu
build_root=$1
source=$2
# A sanitized libsup.a needs the sanitizer runtime in every consumer: the
# plain build checks installation.
if [ "${3:-none}" != none ]; then echo "skipped under -fsanitize=$3"; exit 77; fi
unset LD_LIBRARY_PATH  # meson test points it at the build tree
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meson install -C "$build_root" --no-rebuild --destdir "$work/stage" >/dev/null
pc=$(find "$work/stage" -name sup.pc | head -n 1)
[ -n "$pc" ] || { echo "no sup.pc installed" >&2; exit 1; }
[ -n "$(find "$work/stage" -name libsup.a)" ] || { echo "no libsup.a installed" >&2; exit 1; }
[ -n "$(find "$work/stage" -name 'libsup.so.0')" ] || { echo "no libsup.so.0 installed" >&2; exit 1; }
[ -x "$(find "$work/stage" -path '*libexec*' -name sup-sentinel | head -n 1)" ] || { echo "no sup-sentinel installed in libexecdir" >&2; exit 1; }
for tool in sup-run sup-timeout; do
  [ -x "$(find "$work/stage" -path '*bin*' -name "$tool" | head -n 1)" ] || { echo "no $tool installed in bindir" >&2; exit 1; }
done
export PKG_CONFIG_PATH="$(dirname "$pc")"
export PKG_CONFIG_SYSROOT_DIR="$work/stage"
libdir="$work/stage$(PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=libdir sup)"

cc -std=c11 -Wall -Werror "$source" $(pkg-config --cflags --libs sup) -Wl,-rpath,"$libdir" -o "$work/shared"
"$work/shared" >/dev/null
if ldd "$work/shared" | grep -q "libsup.so.0 => $libdir"; then :; else
  echo "the shared consumer did not load the staged libsup:" >&2; ldd "$work/shared" >&2; exit 1
fi

static_libs=$(pkg-config --static --libs sup | sed 's/-lsup\b//')
cc -std=c11 -Wall -Werror "$source" $(pkg-config --cflags sup) -Wl,-Bstatic -lsup -Wl,-Bdynamic $static_libs -o "$work/static"
"$work/static" >/dev/null
if ldd "$work/static" | grep -q libsup; then
  echo "the static consumer still needs libsup.so" >&2; exit 1
fi
echo "installed: shared and static consumers built from pkg-config and ran"
