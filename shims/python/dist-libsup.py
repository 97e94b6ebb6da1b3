#!/usr/bin/env python3
"""meson dist script: copy the library's sources (lib/, include/, LICENSE)
into the sdist's libsup/, so that a wheel can be built from the sdist alone."""

import os
import shutil
import sys

root = sys.argv[1]
dest = os.path.join(os.environ["MESON_DIST_ROOT"], "libsup")
if os.path.abspath(root) != os.path.abspath(dest):
    os.makedirs(dest, exist_ok=True)
    for sub in ("lib", "include"):
        shutil.copytree(os.path.join(root, sub), os.path.join(dest, sub), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("meson.build"))
    lic = os.path.join(root, "LICENSE")
    if os.path.exists(lic):
        shutil.copy(lic, dest)
