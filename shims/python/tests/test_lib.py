"""Finding libsup: SUP_LIBRARY, then pkg-config, then the system loader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sup

CODE = "import sup; print(sup.library_path())"


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("SUP_LIBRARY", "PKG_CONFIG_PATH")}
    base.update(env)
    return subprocess.run(
        [sys.executable, "-c", CODE], env=base, capture_output=True, text=True, timeout=60
    )


def test_found_through_pkg_config() -> None:
    pc = os.environ.get("PKG_CONFIG_PATH")
    if not pc:
        import pytest

        pytest.skip("PKG_CONFIG_PATH not set")
    out = _run({"PKG_CONFIG_PATH": pc})
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == Path(sup.library_path()).resolve()


def test_sup_library_wins() -> None:
    path = sup.library_path()
    out = _run({"SUP_LIBRARY": path, "PKG_CONFIG_PATH": "/nonexistent"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == path


def test_one_clear_message_when_missing(tmp_path: Path) -> None:
    out = _run({"SUP_LIBRARY": str(tmp_path / "libsup.so.0")})
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("sup.LibraryNotFoundError: sup: cannot load libsup")
    assert "SUP_LIBRARY" in last and "meson install" in last


def test_import_works_without_the_library(tmp_path: Path) -> None:
    code = "import sup; print(sup.Outcome.ABORTED.value)"
    env = {k: v for k, v in os.environ.items() if k not in ("PKG_CONFIG_PATH",)}
    env["SUP_LIBRARY"] = str(tmp_path / "missing.so")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "aborted\n"
