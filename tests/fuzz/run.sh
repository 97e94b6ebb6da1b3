#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (library and harnesses under
# ASan+UBSan, the library instrumented for coverage too) in build-fuzz/ and
# runs each one for SECONDS (default 60), both at once, on a temporary copy of
# its seed corpus: the committed corpus is never written to.
#
#   bash tests/fuzz/run.sh [SECONDS]
#
# Prints one line per harness and exits non-zero if any of them crashed,
# leaked, hung or broke an invariant. The reproducer (crash-*, leak-*,
# timeout-*) is kept in build-fuzz/fuzz-crashes/HARNESS/, the full libFuzzer
# log in build-fuzz/fuzz-logs/. Replay one with:
#   build-fuzz/tests/fuzz/fuzz_spec FILE
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
case $seconds in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac
build=build-fuzz
harnesses=(fuzz_spec fuzz_capture)

if ! grep -q "subdir('fuzz')" tests/meson.build; then
  echo "fuzz: tests/meson.build has no subdir('fuzz')" >&2
  exit 2
fi

# clang and libFuzzer (Debian 12: clang-14 and libclang-rt-14-dev).
fuzzer_links() {
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
    clang++ -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null
}
if ! command -v clang++ >/dev/null || ! fuzzer_links; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -q clang libclang-rt-14-dev >/dev/null
  fi
  if ! command -v clang++ >/dev/null || ! fuzzer_links; then
    echo "fuzz: needs clang++ with libFuzzer (Debian: apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
  fi
fi

unity_size=$(sh tests/unity_size.sh)
if [ ! -d "$build" ]; then
  CC=clang CXX=clang++ meson setup "$build" \
    -Db_sanitize=address,undefined -Db_lundef=false -Dunity=on "-Dunity_size=$unity_size" \
    -Dcpp_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=all' >/dev/null
else  # an earlier run's: its unity size may no longer fit the library's sources
  meson configure "$build" "-Dunity_size=$unity_size" >/dev/null
fi
meson compile -C "$build" "${harnesses[@]}" >/dev/null
for h in "${harnesses[@]}"; do
  if [ ! -x "$build/tests/fuzz/$h" ]; then
    echo "fuzz: $build/tests/fuzz/$h was not built (is $build a clang tree?)" >&2
    exit 2
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/fuzz-logs"

pids=()
for h in "${harnesses[@]}"; do
  name=${h#fuzz_}
  mkdir -p "$work/$name" "$build/fuzz-crashes/$h"
  cp tests/fuzz/corpus/"$name"/* "$work/$name"/
  args=(-max_total_time="$seconds" -print_final_stats=1 -timeout=25 -rss_limit_mb=2048
        -artifact_prefix="$PWD/$build/fuzz-crashes/$h/")
  [ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/$h" "${args[@]}" "$work/$name" >"$build/fuzz-logs/$h.log" 2>&1 &
  pids+=($!)
done

status=0
for i in "${!harnesses[@]}"; do
  h=${harnesses[$i]}
  rc=0
  wait "${pids[$i]}" || rc=$?
  log=$PWD/$build/fuzz-logs/$h.log
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ "$rc" = 0 ]; then
    echo "$h: ${runs:-?} runs, no crash"
  else
    status=1
    artifact=$(sed -n "s/.*Test unit written to //p" "$log" | tail -n 1)
    echo "$h: CRASH after ${runs:-?} runs (exit $rc): ${artifact:-no reproducer written}; log: $log"
  fi
done
exit $status
