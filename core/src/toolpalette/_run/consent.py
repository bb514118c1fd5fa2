"""The policy step of the pipeline: allow, deny, or pause the call to ask a person.

It runs after input validation: the policy sees the validated input, and a person is
never asked about a call that would be refused anyway.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Final

from toolpalette._run import running as _running
from toolpalette._run import shaping as _shaping

if TYPE_CHECKING:
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.executor import Admission, Decision, Executor, _Ready
    from toolpalette._tools.tool import ToolContext

__all__ = ["authorize"]

_DECISIONS: Final[tuple[Decision, ...]] = ("allow", "deny", "ask")


async def authorize(
    executor: Executor, ready: _Ready, ctx: ToolContext | None, abort: AbortSignal | None
) -> Admission:
    """Ask ``executor.policy`` about a validated call; 403 on deny, pause on ask."""
    assert executor.policy is not None
    label = _shaping.name_label(ready.provider.name)
    try:
        decision = executor.policy(ready.provider, ready.value)
        if inspect.isawaitable(decision):  # an async policy
            kind, decision = await _running.run_async(decision, None, abort, None)
            if isinstance(kind, _running.Aborted):
                return _shaping.failure(499, "aborted", kind.reason), None
            if kind is _running.RAISED:
                return _shaping.failure(403, "denied", f"{label} is not permitted here."), decision
        action, reason = _decision(decision)
    except Exception as exc:
        return _shaping.failure(403, "denied", f"{label} is not permitted here."), exc
    if action == "allow":
        return ready, None
    if action == "ask":
        return await _ask(executor, ready, ctx, abort)
    return _shaping.failure(403, "denied", reason or f"{label} is not permitted here."), None


async def _ask(
    executor: Executor, ready: _Ready, ctx: ToolContext | None, abort: AbortSignal | None
) -> Admission:
    """Pause until the approver answers; the caller's abort ends the wait."""
    label = _shaping.name_label(ready.provider.name)
    if executor.approve is None:
        text = f"{label} needs a person's approval, and none can be asked here."
        return _shaping.failure(403, "approval_required", text), None
    refused = _shaping.failure(403, "denied", f"{label} was not approved.")
    try:
        answer = executor.approve(ready.provider, ready.value, ctx)
        if inspect.isawaitable(answer):
            kind, answer = await _running.run_async(answer, None, abort, None)
            if isinstance(kind, _running.Aborted):
                return _shaping.failure(499, "aborted", kind.reason), None
            if kind is _running.RAISED:
                return refused, answer
    except Exception as exc:
        return refused, exc
    return (ready, None) if answer is True else (refused, None)


def _decision(decision: Any) -> tuple[Decision, str | None]:
    """Normalize what a policy returned; anything unrecognized denies."""
    if decision is True or decision is None:
        return "allow", None
    if decision is False:
        return "deny", None
    action = decision if isinstance(decision, str) else getattr(decision, "action", None)
    reason = getattr(decision, "reason", None)
    action = getattr(action, "value", action)  # an Enum member
    for known in _DECISIONS:
        if action == known:
            return known, reason if isinstance(reason, str) else None
    return "deny", None
