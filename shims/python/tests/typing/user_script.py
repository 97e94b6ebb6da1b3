# pyright: strict
"""Code as a user writes it: run-tests.sh type-checks this file with
mypy --strict and pyright (strict); it must pass both unchanged. It is not
run."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import sup


def env_as_subprocess_takes_it() -> None:
    clean: dict[str, str] = {k: v for k, v in os.environ.items() if k != "HOME"}
    sup.run(["env"], env=clean)
    sup.run(["env"], env=os.environ)
    sup.run(["env"], env={"PATH": "/bin"})
    sup.run([b"env"], env={b"PATH": b"/bin"})
    sup.run(["env"], env={"PATH": Path("/bin")})
    changes: dict[str, str | None] = {"HOME": None, "LANG": "C"}
    sup.run(["env"], env_update=changes)
    sup.run(["env"], env_update=os.environ)
    sup.Popen(["env"], env=dict(os.environ)).wait()


def swapped_from_subprocess() -> int:
    r = sup.run(["git", "status"], capture_output=True, text=True, check=False, timeout=30)
    text: str = r.stdout
    code: int = r.returncode
    print(text, code, r.result.outcome, r.result.stdout_omitted)
    try:
        sup.run("exit 3", shell=True, check=True)
    except subprocess.CalledProcessError as e:
        print(e.returncode)
    except subprocess.TimeoutExpired as e:
        print(e.timeout)
    sup.run(["cat"], input="text", text=True, stdout=sup.DEVNULL)
    sup.run(["cat"], input=b"bytes", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sup.run([sys.executable, Path("script.py")], stdin=subprocess.DEVNULL)

    with sup.Popen(["sort"], stdin=sup.PIPE, stdout=sup.PIPE, text=True) as p:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write("b\na\n")
        p.stdin.close()
        for line in p.stdout:
            print(line.rstrip())
    rc: int | None = p.poll()
    out, err = sup.Popen(["ls"], stdout=sup.PIPE).communicate(timeout=5)
    print(out, err, rc)
    p2 = sup.Popen(["sleep", "9"], idle_timeout=5.0)
    p2.terminate()
    p2.kill()
    final: int = p2.wait()
    result: sup.Result | None = p2.result
    print(final, result)
    return final


def live_output_with_gaps() -> None:
    with sup.Popen(["seq", "1", "1000000"], stdout=sup.PIPE, max_output=4096) as p:
        assert p.stdout is not None
        while True:
            try:
                for line in p.stdout:
                    print(line)
                break
            except sup.OutputGap as gap:
                print("skipped", gap.skipped)


def sup_extras() -> None:
    r = sup.run(["make"], idle_timeout=30.0, first_output_timeout=5.0, max_runtime=600.0,
                grace=2.0, signal="INT", max_output=1 << 20, contain="auto", stdout=sup.INHERIT)
    if r.outcome is sup.Outcome.IDLE_TIMEOUT and r.result.phase == "first_output":
        print("never started talking")
    with sup.Popen(["vim"], pty=(40, 120), stdin=sup.PIPE, stdout=sup.PIPE) as p:
        p.resize(50, 132)
        p.send_signal(28)
        p.interrupt()
        for chunk in p.iter_output("stdout"):
            print(len(chunk))


async def with_asyncio() -> int:
    r = await sup.run_async(["true"], capture_output=True)
    async with sup.Popen(["sleep", "1"]) as p:
        async for chunk in p.aiter_output("stdout"):
            print(chunk)
        rc: int = await p.wait_async()
    return r.returncode + rc



def as_subprocess_code_spells_it() -> str:
    p: sup.Popen[bytes] = sup.Popen(["true"], stdin=sup.PIPE, close_fds=True, shell=False)
    assert p.stdin is not None
    fd: int = p.stdin.fileno()
    print(fd, p.wait())
    rc: int = sup.call(["true"]) + sup.check_call(["true"])
    status, text = sup.getstatusoutput("echo hi")
    out: bytes = sup.check_output(["echo", "x"])
    return f"{rc} {status} {text} {out!r} {sup.getoutput('echo a')}"


def with_libsup_04(log_path: str) -> bool:
    with open(log_path, "wb") as log:
        r = sup.run(["true"], stdout=log, stderr=sup.STDOUT, pass_fds=[], restore_signals=False,
                    limits=sup.Limits(open_files=64), sandbox=sup.Sandbox(tmp=True),
                    input_wait_timeout=5.0)
    with sup.Popen(["cat"], stdin=sup.PIPE, limits={"core_dump": False}) as p:
        waiting: bool = p.input_wanted()
    return r.returncode == 0 and not waiting


def result_04_fields() -> str:
    res = sup.run(["sh", "-c", "read x"], limits={"cpu_seconds": 1},
                  input_wait_timeout=1.0).result
    waited: bool | None = res.waiting_for_input
    hit: str | None = res.limit
    if res.limit == "cpu" or res.phase == "input":
        print("ended by a limit", hit, waited)
    conf: sup.Confined | None = res.confined
    if conf is not None:
        for name, entry in conf.limits.items():
            applied: sup.LimitApplied = entry
            print(name, applied.value, applied.mechanism, applied.scope, applied.reason)
        if conf.sandbox is not None:
            print(conf.sandbox.landlock_abi, conf.sandbox.not_enforced)
        if conf.user is not None:
            print(conf.user.uid, conf.user.groups)
    fg: bool | None = res.tty_foreground
    return f"{fg} {res.tty_refused} {res.host_death} {res.stdout_tee_error} {res.stderr_tee_error}"


async def like_asyncio_subprocess() -> bytes:
    proc = await sup.create_subprocess_exec("cat", stdin=sup.PIPE, stdout=sup.PIPE, idle_timeout=30.0)
    out, _ = await proc.communicate(b"x")
    rc: int = await proc.wait()
    assert proc.stdout is None or isinstance(proc.stdout, asyncio.StreamReader)
    return (out or b"") + bytes([rc])

if __name__ == "__main__":
    env_as_subprocess_takes_it()
    swapped_from_subprocess()
    live_output_with_gaps()
    asyncio.run(with_asyncio())
    as_subprocess_code_spells_it()
    asyncio.run(like_asyncio_subprocess())
    with_libsup_04("/dev/null")
    result_04_fields()
