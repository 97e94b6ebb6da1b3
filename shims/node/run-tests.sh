#!/usr/bin/env bash
# Runs every check of the Node shim:
#   shims/node/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# It works in BUILD_DIR/node-shim, BUILD_DIR being sup's meson build dir as
# for the other shims (the addon compiles libsup from this checkout's
# sources itself; the build dir only holds the work). Steps: npm pack (the
# tarball carries libsup's sources), npm install of that tarball in a fresh
# project outside the checkout with the registry unreachable (the install
# builds the addon offline, against this machine's Node headers), tsc
# --strict --noEmit of a user-style script against the installed types
# (typescript and @types/node from npm as devDependencies; skipped, saying
# why, only when they cannot be installed), then node --test on the
# installed package.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shims/build-dir.sh: BUILD_DIR into $build (a meson build dir of sup, as
# for every shim; the addon itself compiles libsup from the sources).
source "$repo/shims/build-dir.sh"
work=$build/node-shim
mkdir -p "$work"

debs=()
command -v node >/dev/null || debs+=(nodejs libnode-dev)
command -v npm >/dev/null || debs+=(npm)
command -v make >/dev/null || debs+=(make)
command -v g++ >/dev/null || debs+=(g++)
[ -f /usr/include/cjson/cJSON.h ] || debs+=(libcjson-dev)
command -v rg >/dev/null || debs+=(ripgrep)  # the seed: an abort of a real rg
[ ${#debs[@]} -eq 0 ] || bash "$repo/tests/deps.sh" --only "${debs[@]}"
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "run-tests.sh: Node >= 18 is needed (found $(node --version))" >&2
  exit 1
fi

# The tarball, as a user would get it.
rm -f "$work"/sup-*.tgz
(cd "$here" && npm pack --silent --pack-destination "$work" >/dev/null)
tarball=$(ls "$work"/sup-*.tgz)
listing=$(tar -tzf "$tarball")
for f in package/vendor/lib/api.cpp package/vendor/lib/sup-sentinel.c package/vendor/include/sup.h \
         package/src/sup_node.c package/index.d.ts package/binding.gyp; do
  grep -qx "$f" <<<"$listing" || { echo "run-tests.sh: $f is missing from $(basename "$tarball")" >&2; exit 1; }
done

# A fresh project outside the checkout installs it with no registry to
# reach: nothing may be downloaded. Kept while the tarball is the same.
app=$work/app
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$(cat "$app/.tarball-sha256" 2>/dev/null)" != "$sum" ] || [ ! -f "$app/node_modules/sup/build/Release/sup.node" ]; then
  rm -rf "$app"
  mkdir -p "$app"
  # JOBS=max: node-gyp compiles libsup's sources on every CPU, not one.
  (cd "$app" && npm init -y >/dev/null &&
    JOBS=max npm_config_registry=http://127.0.0.1:9/ npm install --offline --no-audit --no-fund --loglevel=error "$tarball" >"$work/install.log" 2>&1) || {
    cat "$work/install.log" >&2
    echo "run-tests.sh: npm install of the tarball failed (log above)" >&2
    exit 1
  }
  echo "$sum" >"$app/.tarball-sha256"
  echo "npm install $(basename "$tarball"): built offline in a fresh project"
fi
installed=$app/node_modules/sup

# tsc --strict on a user's script, against the installed package's types.
rc=0
if [ ! -x "$here/node_modules/.bin/tsc" ] || [ ! -d "$here/node_modules/@types/node" ]; then
  (cd "$here" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null 2>&1) || true
fi
if [ -x "$here/node_modules/.bin/tsc" ] && [ -d "$here/node_modules/@types/node" ]; then
  cp "$here/test/types/user.ts" "$app/user.ts"
  if "$here/node_modules/.bin/tsc" --strict --noEmit --target es2022 --module commonjs --moduleResolution node \
       --types node --typeRoots "$here/node_modules/@types" "$app/user.ts"; then
    echo "tsc --strict --noEmit test/types/user.ts: clean"
  else
    echo "tsc --strict: test/types/user.ts does not type-check" >&2
    rc=1
  fi
else
  echo "SKIP tsc --strict: typescript and @types/node could not be installed from npm (the registry is unreachable?)"
fi

cd "$here"
SUP_NODE_PACKAGE=$installed node --expose-gc --test --test-reporter=spec --test-timeout=60000 test/ || rc=1
exit $rc
