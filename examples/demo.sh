#!/usr/bin/env bash
# Builds sup and shows sup-run on two commands: one that works slowly but
# keeps talking (it is left alone), and one that falls silent (it is ended).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/deps.sh
[ -d build ] || meson setup build >/dev/null
meson compile -C build >/dev/null
sup_run=build/examples/sup-run/sup-run

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }

say '$ sup-run --idle-timeout 1s -- sh -c "for i in 1 2 3 4; do echo working $i; sleep 0.7; done"'
say '  (slow, but never silent for 1s: it runs to the end)'
"$sup_run" --idle-timeout 1s -- sh -c 'for i in 1 2 3 4; do echo working $i; sleep 0.7; done'
echo "exit status: $?"

say '$ sup-run --idle-timeout 1s --grace 2s --json build/demo-result.json -- sh -c "echo fetching; sleep 0.5; echo waiting on a lock...; sleep 600"'
say '  (falls silent: after 1s of no output it gets SIGTERM, and the result says why)'
status=0
"$sup_run" --idle-timeout 1s --grace 2s --json build/demo-result.json -- \
  sh -c 'echo fetching; sleep 0.5; echo waiting on a lock...; sleep 600' || status=$?
echo "exit status: $status (124: ended for a timeout, as GNU timeout says it)"
say 'The result it wrote (build/demo-result.json):'
python3 -m json.tool build/demo-result.json
