#!/usr/bin/env bash
# Benchmarks the Go shim against os/exec and writes tests/bench/shims-go.md:
#   shims/go/bench.sh BUILD_DIR [OUT]     (BUILD_DIR: a built meson dir)
#   SUP_GO_BENCH_ROWS=stream shims/go/bench.sh BUILD_DIR OUT
#                                         (the throughput rows alone, into OUT)
# (go test -bench . in shims/go, with the same environment, gives the means.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
case ${1:?usage: $0 BUILD_DIR [OUT]} in
  /*) build=$1 ;;
  *) build=$repo/$1 ;;
esac
out=${2:-$repo/tests/bench/shims-go.md}
case $out in /*) ;; *) out=$PWD/$out ;; esac
export PKG_CONFIG_PATH=$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
rpath=""
for d in $(pkg-config --libs-only-L sup); do
  rpath+=" -Wl,-rpath,${d#-L}"
done
export CGO_ENABLED=1 CGO_LDFLAGS="${rpath# }${CGO_LDFLAGS:+ $CGO_LDFLAGS}" GOTOOLCHAIN=local GOPROXY=off
# The child of the streaming row: tests/bench/bench_writer when built.
if [ -x "$build/tests/bench/bench_writer" ]; then
  export SUP_BENCH_WRITER=$build/tests/bench/bench_writer
fi
cd "$here"
SUP_GO_BENCH_OUT=$out go test -count=1 -timeout 20m -run '^TestBenchReport$' -v . | grep -E '_test.go|^(ok|FAIL|---)'
cat "$out"
