"""Ending stdio servers when the host gets a signal that would kill it without ``atexit``."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Final

__all__ = ["GRACE", "group_alive", "install", "installed", "track", "untrack"]

GRACE: Final = 1.0
"""Seconds the servers' groups are given to end after SIGTERM, on a fatal signal."""

_HANDLED: Final = ("SIGTERM", "SIGHUP", "SIGINT")
_lock = threading.Lock()
_groups: set[int] = set()
_previous: dict[int, Any] = {}


def track(group: int) -> None:
    """Count ``group`` (a server's process group) among those to end on a fatal signal."""
    with _lock:
        _groups.add(group)


def untrack(group: int) -> None:
    """Forget ``group``: the server ended."""
    with _lock:
        _groups.discard(group)


def installed() -> list[int]:
    """The signals whose handler is toolpalette's (chained) now."""
    return [signum for signum in _previous if signal.getsignal(signum) is _on_signal]


def install() -> None:
    """Chain the handler on the fatal signals (see the module docstring); idempotent.

    Does nothing outside the main thread, where Python allows no handler.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    with _lock:
        for name in _HANDLED:
            signum = getattr(signal, name, None)
            if signum is None or signum in _previous:
                continue
            try:
                current = signal.getsignal(signum)
            except (ValueError, OSError):
                continue
            if current is signal.SIG_IGN or current is None:
                continue  # ignored on purpose, or set outside Python: left alone
            if signum == signal.SIGINT and current is not signal.SIG_DFL:
                continue  # KeyboardInterrupt (or the host's handler) ends through atexit
            try:
                signal.signal(signum, _on_signal)
            except (ValueError, OSError):
                continue
            _previous[signum] = current


def _on_signal(signum: int, frame: FrameType | None) -> None:
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        handler: Callable[[int, FrameType | None], Any] = previous
        handler(signum, frame)
        return
    _end_groups()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _end_groups() -> None:
    """SIGTERM every tracked group, then SIGKILL what is left after `GRACE`."""
    with _lock:
        groups = list(_groups)
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    while groups and time.monotonic() < deadline:
        groups = [g for g in groups if group_alive(g)]
        if groups:
            time.sleep(0.01)
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)


def group_alive(group: int) -> bool:
    """Whether any process of the process group ``group`` is alive."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
