"""subprocess's convenience functions over sup's Popen and run.

Each is subprocess's own definition with sup's Popen/run underneath, so the
keywords, the return values and the exceptions (subclasses of subprocess's)
are the same; sup's keywords (idle_timeout, max_runtime, ...) pass through.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from ._errors import CalledProcessError
from ._popen import Popen, run
from ._spec import PIPE, STDOUT


def call(*popenargs: Any, timeout: Optional[float] = None, **kwargs: Any) -> int:
    """Run the command, wait for it, return its returncode (subprocess.call).

    A ``timeout`` (or any other exception while waiting) kills the child's
    group and re-raises.
    """
    kwargs.setdefault("tty_foreground", True)  # it waits: the child may read the terminal
    with Popen(*popenargs, **kwargs) as p:
        try:
            return p.wait(timeout=timeout)
        except BaseException:
            p.kill()
            raise


def check_call(*popenargs: Any, **kwargs: Any) -> int:
    """:func:`call`, raising :class:`sup.CalledProcessError` for a returncode
    other than 0 (subprocess.check_call); returns 0."""
    retcode = call(*popenargs, **kwargs)
    if retcode:
        cmd = kwargs.get("args")
        if cmd is None:
            cmd = popenargs[0]
        raise CalledProcessError(retcode, cmd)
    return 0


def check_output(*popenargs: Any, timeout: Optional[float] = None, **kwargs: Any) -> Any:
    """The child's stdout (bytes, or str in text mode); raises
    :class:`sup.CalledProcessError` for a returncode other than 0
    (subprocess.check_output). Every byte is kept unless ``max_output``."""
    for kw in ("stdout", "check"):
        if kw in kwargs:
            raise ValueError(f"{kw} argument not allowed, it will be overridden.")
    if "input" in kwargs and kwargs["input"] is None:
        # As subprocess: input=None means "no input", not "inherit stdin".
        text = kwargs.get("universal_newlines") or kwargs.get("text") or kwargs.get("encoding") or kwargs.get("errors")
        kwargs["input"] = "" if text else b""
    return run(*popenargs, stdout=PIPE, timeout=timeout, check=True, **kwargs).stdout


def getstatusoutput(
    cmd: Any, *, encoding: Optional[str] = None, errors: Optional[str] = None
) -> Tuple[int, str]:
    """(exitcode, output) of ``cmd`` run by the shell, stderr merged into
    stdout, one trailing newline removed (subprocess.getstatusoutput)."""
    try:
        data = check_output(cmd, shell=True, text=True, stderr=STDOUT, encoding=encoding, errors=errors)
        exitcode = 0
    except CalledProcessError as ex:
        data = ex.output
        exitcode = ex.returncode
    if data[-1:] == "\n":
        data = data[:-1]
    return exitcode, data


def getoutput(cmd: Any, *, encoding: Optional[str] = None, errors: Optional[str] = None) -> str:
    """The output of ``cmd`` run by the shell (subprocess.getoutput)."""
    return getstatusoutput(cmd, encoding=encoding, errors=errors)[1]
