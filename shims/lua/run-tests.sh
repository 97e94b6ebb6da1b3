#!/usr/bin/env bash
# Runs every check of the Lua shim against an already-built meson build dir
# of the repo (absolute, or relative to the repo root): installs lua5.4, its
# headers, luv and valgrind from Debian if missing, makes sure the build dir
# has found lua5.4 (reconfiguring it if it was set up before the headers were
# installed), then runs meson's "lua" suite.
# Usage: shims/lua/run-tests.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: shims/lua/run-tests.sh BUILD_DIR}

bash tests/deps.sh --only lua5.4 liblua5.4-dev lua-luv luarocks valgrind binutils

if ! meson introspect "$build" --targets | grep -q 'shims/lua/sup.so"'; then
  meson setup --reconfigure "$build" >/dev/null
fi
meson compile -C "$build" >/dev/null

rc=0
meson test -C "$build" --suite lua --print-errorlogs || rc=$?
log="$build/meson-logs/testlog.json"
python3 - "$log" <<'PY'
import json, sys
ok = bad = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"] in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r["result"] == "SKIP": skipped += 1
    else: bad += 1
print(f"shims/lua: {ok} passed, {bad} failed, {skipped} skipped")
PY
exit $rc
