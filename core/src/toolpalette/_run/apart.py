"""Validation finished apart: input that needs more than the loop's share, in the worker pool."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, final

from toolpalette._run import handoff as _handoff
from toolpalette._run import running as _running
from toolpalette._run import shaping as _shaping
from toolpalette._run.call import Refusal, refuse
from toolpalette._schema import budget as _budget
from toolpalette.errors import InvalidInputError

if TYPE_CHECKING:
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.workers import WorkerPool
    from toolpalette._tools.provider import ToolProvider

__all__ = ["Later", "validate_apart", "validate_blocking"]


@final
class Later:
    """A prepared call's input, to be validated apart (it needs more than the loop's share)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        self.raw = raw


async def validate_apart(
    provider: ToolProvider,
    later: Later,
    pool: WorkerPool,
    timeout: float,
    abort: AbortSignal | None,
) -> Any:
    """The validated input of ``later``, from a worker of ``pool`` (the loop awaits it).

    ``timeout`` is the executor's, for a tool that sets none.

    Raises:
        Refusal: 400 for invalid input, 504 past the deadline, 499, 503.
    """
    work, stop, timeout = _apart(provider, later, timeout, abort)
    outcome = await _handoff.run_sync(work, pool, timeout, abort, stop)
    return _validated(provider, outcome, timeout)


def validate_blocking(
    provider: ToolProvider,
    later: Later,
    pool: WorkerPool,
    timeout: float,
    abort: AbortSignal | None,
) -> Any:
    """`validate_apart()` for a thread without a loop: it waits for the worker.

    Raises:
        Refusal: 400 for invalid input, 504 past the deadline, 499, 503.
    """
    work, stop, timeout = _apart(provider, later, timeout, abort)
    outcome = _handoff.run_blocking(work, pool, timeout, abort, stop)
    return _validated(provider, outcome, timeout)


def _apart(
    provider: ToolProvider, later: Later, timeout: float, abort: AbortSignal | None
) -> tuple[Callable[[], Any], threading.Event, float]:
    """The worker's validation of ``later``, its stop event and its timeout."""
    if abort is not None and abort.aborted:
        raise _shaping.aborted(abort.reason or "")
    raw = later.raw
    timeout = provider.timeout or timeout
    stop = threading.Event()
    deadline = time.monotonic() + timeout

    def validate() -> Any:
        mode = _budget.validating_apart(deadline, stop)
        try:
            return provider.parse_input(raw)
        finally:
            _budget.end_mode(mode)

    return validate, stop, timeout


def _validated(provider: ToolProvider, outcome: _running.Outcome, timeout: float) -> Any:
    """How validation apart ended: the validated input, or its refusal raised."""
    kind, value = outcome
    if kind is _running.OK:
        return value
    if kind is _running.RAISED:
        if isinstance(value, InvalidInputError):
            raise Refusal(_shaping.refused_input(value), value)
        if not isinstance(value, _budget.ValidationStopped):
            raise Refusal(_shaping.shape_exception(provider.name, value), value)
        kind = _running.TIMEOUT  # the validator saw the deadline first
    if kind is _running.TIMEOUT:
        label = _shaping.name_label(provider.name)
        text = (
            f"{label} did not run: its input could not be checked within "
            f"{timeout:g} seconds. Send less input."
        )
        raise refuse(504, "timeout", text, TimeoutError(text))
    raise _shaping.run_refusal(provider, outcome, timeout)
