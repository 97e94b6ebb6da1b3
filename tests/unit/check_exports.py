"""Fails when the built library exports anything but the committed list."""
import re
import subprocess
import sys

library, version_script = sys.argv[1], sys.argv[2]
with open(version_script) as f:
    text = f.read()
expected = set()
for block in text.split("global:")[1:]:
    expected |= set(re.findall(r"(\w+);", block.split("local:")[0].split("}")[0]))
out = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True, text=True).stdout
exported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
exported -= {name for name in exported if name.startswith("SUP_")}  # version nodes
extra, missing = sorted(exported - expected), sorted(expected - exported)
if extra or missing:
    print("unexpected exports:", extra)
    print("missing exports:", missing)
    sys.exit(1)
print(f"{len(exported)} exports, all sup_*: ok")
