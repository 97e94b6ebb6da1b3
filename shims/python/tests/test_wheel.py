"""The wheel needs nothing: built from this checkout (libsup compiled from
its sources by meson-python), repaired by auditwheel (libuv and cJSON
grafted in), installed into a fresh venv, and run with no SUP_LIBRARY,
LD_LIBRARY_PATH, PKG_CONFIG_PATH or PYTHONPATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent  # shims/python
pytestmark = pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import mesonpy, auditwheel"], capture_output=True).returncode != 0,
    reason="meson-python and auditwheel are not installed (run-tests.sh installs them)",
)

CHECK = r"""
import os, sys, sup
path = sup.library_path()
r = sup.run(["sh", "-c", "echo from the wheel; exit 3"], capture_output=True, text=True)
maps = open("/proc/self/maps").read()
uv = sorted({l.split()[-1] for l in maps.splitlines() if "libuv" in l})
here = os.path.dirname(path)
sentinels = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        continue
    if exe.startswith(here + "/"):
        sentinels.append(os.path.basename(exe))
print(path, r.stdout.strip(), r.returncode, sup.__version__, ",".join(uv), ",".join(sentinels), sep="|")
"""


def _tree() -> list[str]:
    return sorted(str(p.relative_to(HERE)) for p in HERE.rglob("*") if "__pycache__" not in p.parts)


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SUP_LIBRARY", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "PYTHONPATH", "PYTHONHOME")}
    return env


def test_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    work = Path(os.environ.get("SUP_TEST_WORK") or tmp_path) / "wheel"
    shutil.rmtree(work, ignore_errors=True)
    dist, house = work / "dist", work / "wheelhouse"
    env = _clean_env()
    before = _tree()
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(dist), str(HERE)],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert _tree() == before  # no build/, .mesonpy-*/ or *.egg-info left in the checkout
    (wheel,) = dist.glob("sup-*.whl")
    assert wheel.name.endswith("-linux_x86_64.whl") or "linux" in wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "sup/libsup.so" in names and "sup/py.typed" in names and "sup/_streams.py" in names

    auditwheel = Path(sys.executable).parent / "auditwheel"
    repaired = subprocess.run(
        [str(auditwheel), "repair", "-w", str(house), str(wheel)],
        env={**env, "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}"},
        capture_output=True, text=True, timeout=300,
    )
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    (fixed,) = house.glob("sup-*manylinux*.whl")
    with zipfile.ZipFile(fixed) as z:
        grafted = [n for n in z.namelist() if n.startswith("sup.libs/")]
    assert any("libuv" in n for n in grafted) and any("libcjson" in n for n in grafted), grafted

    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env, timeout=300)
    py = venv / "bin" / "python"
    installed = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-index", "--disable-pip-version-check", str(fixed)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    out = subprocess.run([str(py), "-c", CHECK], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    path, said, code, version, uv, sentinels = out.stdout.strip().split("|")
    site = venv / "lib"
    assert Path(path).is_relative_to(site) and Path(path).name == "libsup.so", path
    assert (said, code, version) == ("from the wheel", "3", "0.3.0")
    assert "/sup.libs/libuv" in uv, uv  # the grafted copy, not the system's
    if "sup/sup-sentinel" in names:  # the library's host-death sentinel runs from the wheel
        assert sentinels.split(",") == ["sup-sentinel"], sentinels


def test_sdist_carries_the_library_sources(tmp_path: Path) -> None:
    if subprocess.run([sys.executable, "-c", "import build"], capture_output=True).returncode:
        pytest.skip("the build package is not installed (run-tests.sh installs it)")
    if shutil.which("git") is None or not (HERE.parent.parent / ".git").exists():
        pytest.skip("meson dist needs a git checkout")
    made = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(tmp_path), str(HERE)],
        env=_clean_env(), capture_output=True, text=True, timeout=600,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    (sdist,) = tmp_path.glob("sup-*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    lib = HERE.parent.parent / "lib"
    wanted = {f"libsup/lib/{p.name}" for p in lib.iterdir() if p.suffix in (".cpp", ".hpp", ".map")}
    assert wanted <= names, sorted(wanted - names)
    assert {"libsup/include/sup.h", "meson.build", "pyproject.toml", "src/sup/_popen.py"} <= names
