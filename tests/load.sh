#!/usr/bin/env bash
# Usage: tests/load.sh N CMD [ARGS...]
# Runs CMD while the machine is busy: N busy loops and a parallel compile of
# sup's own sources (two compilers at a time, over and over), so that timing
# tests meet the load a shared CI machine gives them. Everything it starts is
# ended when CMD ends (or when this script is interrupted). Exits with CMD's
# status.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 N CMD [ARGS...]  (N busy loops and a parallel compile beside CMD)" >&2
  exit 2
fi
n=$1
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
set -m  # each background job in a process group of its own, ended whole
jobs_started=()
cleanup() {
  for pid in "${jobs_started[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$scratch"
}
cmd_pid=
trap cleanup EXIT
# CMD runs in the background and is waited for, so that a signal to this
# script is acted on at once (not after CMD ends) and ends CMD too.
trap '[ -n "$cmd_pid" ] && kill -TERM "$cmd_pid" 2>/dev/null; exit 130' INT
trap '[ -n "$cmd_pid" ] && kill -TERM "$cmd_pid" 2>/dev/null; exit 143' TERM

for _ in $(seq "$n"); do
  bash -c 'while :; do :; done' &
  jobs_started+=($!)
done

flags="-std=c++17 -O2 -I$repo/include -I$repo/lib $(pkg-config --cflags libuv libcjson 2>/dev/null)"
bash -c "while :; do
  ls '$repo'/lib/*.cpp | xargs -P 2 -I{} sh -c 'g++ $flags -c {} -o \"$scratch/\$(basename {}).o\" 2>/dev/null'
done" &
jobs_started+=($!)
set +m

"$@" &
cmd_pid=$!
status=0
wait "$cmd_pid" || status=$?
exit "$status"
