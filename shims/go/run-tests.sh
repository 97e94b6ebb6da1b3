#!/usr/bin/env bash
# Runs every check of the Go shim against an already-built meson build dir:
#   shims/go/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# libsup is found through the build dir's pkg-config file, as a user's
# PKG_CONFIG_PATH would find it; an rpath to its -L dirs is passed through
# CGO_LDFLAGS so that the tests need no LD_LIBRARY_PATH.
# Checks: go vet, go test -race, then go test with GOMAXPROCS=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

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
  echo "run-tests.sh: $pcdir/sup-uninstalled.pc not found: build sup first (meson setup $1 && meson compile -C $1)" >&2
  exit 2
fi
if ! command -v go >/dev/null; then
  echo "run-tests.sh: go is missing (Go >= 1.21 is needed)" >&2
  exit 1
fi
if ! command -v pkg-config >/dev/null || ! command -v gcc >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo); else
    echo "run-tests.sh: pkg-config or gcc is missing and there is no root or sudo to install them" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends pkg-config gcc libc6-dev >/dev/null
fi

export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# In a build tree, the .pc file's libdir variable does not name the directory
# that holds libsup.so; its -L flags do.
rpath=""
for d in $(pkg-config --libs-only-L sup); do
  rpath+=" -Wl,-rpath,${d#-L}"
done
export CGO_ENABLED=1 CGO_LDFLAGS="${rpath# }${CGO_LDFLAGS:+ $CGO_LDFLAGS}"
export GOTOOLCHAIN=local GOPROXY=off

cd "$here"

log=$build/go-shim/run-tests.log
mkdir -p "$(dirname "$log")"
: >"$log"
go vet ./...
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then echo "gofmt: not formatted: $unformatted" >&2; exit 1; fi
echo "go vet, gofmt: clean"
# Runs go test with the given arguments, keeps its whole output in the log and
# shows failures, the per-package result and what the tests log (timings).
gotest() {
  local st
  set +e
  go test -count=1 -v "$@" ./... 2>&1 | tee -a "$log" | grep -E '^(--- FAIL|FAIL|ok|panic)|_test.go:'
  st=${PIPESTATUS[0]}
  set -e
  [ "$st" -eq 0 ] || rc=1
}
rc=0
echo "== go test -race" | tee -a "$log"
gotest -race
echo "== GOMAXPROCS=1 go test" | tee -a "$log"
GOMAXPROCS=1 gotest

passed=$(grep -c -E '^--- PASS' "$log" || true)
failed=$(grep -c -E '^--- FAIL' "$log" || true)
echo "go shim: $passed passed, $failed failed (go test -race and GOMAXPROCS=1 go test, example included; go vet and gofmt clean)"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
