#!/usr/bin/env bash
# Installs what building and testing sup needs on Debian 12, if missing.
# Usage: tests/deps.sh [extra Debian packages...]
#        tests/deps.sh --only PACKAGE...   (those alone: a shim's test runner)
set -euo pipefail

if [ "${1:-}" = "--only" ]; then
  shift
  packages=("$@")
else
  packages=(meson ninja-build pkg-config gcc g++ clang python3 libuv1-dev libcjson-dev libgtest-dev
            fuse3 python3-fusepy lua5.4 liblua5.4-dev lua5.3 liblua5.3-dev lua5.1 liblua5.1-0-dev
            luajit libluajit-5.1-dev lua-luv neovim luarocks valgrind libclang-rt-14-dev ccache "$@")
fi
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null; then
  as_root=(sudo)
else
  echo "deps.sh: need root (or sudo) to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
