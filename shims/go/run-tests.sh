#!/usr/bin/env bash
# Runs every check of the Go shim against an already-built meson build dir:
#   shims/go/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# libsup is found through the build dir's pkg-config file, as a user's
# PKG_CONFIG_PATH would find it; an rpath to its -L dirs is passed through
# CGO_LDFLAGS so that the tests need no LD_LIBRARY_PATH.
# Checks: go vet, gofmt, that the module (go.mod at the repository's root)
# holds no package but this one, go test -race, go test with GOMAXPROCS=1
# (which include the host-death test of a program built with -tags
# sup_bundled), the host-death tests with libsup.a linked in (-tags
# sup_static), then the README's install recipes (shared, go.work, static,
# bundled, no cgo) in a fresh module outside the checkout.
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
# The module (go.mod at the repository's root) is what `go get` fetches: the
# tracked files, less those of nested modules. Its one package is this one;
# any other Go file must be in a module of its own, under testdata/ or
# excluded by a build constraint.
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  tree=$(mktemp -d)
  (cd "$repo" && git ls-files -z -co --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$tree"
  pkgs=$(cd "$tree" && go list ./... 2>&1) || true
  rm -rf "$tree"
  if [ "$pkgs" != "github.com/sup-project/sup/shims/go" ]; then
    printf '%s\n' "go list: the module holds other packages than shims/go:" "$pkgs" >&2
    exit 1
  fi
  echo "go list: the module's one package is shims/go"
fi
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
# A host killed with libsup.a inside (-tags sup_static): no sup-sentinel is
# found from there, and the test binary runs itself as the sentinel.
echo "== go test -tags sup_static (host death)" | tee -a "$log"
CGO_CFLAGS="$(pkg-config --cflags sup)${CGO_CFLAGS:+ $CGO_CFLAGS}" \
  CGO_LDFLAGS="$CGO_LDFLAGS $(pkg-config --libs-only-L sup)" \
  gotest -tags sup_static -run '^(TestHostDeath|TestRequireSentinel)$'

# The fenced block that follows the line "<!-- run-tests.sh: NAME -->" in
# README.md.
readme_block() {
  awk -v m="<!-- run-tests.sh: $1 -->" '
    $0 == m { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    found && inside { print }' "$here/README.md"
}
# host_death_test.go's sourcesDigest: a hash of lib/ and include/sup.h, as
# paths from shims/go in byte order, each with its size, then its bytes.
sources_digest() {
  (cd "$here" && LC_ALL=C && for f in ../../lib/* ../../include/sup.h; do
    printf '%s %d\n' "$f" "$(stat -c %s "$f")"
    cat "$f"
  done) | sha256sum | cut -c1-16
}
# Runs one install recipe (bash text) in a fresh module, with none of this
# script's Go environment but GOTOOLCHAIN and GOPROXY (offline); records
# PASS or FAIL in the log under the given name.
recipe() {  # recipe NAME SCRIPT [VAR=VALUE ...]
  local name=$1 script=$2 out st
  shift 2
  local mod
  mod=$(mktemp -d)  # a fresh module outside the checkout
  readme_block main.go >"$mod/main.go"
  set +e
  out=$(cd "$mod" && env -u CGO_LDFLAGS -u CGO_CFLAGS -u PKG_CONFIG_PATH -u GOWORK -u GOFLAGS "$@" \
    bash -xeuo pipefail -c "go mod init example.com/hello >/dev/null 2>&1
$script" 2>&1)
  st=$?
  set -e
  rm -rf "$mod"
  if [ "$st" -eq 0 ]; then
    echo "--- PASS: install/$name" | tee -a "$log"
  else
    printf '%s\n' "--- FAIL: install/$name" "$out" | tee -a "$log"
    rc=1
  fi
}
echo "== README install recipes, in a fresh module outside the checkout" | tee -a "$log"
# The README's paths are the user's: here the checkout and this build dir.
install=$(readme_block install | sed -e "s|^SUP=.*|SUP=$repo|" -e "s|\$SUP/build|$build|g")
static=$(readme_block static)
if [ -z "$install" ] || [ -z "$static" ] || [ -z "$(readme_block bundled)" ] || [ -z "$(readme_block main.go)" ] || [ -z "$(readme_block example)" ]; then
  echo "--- FAIL: install/readme: a marked block is missing from README.md" | tee -a "$log"
  rc=1
else
  # Shared: runs without LD_LIBRARY_PATH, libsup.so from the build tree.
  # (ldd into a file: grep -q ending a pipe early fails it under pipefail.)
  recipe shared "$install
test \"\$(./hello)\" = 'hello from sup'
ldd ./hello >ldd.txt
grep -q 'libsup.so.0 => $build/' ldd.txt"
  recipe go-work "$(printf '%s\n' "$install" | sed -e '/^go mod edit/d' -e 's|^go mod tidy.*|go work init . \$SUP|')
test \"\$(./hello)\" = 'hello from sup'"
  # Static: libsup.a inside; libuv and cJSON shared.
  recipe static "$install
$static
test \"\$(./hello)\" = 'hello from sup'
ldd ./hello >ldd.txt
! grep -q libsup ldd.txt
grep -q libuv.so ldd.txt
grep -q libcjson.so ldd.txt"
  # The README's example compiles as it stands (it runs make: vetted only).
  example=$(readme_block example)
  recipe example "$install
mkdir example
cat >example/main.go <<'GO'
package main

import (
	\"context\"
	\"errors\"
	\"fmt\"
	\"log\"
	\"os\"
	\"os/exec\"
	\"os/signal\"
	\"time\"

	sup \"github.com/sup-project/sup/shims/go\"
)

func main() {
$example
}
GO
go vet ./example"
  # Bundled: libsup compiled from the module's lib/, no pkg-config path
  # or CGO_LDFLAGS for it; libsup inside the binary. With the CGO_CPPFLAGS
  # that TestHostDeathBundled builds with (a macro naming a digest of lib/
  # and include/, which no source reads), go's build cache hands this build
  # the libsup that test compiled instead of compiling it again.
  recipe bundled "$(readme_block bundled | sed -e "s|^SUP=.*|SUP=$repo|")
test \"\$(./hello)\" = 'hello from sup'
ldd ./hello >ldd.txt
! grep -q libsup ldd.txt
grep -q libuv.so ldd.txt" CGO_CPPFLAGS="-DSUP_SOURCES_DIGEST=$(sources_digest)"
  recipe no-cgo "$install
! CGO_ENABLED=0 go build . >err 2>&1
grep -q 'package sup requires cgo' err"
fi

passed=$(grep -c -E '^--- PASS' "$log" || true)
failed=$(grep -c -E '^--- FAIL' "$log" || true)
echo "go shim: $passed passed, $failed failed (go test -race and GOMAXPROCS=1 go test, example included; host death with sup_static; README install recipes; go vet and gofmt clean)"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
