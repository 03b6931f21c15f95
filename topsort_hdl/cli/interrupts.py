"""Interrupts end a command the way Ctrl-C does: SIGINT, SIGTERM (what ``timeout`` and job
schedulers send) and SIGHUP (a closed terminal) raise :class:`Interrupted`, a
``KeyboardInterrupt``, so that the commands' cleanup runs (a simulation's processes ended, a
half-written output removed) before :func:`main <.main.main>` prints one line and exits with
128 + the signal's number."""

import signal
import sys
import threading
import warnings
from contextlib import contextmanager

from .options import PROG

__all__ = ["ENDING_SIGNALS", "Interrupted", "signals_interrupt", "held_signals", "interrupted"]

ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """Raised by :func:`signals_interrupt`'s handler: the signal ``signum`` arrived."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _silence_unused_elaboratables():
    # Amaranth warns, from __del__, of every elaboratable never elaborated (several lines
    # each, 87 for an interrupted u280 kernel): after an interrupt, work abandoned, not a bug.
    hdl = sys.modules.get("amaranth.hdl")
    if hdl is not None:
        warnings.simplefilter("ignore", hdl.UnusedElaboratable)


@contextmanager
def signals_interrupt():
    """Within it (in the main thread), each of :data:`ENDING_SIGNALS` raises
    :class:`Interrupted`, once: a repeat while the first unwinds is ignored, so that cleanup
    completes. A signal the caller ignores stays ignored (``nohup``, a shell's background
    job), and one it handles stays its own; the previous handlers are back on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []

    def interrupt(signum, frame):
        if received:
            return
        received.append(signum)
        if _held["depth"]:
            _held["pending"] = signum       # raised as the held block ends
            return
        _silence_unused_elaboratables()    # before any elaboratable is freed by the unwinding
        raise Interrupted(signum)

    previous = {}
    for signum in ENDING_SIGNALS:
        if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler):
            previous[signum] = signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# Whether an interrupt waits (held_signals), and the signal that came meanwhile. Python runs
# signal handlers in the main thread only, between two of its instructions.
_held = {"depth": 0, "pending": None}


@contextmanager
def held_signals():
    """Within it (and :func:`signals_interrupt`), an ending signal waits: it interrupts as the
    block ends, so that what the block makes (a file, and the name that removes it) is whole."""
    _held["depth"] += 1
    try:
        yield
    finally:
        _held["depth"] -= 1
        if not _held["depth"] and _held["pending"] is not None:
            signum, _held["pending"] = _held["pending"], None
            _silence_unused_elaboratables()
            raise Interrupted(signum)


def interrupted(interrupt):
    """Say, in one line, that ``interrupt`` (a ``KeyboardInterrupt``) ended the command;
    return the exit status, 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
    _silence_unused_elaboratables()
    signum = getattr(interrupt, "signum", signal.SIGINT)
    how = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    print(f"{PROG}: interrupted{how}", file=sys.stderr)
    return 128 + signum
