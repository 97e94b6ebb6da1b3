"""The signal state an interactive user's command starts with, for the CLI
tests' own process: a suite run as a background job of a non-interactive
shell (tests/load.sh) starts with SIGINT and SIGQUIT ignored, and nohup
ignores SIGHUP. sup-run and sup-timeout keep a caller's SIG_IGN on purpose
(as make and the shells do), so every command the tests start would
inherit it, and the tests that send those signals or read SigIgn would
measure the job's state, not sup-run's."""
import signal

# Python ignores these itself, and subprocess restores them in its children.
_PYTHONS_OWN = {signal.SIGPIPE, signal.SIGXFSZ}


def start_clean() -> None:
    for sig in signal.valid_signals():
        if sig in _PYTHONS_OWN or sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            if signal.getsignal(sig) != signal.SIG_IGN:
                continue
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # one the C library keeps for itself
