"""A call's abort event, watched from the pool's event loop for callers that cannot cancel."""

from __future__ import annotations

import asyncio
import threading
from typing import Final

__all__ = ["ABORT_POLL", "AbortWatch"]

ABORT_POLL: Final = 0.1
"""Seconds between two looks at a call's abort event."""


class AbortWatch:
    """Cancels the current task once ``event`` is set, looking every `ABORT_POLL`.

    Made inside the task to cancel; `cancel()` it when the call ends.
    """

    __slots__ = ("_event", "_handle", "_loop", "_task")

    def __init__(self, event: threading.Event) -> None:
        self._event = event
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._handle: asyncio.TimerHandle | None = self._loop.call_later(ABORT_POLL, self._look)

    def _look(self) -> None:
        if self._event.is_set():
            self._handle = None
            if self._task is not None:
                self._task.cancel()
        else:
            self._handle = self._loop.call_later(ABORT_POLL, self._look)

    def cancel(self) -> None:
        """Stop watching (the call ended)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
