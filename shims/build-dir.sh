# Sourced by each shim's run-tests.sh, with $repo set to the repo root: its
# one argument, BUILD_DIR (absolute, or relative to the repo root), becomes
# $build, and the build's pkg-config dir $pcdir (where sup-uninstalled.pc
# names libsup as a user's PKG_CONFIG_PATH would). Exits 2 with the usage, or
# with what to run first when the build dir holds no built sup.
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
case $1 in
  /*) build=$1 ;;
  *) build=$repo/$1 ;;
esac
pcdir=$build/meson-uninstalled
if [ ! -f "$pcdir/sup-uninstalled.pc" ]; then
  echo "$(basename "$0"): $pcdir/sup-uninstalled.pc not found: build sup first (meson setup $1 && meson compile -C $1)" >&2
  exit 2
fi
