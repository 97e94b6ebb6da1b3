#!/usr/bin/env bash
# Runs every check of the Rust shim against an already-built meson build dir:
#   shims/rust/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# cargo's output goes to BUILD_DIR/rust-shim and BUILD_DIR/rust-shim-fresh.
# Checks:
# - clippy -D warnings on every target (with the tokio feature), and rustdoc
#   -D warnings (broken links) without and with it;
# - cargo test without and with the tokio feature (unit, integration and
#   doctests), libsup found through the build dir's pkg-config file as a
#   user's PKG_CONFIG_PATH would find it, linked dynamically; and the
#   host-death test with the `bundled` feature (libsup compiled in);
# - a fresh cargo project outside the checkout, depending only on `sup`, run
#   with `cargo run` twice with no PKG_CONFIG_PATH, rpath or LD_LIBRARY_PATH:
#   linking the build dir's static libsup.a (SUP_BUILD_DIR), and with the
#   `bundled` feature (libsup compiled from lib/*.cpp by the cc crate); each
#   binary must not need libsup.so.
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

export CARGO_TERM_COLOR=never
cd "$here"
cargo fetch -q

log=$build/rust-shim/run-tests.log
mkdir -p "$build/rust-shim"
: >"$log"
rc=0
(
  export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export CARGO_TARGET_DIR=$build/rust-shim
  unset SUP_BUILD_DIR
  r=0
  if cargo clippy -q --all-targets --features tokio -- -D warnings &&
     RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps &&
     RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps --features tokio; then
    echo "clippy and rustdoc: clean"
  else
    echo "clippy: 1 failed" | tee -a "$log"
    r=1
  fi
  cargo test -q 2>&1 | tee -a "$log" || r=1
  cargo test -q --features tokio 2>&1 | tee -a "$log" || r=1
  # A host killed with libsup compiled in (feature bundled): no sup-sentinel
  # is found from there, and the test binary runs itself as the sentinel.
  cargo test -q --features bundled --test host_death 2>&1 | tee -a "$log" || r=1
  exit $r
) || rc=1

# A user's project: a path dependency on sup and nothing else.
app=$(mktemp -d)  # a fresh cargo project outside the checkout
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/src"
printf '%s\n' \
  '[package]' 'name = "fresh-app"' 'version = "0.1.0"' 'edition = "2024"' '' \
  '[dependencies]' "sup = { path = \"$here/sup\" }" '' \
  '[features]' 'bundled = ["sup/bundled"]' '' \
  '[workspace]' >"$app/Cargo.toml"
cat >"$app/src/main.rs" <<'RUST'
use std::io::Read;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let child = sup::Command::new("sh")
        .args(["-c", "echo streamed; echo oops >&2; exit 3"])
        .idle_timeout(Duration::from_secs(30))
        .spawn()?;
    let mut stdout = child.stdout();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).map(|_| s)
    });
    let out = child.wait()?;
    assert_eq!(reader.join().unwrap()?, "streamed\n");
    assert_eq!((out.exit_code, out.stderr.as_slice()), (Some(3), &b"oops\n"[..]));
    println!("fresh app: libsup {}, {out}", sup::library_version());
    Ok(())
}
RUST
# The workspace's lock: the same dependency versions, resolved offline.
cp Cargo.lock "$app/Cargo.lock"

fresh() {  # fresh NAME [SUP_BUILD_DIR value] -- CARGO_ARGS...
  local name=$1 sup_build=$2 out ok=1
  shift 3
  out=$(cd "$app" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u SUP_BUILD_DIR \
          ${sup_build:+SUP_BUILD_DIR=$sup_build} CARGO_TARGET_DIR="$build/rust-shim-fresh" \
          cargo run -q --offline "$@" 2>&1) || ok=0
  echo "$out"
  [ "$ok" = 1 ] && grep -q '^fresh app: libsup' <<<"$out" || ok=0
  if [ "$ok" = 1 ] && readelf -d "$build/rust-shim-fresh/debug/fresh-app" | grep -q 'NEEDED.*libsup'; then
    echo "fresh-app needs libsup.so: not linked statically"
    ok=0
  fi
  if [ "$ok" = 1 ]; then
    echo "fresh cargo project ($name): 1 passed" | tee -a "$log"
  else
    echo "fresh cargo project ($name): 1 failed" | tee -a "$log"
    rc=1
  fi
}
fresh "static libsup.a, SUP_BUILD_DIR" "$build" --
fresh "feature bundled" "" -- --features bundled

passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s += $1} END {print s + 0}')
echo "rust shim: $passed passed, $failed failed (cargo test, cargo test --features tokio, doctests, clippy, host death bundled, a fresh project static and bundled)"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
