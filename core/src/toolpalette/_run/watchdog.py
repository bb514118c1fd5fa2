"""The loop-stall watchdog: names the async tool that holds an event loop's thread.

An async tool that calls blocking code (``time.sleep``, a sync HTTP client, a CPU-bound
loop) stops every coroutine on its loop, other agents' calls included, and no timer can
fire until it lets go. Nothing in-process can take the thread back from it; what can be
done is to say who holds it, while it happens.

A daemon thread looks at every thread's stack each :data:`INTERVAL` seconds. A thread
whose stack holds one step of an async tool (its first step, run eagerly by
:func:`~toolpalette._run.running.start_async`, or a later one, run by the resuming
awaitable) is inside that step now: a step never spans a suspension. When two looks
find the same step still running :data:`STALL_AFTER` seconds apart, the watchdog logs,
once per step, the tool's name and the blocked thread's stack (logger
``toolpalette.executor``). The calls themselves pay nothing for this; the executor
answers a call that came back past its deadline 504 (see ``Executor._run``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from types import FrameType
from typing import Any, Final

from toolpalette._run import running as _running

__all__ = ["INTERVAL", "STALL_AFTER", "ensure_started"]

logger = logging.getLogger("toolpalette.executor")

STALL_AFTER: Final = 0.1
"""Seconds one step of an async tool may hold its thread before it is logged."""
INTERVAL: Final = 0.05
"""Seconds between two looks of the watchdog."""
_DEPTH: Final = 200
"""Frames looked at per stack, innermost first (a step is near the top)."""

_STEP_CODES: Final = frozenset({_running.start_async.__code__, _running.step_code()})
_lock = threading.Lock()
_started = False


def ensure_started() -> None:
    """Start the watchdog thread, once per process (cheap after the first call)."""
    global _started
    if _started:
        return
    with _lock:
        if not _started:
            threading.Thread(target=_watch, name="toolpalette-watchdog", daemon=True).start()
            _started = True


class _Seen:
    """One thread's step as last seen: its frame, its step count, since when, reported."""

    __slots__ = ("frame", "reported", "since", "step")

    def __init__(self, frame: FrameType, step: Any, since: float) -> None:
        self.frame, self.step, self.since, self.reported = frame, step, since, False


def _watch() -> None:
    seen: dict[int, _Seen] = {}
    me = threading.get_ident()
    while True:
        time.sleep(INTERVAL)
        try:
            _look(seen, me)
        except Exception:  # pragma: no cover - the watchdog must outlive any surprise
            logger.exception("the loop-stall watchdog failed a look; it keeps watching")


def _look(seen: dict[int, _Seen], me: int) -> None:
    now = time.monotonic()
    frames = sys._current_frames()
    for ident in list(seen):
        if ident not in frames:
            del seen[ident]
    for ident, top in frames.items():
        if ident == me:
            continue
        step = _step_in(top)
        if step is None:
            seen.pop(ident, None)
            continue
        frame, count = step
        last = seen.get(ident)
        if last is None or last.frame is not frame or last.step != count:
            seen[ident] = _Seen(frame, count, now)
        elif not last.reported and now - last.since >= STALL_AFTER:
            last.reported = True
            _report(frame, top, now - last.since)


def _step_in(top: FrameType) -> tuple[FrameType, Any] | None:
    """The frame of the async tool step running on this stack, with its step count."""
    frame: FrameType | None = top
    for _ in range(_DEPTH):
        if frame is None:
            return None
        if frame.f_code in _STEP_CODES:
            return frame, frame.f_locals.get("steps", 0)
        frame = frame.f_back
    return None


def _report(frame: FrameType, top: FrameType, held: float) -> None:
    name = frame.f_locals.get("name")
    logger.warning(
        "tool %r has held its event loop's thread for %.2f s (blocking code in an async "
        "tool?); every coroutine on that loop waits. Where it is:\n%s",
        name if isinstance(name, str) else "(an awaited policy or approver)",
        held,
        "".join(traceback.format_stack(top)),
    )
