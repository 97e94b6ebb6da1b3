#!/usr/bin/env bash
# Runs every check of the Python shim against an already-built meson build dir:
#   shims/python/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# Installs what is missing (ripgrep from Debian, mypy from PyPI), type-checks
# the package with mypy --strict, then runs the pytest suite. The package is
# used from the checkout through PYTHONPATH; libsup through the build dir's
# pkg-config file, as a user's PKG_CONFIG_PATH would find it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

# shims/build-dir.sh: BUILD_DIR into $build and its pkg-config dir $pcdir.
source "$repo/shims/build-dir.sh"

python=${PYTHON:-python3}

# ripgrep: the seed scenario replays an abort of a real rg.
if ! command -v rg >/dev/null; then
  bash "$repo/tests/deps.sh" --only ripgrep
fi
"$python" -m pytest --version >/dev/null 2>&1 ||
  "$python" -m pip install -q --disable-pip-version-check pytest
"$python" -m mypy --version >/dev/null 2>&1 ||
  "$python" -m pip install -q --disable-pip-version-check mypy

export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PYTHONPATH=$here/src${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPYCACHEPREFIX=$build/python-shim/pycache  # keep the checkout clean
unset SUP_LIBRARY

cd "$here"
"$python" -m mypy --strict --cache-dir "$build/python-shim/mypy-cache" src/sup

rc=0
"$python" -m pytest -p no:cacheprovider -q -rs tests || rc=$?
if [ "$rc" -eq 5 ]; then
  echo "run-tests.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
