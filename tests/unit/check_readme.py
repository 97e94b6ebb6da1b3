"""The README's C code, compiled and run against the build tree, so that it
cannot rot: the full example program, the live-output loop wrapped in a
program that checks it neither loses output nor spins while stderr has data,
and the terminal example it links to (examples/terminal.c), whose transcript
is checked.
Usage: check_readme.py README.md BUILD_ROOT [SANITIZE]"""
import os
import re
import subprocess
import sys
import tempfile

readme, build_root = sys.argv[1], sys.argv[2]
sanitize = sys.argv[3] if len(sys.argv) > 3 else "none"
blocks = re.findall(r"```c\n(.*?)```", open(readme).read(), re.S)
program = next(b for b in blocks if "int main" in b)
terminal = open(os.path.join(os.path.dirname(os.path.abspath(readme)), "examples", "terminal.c")).read()
if "examples/terminal.c" not in open(readme).read():
    sys.exit("README.md no longer links examples/terminal.c: update this check")
loop = next(b for b in blocks if "sup_output_read" in b and "int main" not in b)

env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(build_root, "meson-uninstalled"))
flags = subprocess.run(["pkg-config", "--cflags", "--libs", "sup"], env=env, check=True,
                       capture_output=True, text=True).stdout.split()
rpath = [f"-Wl,-rpath,{f[2:]}" for f in flags if f.startswith("-L")]
extra = [] if sanitize == "none" else [f"-fsanitize={sanitize}"]

LOOP_HOST = r"""
#include <stdio.h>
#include <sup.h>
static int wakeups;
/* Counts the loop's waits: a loop that spins waits thousands of times. */
#define sup_output_wait(...) (++wakeups, sup_output_wait(__VA_ARGS__))
int main(void) {
  sup_proc *p;
  if (sup_spawn("{\"argv\": [\"sh\", \"-c\", \"echo err >&2; echo one; sleep 0.3; echo two; sleep 0.3\"]}", &p) != 0)
    return 2;
%s
  sup_release(p);
  fprintf(stderr, "wakeups: %%d\n", wakeups);
  return wakeups < 50 ? 0 : 3;
}
"""

with tempfile.TemporaryDirectory() as work:
    for name, source in [("example", program), ("loop", LOOP_HOST % loop), ("terminal", terminal)]:
        c = os.path.join(work, name + ".c")
        with open(c, "w") as f:
            f.write(source)
        exe = os.path.join(work, name)
        subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", *extra, c, *flags, *rpath, "-o", exe], check=True)
        # The example runs `make -j8`: in an empty directory make fails fast.
        r = subprocess.run([exe], cwd=work, capture_output=True, timeout=60)
        if r.returncode != 0:
            sys.exit(f"{name}: exit {r.returncode}\n{r.stdout.decode()}\n{r.stderr.decode()}")
        if name == "example" and b'"outcome": "exited"' not in r.stdout:
            sys.exit(f"example: no result JSON in its output:\n{r.stdout.decode()}")
        transcript = b"name? sup\r\nhello sup\r\non a terminal\r\n[exited]\n"
        if name == "terminal" and r.stdout != transcript:
            sys.exit(f"terminal: printed {r.stdout!r}, not {transcript!r}")
        if name == "loop" and r.stdout != b"one\ntwo\n":
            sys.exit(f"loop: printed {r.stdout!r}, not b'one\\ntwo\\n'")
        print(f"{name}: ok ({r.stderr.decode().strip().splitlines()[-1] if r.stderr else 'no stderr'})")
