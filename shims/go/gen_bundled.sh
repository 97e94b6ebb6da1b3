#!/bin/sh
# Writes one bundled_NAME.cpp per libsup source (lib/NAME.cpp) in this
# directory: cgo compiles only the C++ files of the package's own directory,
# so with -tags sup_bundled each wrapper includes its source from lib/ (the
# module is rooted at the repository, so a `go get` fetches lib/ with it).
# Run after adding, renaming or removing a lib/*.cpp:
#   sh shims/go/gen_bundled.sh
# TestBundledWrappers fails, naming the file, when the wrappers and lib/
# (and lib/meson.build's sup_sources) differ.
set -eu
cd "$(dirname "$0")"
rm -f bundled_*.cpp
for f in ../../lib/*.cpp; do
  n=$(basename "$f" .cpp)
  printf '//go:build sup_bundled\n\n#include "../../lib/%s.cpp"\n' "$n" >"bundled_$n.cpp"
done
