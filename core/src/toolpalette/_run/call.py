"""What one call is between the pipeline's steps: prepared, running, or refused."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NamedTuple, final

from toolpalette._tools.result import ToolResult

if TYPE_CHECKING:
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.tool import ToolContext

__all__ = ["UNCHECKED", "Approver", "CallScope", "Prepared", "Refusal", "Running", "refuse"]

Approver = Callable[["ToolProvider", Any, "ToolContext | None"], "bool | Awaitable[bool]"]
"""Asked when the policy says ``ask``; the call pauses until it answers True or False."""


@dataclass(frozen=True)
class CallScope:
    """What a turn or one call carries through the executor, passed in, never set on it.

    An executor's keywords (``offered``, ``context``, ``on_tool_error``) make its
    default scope; a thinker makes one per turn (and a variant per call), so the
    executor it keeps for its life is never written to.
    """

    offered: AbstractSet[str] | None = None
    """The names a call may reach; None: every registered name."""
    context: ToolContext | None = None
    """The caller's context (run id, thread id, user, parent) when a call gives none."""
    reporters: tuple[Callable[[Any], Any], ...] = ()
    """Callbacks given every failure report, beside the executor's hook."""
    approver: Approver | None = None
    """Who answers an ``ask`` for these calls instead of the rules' approver (None: the
    rules'); a call a person approved before it was made brings one that says yes."""


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

    __slots__ = ("error", "result", "value")

    def __init__(self, result: ToolResult, error: BaseException | None = None) -> None:
        super().__init__(result.code)
        self.result = result
        """The failed result (``is_error`` true, with status, code and text)."""
        self.error = error
        """The exception behind the failure, for the report; None for a plain refusal."""
        self.value: Any = UNCHECKED
        """The validated input, when the call was refused after validation (its report
        carries it); else `UNCHECKED`."""


def refuse(status: int, code: str, text: str, error: BaseException | None = None) -> Refusal:
    """A refusal with a failed result built from its status, code and model-readable text."""
    return Refusal(ToolResult(text, is_error=True, status=status, code=code), error)
