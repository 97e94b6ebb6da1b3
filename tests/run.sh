#!/usr/bin/env bash
# Builds sup and runs every test: once plainly, once under AddressSanitizer
# and UndefinedBehaviorSanitizer. Pass --tsan to add a ThreadSanitizer run of
# the thread-heavy suites.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/deps.sh

passed=0
failed=0
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
  return $rc
}

status=0
SUITES=()
run_suite build || status=1
run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false || status=1
if [ "${1:-}" = "--tsan" ]; then
  SUITES=(control stress process timeouts)
  run_suite build-tsan -Db_sanitize=thread -Db_lundef=false || status=1
fi

echo "sup: $passed passed, $failed failed"
exit $status
