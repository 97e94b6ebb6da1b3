#!/usr/bin/env bash
# Runs every check of the Rust shim against an already-built meson build dir:
#   shims/rust/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# cargo's output goes to BUILD_DIR/rust-shim and rust-shim-fresh;
# BUILD_DIR/rust-shim-git holds the git recipe's repository and crates.
# Checks:
# - clippy -D warnings on every target (with the tokio feature), and rustdoc
#   -D warnings (broken links) without and with it;
# - cargo test without and with the tokio feature (unit, integration and
#   doctests), libsup found through the build dir's pkg-config file as a
#   user's PKG_CONFIG_PATH would find it, linked dynamically (the host-death
#   test among them: a shared libsup starts its sup-sentinel program);
# - two fresh cargo projects outside the checkout, each depending only on
#   `sup` as README.md's Install block says, run with `cargo run` with no
#   PKG_CONFIG_PATH, rpath or LD_LIBRARY_PATH: its `path = ...` line, linking
#   the build dir's static libsup.a (SUP_BUILD_DIR); its `git = ...` line
#   (the `bundled` feature: libsup compiled from lib/*.cpp by the cc crate),
#   fetched from a file:// repository of this checkout's files, with the
#   registry's crates from cargo's cache (nothing downloaded); each binary
#   must not need libsup.so, and must take what it supervised along when
#   killed with SIGKILL, in group and cgroup mode: with libsup linked in
#   there is no sup-sentinel program to find, and the binary runs itself as
#   the sentinel (lib/sentinel_entry.hpp).
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
  exit $r
) || rc=1

# A user's project, depending on sup as README.md's Install block says: its
# `path = ...` line (the path made this checkout's), and its `git = ...`
# line (the URL made a file:// one).
readme_dep() {  # the Install block's line that declares sup with KEY (path or git), uncommented
  awk '/^### Install/ { on = 1 } on && /^```toml/ { inside = 1; next } inside && /^```/ { exit } inside { print }' "$here/README.md" |
    sed -n "s/^#* *\(sup = { $1 = .*}\).*/\1/p" | head -1
}
path_dep=$(readme_dep path)
git_dep=$(readme_dep git)
if [ -z "$path_dep" ] || [ -z "$git_dep" ]; then
  echo "fresh cargo project (README recipes): 1 failed: no 'sup = { path = ...' or '# sup = { git = ...' line in README.md's Install block" | tee -a "$log"
  rc=1
  path_dep='sup = { path = "" }' git_dep='sup = { git = "" }'
fi
path_dep=$(sed "s|path = \"[^\"]*\"|path = \"$here/sup\"|" <<<"$path_dep")

# The git recipe fetches from a repository holding this checkout's files as
# they are now (committed or not), at a fixed place and with fixed dates, so
# that the same sources give the same commit and cargo's cache is reused.
# Only what cargo reads is copied: every directory holding a Cargo manifest
# (cargo looks through them all for the package `sup`), lib/ and include/
# (the `bundled` feature's sources); a change elsewhere in the checkout then
# keeps the commit, and cargo does not compile libsup again.
# Fetching a git dependency is not allowed with --offline, so the registry's
# crates come from a directory made from cargo's cache (cargo vendor
# --offline): nothing is downloaded.
gitdir=$build/rust-shim-git
rm -rf "$gitdir/sup"
mkdir -p "$gitdir/sup"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard -- lib include \
    $(git ls-files --cached --others --exclude-standard -- '*Cargo.toml' | xargs -n1 dirname | sort -u) |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$gitdir/sup" -xf -
(cd "$gitdir/sup" && git init -q && git add -A &&
  GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
  git -c user.name=run-tests -c user.email=run-tests@localhost -c commit.gpgsign=false commit -qm snapshot)
cargo vendor -q --offline "$gitdir/vendor" >/dev/null
git_dep=$(sed "s|git = \"[^\"]*\"|git = \"file://$gitdir/sup\"|" <<<"$git_dep")

app=$(mktemp -d)  # fresh cargo projects outside the checkout
trap 'rm -rf "$app"' EXIT
# project DIR DEPENDENCY_LINE: a binary crate depending on sup alone.
project() {
  mkdir -p "$1/src"
  printf '%s\n' \
    '[package]' 'name = "fresh-app"' 'version = "0.1.0"' 'edition = "2024"' '' \
    '[dependencies]' "$2" '' \
    '[workspace]' >"$1/Cargo.toml"
  cat >"$1/src/main.rs" <<'RUST'
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command as Os, Stdio};
use std::time::{Duration, Instant};

use sup::Contain;

/// Alive, and not a zombie waiting for whoever adopted it to reap it.
fn running(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

/// Run as `fresh-app host group|cgroup`: supervises a shell that starts a
/// sleep in its group, prints their pids and waits to be killed.
fn host(contain: Contain) -> Result<(), Box<dyn std::error::Error>> {
    let child = match sup::Command::new("sh").args(["-c", "sleep 60 & echo $$ $!; wait"]).contain(contain).spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
            println!("skip {e}");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let mut pids = String::new();
    BufReader::new(child.stdout()).read_line(&mut pids)?;
    print!("{pids}");
    std::io::stdout().flush()?;
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// A host killed with SIGKILL takes the tree it supervised along: the
/// sentinel is this binary, run again (libsup is linked in).
fn tree_ends_with_its_host(contain: &str) -> Result<String, Box<dyn std::error::Error>> {
    let mut host = Os::new(std::env::current_exe()?).args(["host", contain]).stdout(Stdio::piped()).spawn()?;
    let mut line = String::new();
    BufReader::new(host.stdout.take().unwrap()).read_line(&mut line)?;
    if let Some(skip) = line.strip_prefix("skip ") {
        host.wait()?;
        return Ok(format!("{contain}: not here ({})", skip.trim()));
    }
    let pids: Vec<i32> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>()?;
    assert!(pids.len() == 2 && pids.iter().all(|&p| running(p)), "the host started no shell and sleep: {line:?}");
    host.kill()?; // SIGKILL
    host.wait()?;
    let killed = Instant::now();
    while pids.iter().any(|&p| running(p)) && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!pids.iter().any(|&p| running(p)), "{contain}: the shell or its sleep {pids:?} outlived its host by 5 s");
    Ok(format!("{contain}: ended {:?} after the host", killed.elapsed()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("host") {
        return host(if args.get(2).map(String::as_str) == Some("cgroup") { Contain::Cgroup } else { Contain::Group });
    }
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
    assert_eq!(out.host_death, sup::HostDeath::Tree, "only the main process would end with the host");
    let group = tree_ends_with_its_host("group")?;
    let cgroup = tree_ends_with_its_host("cgroup")?;
    println!("fresh app: libsup {}, {out}; host killed: {group}; {cgroup}", sup::library_version());
    Ok(())
}
RUST
}
project "$app/path" "$path_dep"
# The workspace's lock: the same dependency versions, resolved offline.
cp Cargo.lock "$app/path/Cargo.lock"
project "$app/git" "$git_dep"
mkdir -p "$app/git/.cargo"
printf '%s\n' '[source.crates-io]' 'replace-with = "vendored"' '' '[source.vendored]' "directory = \"$gitdir/vendor\"" >"$app/git/.cargo/config.toml"

fresh() {  # fresh NAME DIR [SUP_BUILD_DIR value] -- CARGO_ARGS...
  local name=$1 dir=$2 sup_build=$3 out ok=1
  shift 4
  out=$(cd "$dir" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u SUP_BUILD_DIR \
          ${sup_build:+SUP_BUILD_DIR=$sup_build} CARGO_TARGET_DIR="$build/rust-shim-fresh" \
          cargo run -q "$@" 2>&1) || ok=0
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
fresh "README path recipe, static libsup.a, SUP_BUILD_DIR" "$app/path" "$build" -- --offline
# No --offline: it would refuse to fetch the git dependency at all; the
# vendored registry above keeps the build from the network all the same.
fresh "README git recipe, feature bundled" "$app/git" "" --

passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s += $1} END {print s + 0}')
echo "rust shim: $passed passed, $failed failed (cargo test, cargo test --features tokio, doctests, clippy, fresh projects from the README's path recipe (static) and git recipe (bundled), each killed with what it supervised)"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
