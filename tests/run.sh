#!/usr/bin/env bash
# Builds sup and runs every test: the C suites plainly, under ASan+UBSan and
# (with --tsan) under TSan, plainly again when built with clang; the fuzzers
# for a minute each (tests/fuzz/run.sh, with clang); then each shim with its
# own toolchain and runner: Rust (cargo test, clippy), Go (go vet, go test
# -race and with GOMAXPROCS=1), Lua (meson's lua suite, run with the C
# suites above: Lua 5.4, 5.3, 5.1 and LuaJIT, valgrind, headless Neovim) and
# Python (mypy --strict, pytest) and Node (an offline install of the npm
# tarball, tsc --strict, node --test).
# Ends with one line: "sup: N passed, N failed" (a meson test, a fuzzer or a
# shim's whole run counts as one).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/deps.sh

passed=0
failed=0
failures=()
count() {  # count NAME RC
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$1"); fi
}

run_suite() {
  local dir=$1
  shift
  [ -d "$dir" ] || meson setup "$dir" "$@" >/dev/null
  meson compile -C "$dir" >/dev/null
  local rc=0
  meson test -C "$dir" --print-errorlogs "${SUITES[@]}" || rc=$?
  local log="$dir/meson-logs/testlog.json"
  local ok bad
  ok=$(python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["result"] in ("OK","EXPECTEDFAIL")))' "$log")
  bad=$(python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["result"] not in ("OK","EXPECTEDFAIL","SKIP")))' "$log")
  passed=$((passed + ok))
  failed=$((failed + bad))
  [ "$rc" -eq 0 ] || failures+=("meson test -C $dir")
  return $rc
}

status=0
SUITES=()
run_suite build || status=1
run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false || status=1
if [ "${1:-}" = "--tsan" ]; then
  SUITES=(start engine-start zero-timeout control stress process timeouts abi reliability pty direct-read)
  run_suite build-tsan -Db_sanitize=thread -Db_lundef=false || status=1
fi
# The library must build and pass with clang too (no sanitizer; the CLI
# and benchmark smoke runs are compiler-independent and ran above).
SUITES=(--no-suite bench --no-suite lua)
CC=clang CXX=clang++ run_suite build-clang || status=1

rc=0; bash tests/fuzz/run.sh 60 || rc=$?; count fuzz "$rc"; [ "$rc" -eq 0 ] || status=1
rc=0; bash shims/rust/run-tests.sh build || rc=$?; count "rust shim (cargo test, clippy)" "$rc"; [ "$rc" -eq 0 ] || status=1
rc=0; bash shims/go/run-tests.sh build || rc=$?; count "go shim (go vet, go test -race, GOMAXPROCS=1)" "$rc"; [ "$rc" -eq 0 ] || status=1
rc=0; bash shims/python/run-tests.sh build || rc=$?; count "python shim (mypy, pyright, pytest, the wheel)" "$rc"; [ "$rc" -eq 0 ] || status=1
rc=0; bash shims/node/run-tests.sh build || rc=$?; count "node shim (npm pack, offline install, tsc --strict, node --test)" "$rc"; [ "$rc" -eq 0 ] || status=1

[ ${#failures[@]} -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "sup: $passed passed, $failed failed"
exit $status
