"""Fails when the built library exports anything but the committed list."""
import re
import subprocess
import sys

library, version_script = sys.argv[1], sys.argv[2]
with open(version_script) as f:
    text = f.read()
global_part = text.split("global:")[1].split("local:")[0]
expected = set(re.findall(r"(\w+);", global_part))
out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
exported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
exported.discard("SUP_0")
extra, missing = sorted(exported - expected), sorted(expected - exported)
if extra or missing:
    print("unexpected exports:", extra)
    print("missing exports:", missing)
    sys.exit(1)
print(f"{len(exported)} exports, all sup_*: ok")
