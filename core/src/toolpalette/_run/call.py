"""What one call is between the pipeline's steps: prepared, running, or refused."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Final, NamedTuple, final

from toolpalette._tools.result import ToolResult

if TYPE_CHECKING:
    from toolpalette._tools.provider import ToolProvider

__all__ = ["UNCHECKED", "Prepared", "Refusal", "Running", "refuse"]

Prepared = tuple["ToolProvider", Any]
"""A call past look-up, the read-only binding and validation: the provider it holds (a
tool unregistered mid-call still finishes on it) and its validated input, as the
provider's ``parse_input`` returned it."""


UNCHECKED: Final = object()
"""What a call's input is before it passed validation (its report carries the raw input)."""


class Running(NamedTuple):
    """A call whose tool did not finish at once: what the run step waits for.

    ``work`` is a sync tool's call, to run in the worker pool, or an async tool's task,
    started and still running.
    """

    provider: ToolProvider
    """The provider the call holds."""
    work: Any
    """What to wait for."""
    abort_event: threading.Event | None
    """The event the tool's own context sees set when the call is abandoned."""
    timeout: float
    """The call's deadline in seconds: the tool's own, or the executor's."""
    cap: int
    """The call's output cap in bytes: the tool's own, or the executor's."""
    structured: bool
    """Whether the tool publishes an output schema (its result then carries the object)."""
    begun: float
    """When the run began (``time.perf_counter``), for the deadline."""


@final
class Refusal(Exception):
    """A call ends here: ``result`` is what the model reads, ``error`` what the host sees.

    Internal to the pipeline: the executor turns every ``Refusal`` into its result and
    never lets one escape to a caller.
    """

    __slots__ = ("error", "result")

    def __init__(self, result: ToolResult, error: BaseException | None = None) -> None:
        super().__init__(result.code)
        self.result = result
        """The failed result (``is_error`` true, with status, code and text)."""
        self.error = error
        """The exception behind the failure, for the report; None for a plain refusal."""


def refuse(status: int, code: str, text: str, error: BaseException | None = None) -> Refusal:
    """A refusal with a failed result built from its status, code and model-readable text."""
    return Refusal(ToolResult(text, is_error=True, status=status, code=code), error)
