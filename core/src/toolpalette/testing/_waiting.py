"""Waiting for what another thread or task makes true, under a deadline, never a fixed sleep."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

__all__ = ["await_until", "wait_until"]

_POLL_INTERVAL = 0.005  # seconds between two looks of wait_until and await_until


def _timed_out(predicate: Callable[[], Any], timeout: float, message: str | None) -> AssertionError:
    what = message or getattr(predicate, "__qualname__", repr(predicate))
    return AssertionError(f"not true within {timeout:g} s: {what}")


def wait_until(
    predicate: Callable[[], Any], *, timeout: float = 5.0, message: str | None = None
) -> Any:
    """Call ``predicate`` until it returns something true, and return that.

    For a condition another thread makes true (a worker that ends, a report that
    arrives); the calling thread sleeps between looks, so inside a coroutine use
    [`await_until()`][toolpalette.testing.await_until], which lets the event loop run.
    The deadline is a ceiling, not a delay: the wait ends as soon as the condition
    holds.

    Raises:
        AssertionError: the condition still did not hold after ``timeout`` seconds; the
            message is ``message`` or the predicate's name.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _timed_out(predicate, timeout, message)
        time.sleep(_POLL_INTERVAL)


async def await_until(
    predicate: Callable[[], Any], *, timeout: float = 5.0, message: str | None = None
) -> Any:
    """Like `wait_until()`, from a coroutine: the event loop runs between looks.

    For a condition a task or a callback on the same loop makes true, such as a call
    pausing for its approval (``await await_until(thinker.pending_approvals)``).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _timed_out(predicate, timeout, message)
        await asyncio.sleep(_POLL_INTERVAL)
