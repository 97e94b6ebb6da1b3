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

# shims/build-dir.sh: BUILD_DIR into $build and its pkg-config dir $pcdir.
source "$repo/shims/build-dir.sh"
if ! command -v go >/dev/null; then
  echo "run-tests.sh: go is missing (Go >= 1.21 is needed)" >&2
  exit 1
fi
if ! command -v pkg-config >/dev/null || ! command -v gcc >/dev/null; then
  bash "$repo/tests/deps.sh" --only pkg-config gcc libc6-dev
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
