#!/bin/sh
# The unity_size the suite's builds use: eight sources a unity file, or nine
# when the library has a multiple of eight. Meson 1.0 then counts one unity
# file too many for a unity target's extracted objects (libsup.a, the
# internal tests'): len // size + 1, and the build stops on a file it never
# made.
cd "$(dirname "$0")/.." || exit 1
n=$(sed -n '/^sup_sources = files(/,/^)/p' lib/meson.build | grep -c "\.cpp'")
if [ $((n % 8)) -eq 0 ]; then echo 9; else echo 8; fi
