#!/usr/bin/env bash
# Builds sup and runs every test: the C suites plainly (gcc), under ASan+UBSan
# and (with --tsan) under TSan, plainly again when built with clang; the
# fuzzers for a minute each (tests/fuzz/run.sh, with clang); then each shim
# with its own toolchain and runner: Rust (cargo test, clippy), Go (go vet, go
# test -race and with GOMAXPROCS=1), Lua (meson's lua suite, run with the C
# suites above: Lua 5.4, 5.3, 5.1 and LuaJIT, valgrind, headless Neovim),
# Python (mypy --strict, pytest) and Node (an offline install of the npm
# tarball, tsc --strict, node --test).
#
# Each pass builds only what its tests run (tests/targets.py): the plain and
# ASan passes everything, TSan and clang their suites; the tests' own code is
# compiled without optimization (tests/meson.build), the sanitized library at
# -O1. The builds run one after another (they are CPU-bound), then the Rust
# and Node shims, with the fuzzers, the Go and the Python shim each in a lane
# beside them; each pass's tests start once its build is done, two passes at
# a time (they mostly wait on children and timers). The C passes' and the
# side lanes' output is shown at the end, in order.
# Ends with one line: "sup: N passed, N failed" (a meson test, a fuzzer or a
# shim's whole run counts as one).
set -euo pipefail
cd "$(dirname "$0")/.."
# Besides the build's packages, what the shims' runners would otherwise
# install while running beside each other (one apt-get at a time).
bash tests/deps.sh ripgrep python3-venv make libc6-dev
start=$SECONDS
# No build reuses objects from an earlier run through ccache's cache (meson
# and meson-python wrap the compiler in it when they find it): each run
# compiles what it builds, as on a new machine. (The Lua rock check shares
# objects between its own two builds, in a cache of its own.)
export CCACHE_DISABLE=1

tsan=false
[ "${1:-}" = "--tsan" ] && tsan=true

passed=0
failed=0
failures=()
count() {  # count NAME RC
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$1"); fi
}
stamp() { printf '[%3d:%02d] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

# The passes: build dir, the compilers, meson setup's options, the tests
# (as `meson test` takes them; empty: all of them).
TSAN_TESTS=(start engine-start zero-timeout control stress process timeouts abi reliability pty direct-read
            expire input-wait hardening tee-writer routing fds)
CLANG_TESTS=(--no-suite bench --no-suite lua)
# In pairs, as the test passes run: plain with TSan, ASan with clang.
passes=(build)
$tsan && passes+=(build-tsan)
passes+=(build-asan build-clang)
declare -A pass_cc=([build]=gcc [build-asan]=gcc [build-tsan]=gcc [build-clang]=clang)
# Every pass compiles the library in unity files of eight sources or so
# (tests/unity_size.sh; each source parses much the same standard headers,
# half of its compile time);
# the shims' builds compile it a source at a time, as a user's build does.
# The ASan pass keeps line tables only (-g1: what a sanitizer's report
# shows) and no variable tracking, which at -O1 under ASan+UBSan took as
# long as the rest of the compile; it also checks the standard library's
# preconditions (_GLIBCXX_ASSERTIONS: an empty optional's value, an index
# past a vector's end), as hardened distributions build it.
pass_opts() {  # pass_opts DIR: its meson setup options, one a line
  printf '%s\n' -Dunity=on "-Dunity_size=$(sh tests/unity_size.sh)"
  case $1 in
    build-asan) printf '%s\n' -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 \
                  "-Dcpp_args=-g1 -fno-var-tracking -D_GLIBCXX_ASSERTIONS" ;;
    build-tsan) printf '%s\n' -Db_sanitize=thread -Db_lundef=false ;;
  esac
}
pass_tests() {  # pass_tests DIR: its selection, one word a line
  case $1 in
    build-tsan) printf '%s\n' "${TSAN_TESTS[@]}" ;;
    build-clang) printf '%s\n' "${CLANG_TESTS[@]}" ;;
  esac
}

build_pass() {  # build_pass DIR
  local dir=$1 cc=${pass_cc[$1]} cxx opts=()
  [ "$cc" = clang ] && cxx=clang++ || cxx=g++
  mapfile -t opts < <(pass_opts "$dir")
  if [ -d "$dir" ]; then  # an earlier run's: its options may have changed since
    meson configure "$dir" "${opts[@]}" >/dev/null
  else
    CC=$cc CXX=$cxx meson setup "$dir" "${opts[@]}" >/dev/null
  fi
  local sel=()
  mapfile -t sel < <(pass_tests "$dir")
  local outs=()
  [ ${#sel[@]} -eq 0 ] || mapfile -t outs < <(python3 tests/targets.py "$dir" "${sel[@]}")
  # Quiet unless it fails: then what the compiler said.
  if ! ninja -C "$dir" "${outs[@]}" >"$dir/build.log" 2>&1; then
    grep -E -A5 'FAILED|error' "$dir/build.log" | head -n 60
    return 1
  fi
}

test_pass() {  # test_pass DIR: runs its tests into DIR/run-tests.log, returns meson's status
  local dir=$1 sel=()
  mapfile -t sel < <(pass_tests "$dir")
  meson test -C "$dir" --no-rebuild --print-errorlogs "${sel[@]}" >"$dir/run-tests.log" 2>&1
}

# Adds a finished pass's counts and shows its output.
collect() {  # collect DIR RC
  local dir=$1 rc=$2 log="$1/meson-logs/testlog.json" ok bad
  echo "===== meson test -C $dir"
  cat "$dir/run-tests.log"
  ok=$(python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["result"] in ("OK","EXPECTEDFAIL")))' "$log")
  bad=$(python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["result"] not in ("OK","EXPECTEDFAIL","SKIP")))' "$log")
  passed=$((passed + ok))
  failed=$((failed + bad))
  [ "$rc" -eq 0 ] || failures+=("meson test -C $dir")
}

status=0

# The test lane: each pass's tests start as soon as its build is done, two
# passes at a time, while the next build (and then the fuzzers and the shims)
# goes on. A build marks its directory done (.build-rc) for the lane.
test_lane() {
  local dir running=() rc
  for dir in "${passes[@]}"; do
    until [ -f "$dir/.build-rc" ]; do sleep 1; done
    [ "$(cat "$dir/.build-rc")" = 0 ] || continue
    if [ ${#running[@]} -ge 2 ]; then
      wait "${running[0]}" || true
      running=("${running[@]:1}")
    fi
    (
      stamp "testing $dir"
      rc=0
      test_pass "$dir" || rc=$?
      echo "$rc" >"$dir/.test-rc"
      stamp "tested $dir"
    ) &
    running+=($!)
  done
  wait
}
for dir in "${passes[@]}"; do rm -f "$dir/.build-rc" "$dir/.test-rc"; done
test_lane &
lane=$!
# An interrupted run ends the lane's tests too.
kill_tree() {  # kill_tree PID: the process and its descendants
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
  kill -TERM "$1" 2>/dev/null || true
}
trap 'kill_tree "$lane"' EXIT

for dir in "${passes[@]}"; do
  stamp "building $dir"
  rc=0
  build_pass "$dir" || rc=$?
  mkdir -p "$dir"
  echo "$rc" >"$dir/.build-rc"
  [ "$rc" -eq 0 ] || { count "build $dir" 1; status=1; }
done

shim() {  # shim NAME COMMAND...
  local name=$1 rc=0
  shift
  stamp "$name"
  "$@" || rc=$?
  count "$name" "$rc"
  [ "$rc" -eq 0 ] || status=1
}
# The fuzzers, the Go shim and the Python shim each in a lane of its own
# (their output shown at the end), beside Rust and Node here: much of each
# shim's run is its tests waiting on children, and a lane that ran two of
# them would end alone, on one CPU, well after the others.
shim_lane_names=("fuzz" "go shim (go vet, go test -race, GOMAXPROCS=1)" "python shim (mypy, pyright, pytest, the wheel)")
shim_lane_cmds=("bash tests/fuzz/run.sh 60" "bash shims/go/run-tests.sh build" "bash shims/python/run-tests.sh build")
mkdir -p build/shim-lane
shim_lanes=()
for i in "${!shim_lane_cmds[@]}"; do
  (
    stamp "${shim_lane_names[$i]} (output below, at the end)"
    rc=0
    ${shim_lane_cmds[$i]} >"build/shim-lane/$i.log" 2>&1 || rc=$?
    echo "$rc" >"build/shim-lane/$i.rc"
    stamp "${shim_lane_names[$i]}: done"
  ) &
  shim_lanes+=($!)
done
trap 'kill_tree "$lane"; for l in "${shim_lanes[@]}"; do kill_tree "$l"; done' EXIT
shim "rust shim (cargo test, clippy)" bash shims/rust/run-tests.sh build
shim "node shim (npm pack, offline install, tsc --strict, node --test)" bash shims/node/run-tests.sh build
for l in "${shim_lanes[@]}"; do wait "$l" || true; done
for i in "${!shim_lane_cmds[@]}"; do
  echo "===== ${shim_lane_names[$i]}"
  cat "build/shim-lane/$i.log" 2>/dev/null || true
  rc=$(cat "build/shim-lane/$i.rc" 2>/dev/null || echo 1)
  count "${shim_lane_names[$i]}" "$rc"
  [ "$rc" -eq 0 ] || status=1
done

# The C test passes, in order, once the lane has run them all.
wait "$lane" || true
for dir in "${passes[@]}"; do
  [ -f "$dir/.test-rc" ] || continue
  rc=$(cat "$dir/.test-rc")
  collect "$dir" "$rc"
  [ "$rc" -eq 0 ] || status=1
done

stamp "done"
[ ${#failures[@]} -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "sup: $passed passed, $failed failed"
exit $status
