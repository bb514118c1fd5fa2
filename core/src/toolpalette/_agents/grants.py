"""The grant record: every admission request a model made, and what was decided."""

from __future__ import annotations

import collections
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = ["GRANT_WINDOW", "SCRIPT_CALL", "GrantLog", "GrantRecord"]

GrantDecision = Literal["granted", "already_present", "refused", "pending", "evicted", "offered"]

SCRIPT_CALL: ContextVar[tuple[str, str] | None] = ContextVar("toolpalette_script", default=None)
"""While a ``run_code`` script's call runs: that call's id and the script's call id."""


def _script_call_id() -> str | None:
    inner = SCRIPT_CALL.get()
    return inner[0] if inner is not None else None


def _script_parent() -> str | None:
    inner = SCRIPT_CALL.get()
    return inner[1] if inner is not None else None


@dataclass(frozen=True)
class GrantRecord:
    """One admission request and its outcome."""

    thinker: str
    """The thinker class (``module.QualName``)."""
    conversation: str
    """The conversation's id."""
    turn: int
    """The turn in which the model asked."""
    kind: Literal["tool", "skill", "call"]
    """What was asked for: a tool, a skill, or (for approvals) a paused call."""
    name: str
    """The tool name or full skill id asked for."""
    decision: GrantDecision
    """``granted`` (newly admitted), ``already_present`` (already there: the word the
    meta-tool's result uses too), ``refused``, ``pending`` (waiting for a human's
    approval), ``evicted`` (a kept grant dropped, the least recently used, to stay
    within ``Thinker.max_granted``), or ``offered`` (a search's destructive match: shown
    to the model, granted only for each call it makes)."""
    reason: str = ""
    """Why, for refusals and pending requests."""
    time: float = field(default_factory=time.time)
    """When it was decided (seconds since the epoch)."""
    principal: str | None = None
    """Who the request was made for: the verified principal of the MCP request it came
    in, typed (``user:SUBJECT`` or ``client:CLIENT_ID``), or None for a host's own call
    (the asking call's ``ToolContext.principal``, passed in, never read from ambient state)."""
    call_id: str | None = field(default_factory=_script_call_id)
    """The call's own id, for a call a ``run_code`` script made, or a decision made for
    one (None otherwise)."""
    parent: str | None = field(default_factory=_script_parent)
    """The id of the ``run_code`` call whose script made that call (None otherwise)."""


GRANT_WINDOW: Final = 10_000
"""The most grant records a hub keeps in memory (``hub.grants()``): the newest ones.
Every record reaches the ``toolpalette_grant`` hook, which is where an audit log keeps
them all."""


class GrantLog:
    """A thread-safe window of the newest grant records (at most `GRANT_WINDOW`).

    The host side tells the ``toolpalette_grant`` hook of each record it adds, before
    the window forgets it, so memory stays flat however many requests are decided.
    """

    def __init__(self, window: int = GRANT_WINDOW) -> None:
        self._lock = threading.Lock()
        self._records: collections.deque[GrantRecord] = collections.deque(maxlen=window)

    def add(self, record: GrantRecord) -> None:
        """Append ``record`` (the oldest one kept drops out once the window is full)."""
        with self._lock:
            self._records.append(record)

    def records(self) -> list[GrantRecord]:
        """The records kept, oldest first."""
        with self._lock:
            return list(self._records)
