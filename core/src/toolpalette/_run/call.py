"""What one call is between the pipeline's steps: admitted, or refused.

A step that lets a call through returns an :class:`Admitted` (the provider the call
holds and its validated input); a run that must be waited for is a :class:`Running`; a
step that stops a call raises a :class:`Refusal` carrying the result the model reads
and the exception behind it, for the failure report. Every
way a call can end short of success (unknown name, read-only binding, invalid input,
policy, deadline, busy pool, abort, a raising tool, oversized output) is one
``Refusal``; the executor catches it in one place and reports it there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

from toolpalette._tools.result import ToolResult

if TYPE_CHECKING:
    import threading

    from toolpalette._tools.provider import ToolProvider

__all__ = ["Admitted", "Refusal", "Running", "refuse"]


@final
class Admitted:
    """A call that passed look-up, the read-only binding and validation."""

    __slots__ = ("provider", "value")

    def __init__(self, provider: ToolProvider, value: Any) -> None:
        self.provider = provider
        """The provider the call holds (a tool unregistered mid-call still finishes on it)."""
        self.value = value
        """The validated input, as the provider's ``parse_input`` returned it."""


@final
class Running:
    """A call whose tool did not finish at once: what the run step waits for.

    ``work`` is a sync tool's call, to run in the worker pool, or an async tool that
    suspended in its first step (``running.Suspended``), to continue in a task.
    """

    __slots__ = ("abort_event", "begun", "cap", "provider", "timeout", "work")

    def __init__(
        self,
        provider: ToolProvider,
        work: Any,
        abort_event: threading.Event | None,
        timeout: float,
        cap: int,
        begun: float,
    ) -> None:
        self.provider = provider
        self.work = work
        self.abort_event = abort_event
        """The event the tool's own context sees set when the call is abandoned."""
        self.timeout = timeout
        """The call's deadline in seconds: the tool's own, or the executor's."""
        self.cap = cap
        """The call's output cap in bytes: the tool's own, or the executor's."""
        self.begun = begun
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
