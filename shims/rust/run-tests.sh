#!/usr/bin/env bash
# Runs every check of the Rust shim against an already-built meson build dir:
#   shims/rust/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# libsup is found through the build dir's pkg-config file, as a user's
# PKG_CONFIG_PATH would find it; cargo's output goes to BUILD_DIR/rust-shim.
# Checks: clippy -D warnings on every target and feature, then cargo test
# without and with the tokio feature (unit, integration and doctests).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

# shims/build-dir.sh: BUILD_DIR into $build and its pkg-config dir $pcdir.
source "$repo/shims/build-dir.sh"

if ! command -v pkg-config >/dev/null; then
  bash "$repo/tests/deps.sh" --only pkg-config
fi
if ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add clippy >/dev/null 2>&1 || { echo "run-tests.sh: cargo clippy is missing" >&2; exit 1; }
fi

export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export CARGO_TARGET_DIR=$build/rust-shim
export CARGO_TERM_COLOR=never
cd "$here"
cargo fetch -q

log=$CARGO_TARGET_DIR/run-tests.log
mkdir -p "$CARGO_TARGET_DIR"
: >"$log"
cargo clippy -q --all-targets --all-features -- -D warnings
echo "clippy: clean"
rc=0
cargo test -q 2>&1 | tee -a "$log" || rc=1
cargo test -q --features tokio 2>&1 | tee -a "$log" || rc=1

passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s += $1} END {print s + 0}')
echo "rust shim: $passed passed, $failed failed (cargo test, cargo test --features tokio, doctests included; clippy clean)"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
