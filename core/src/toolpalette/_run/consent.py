"""The policy step of the pipeline: allow, deny, or pause the call to ask a person."""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from toolpalette._run import running as _running
from toolpalette._run import shaping as _shaping
from toolpalette._run.call import Approver, Refusal, refuse

if TYPE_CHECKING:
    from toolpalette._run.abort import AbortSignal
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.tool import ToolContext

__all__ = ["ALLOW", "Approver", "Decision", "Policy", "authorize", "contained", "read_decision"]


class Decision(enum.Enum):
    """A policy's answer for one call or one grant."""

    ALLOW = "allow"
    """Go ahead."""
    DENY = "deny"
    """Refuse (403, code ``denied``)."""
    ASK = "ask"
    """Pause until a person approves or denies (see ``Thinker.resolve_approval``)."""


ALLOW: Final = Decision.ALLOW
"""The plain allow, compared by identity on every call."""

Policy = Callable[["ToolProvider", Any], Any]
"""Called with the provider and the validated input; returns a `Decision`, its
value (``"allow"``, ``"deny"``, ``"ask"``), a bool, or an object with ``action`` and an
optional model-readable ``reason``; may be async. Anything else, and a policy that
raises, denies."""


def read_decision(answer: Any) -> tuple[Decision, str | None]:
    """A policy's answer as a `Decision` and its optional model-readable reason.

    True and None allow, False denies, a Decision or its value (or an object whose
    ``action`` is one) means what it says; anything else denies (fail closed).
    """
    if answer is True or answer is None:
        return Decision.ALLOW, None
    if answer is False:
        return Decision.DENY, None
    if isinstance(answer, Decision):
        return answer, None
    action = answer if isinstance(answer, str) else getattr(answer, "action", None)
    action = getattr(action, "value", action)  # an Enum member, ours or the host's
    reason = getattr(answer, "reason", None)
    try:
        decision = Decision(action)
    except ValueError:
        return Decision.DENY, None
    return decision, reason if isinstance(reason, str) else None


def contained(error: BaseException) -> bool:
    """Whether ``error``, raised by a host's policy or approver, refuses the call.

    Everything does but ``KeyboardInterrupt``, which ends the program as it should:
    ``SystemExit`` or a ``BaseException`` of the host's own is a refusal like any error.
    """
    return not isinstance(error, KeyboardInterrupt)


async def authorize(
    answer: Any,
    provider: ToolProvider,
    value: Any,
    approver: Approver | None,
    ctx: ToolContext | None,
    abort: AbortSignal | None,
) -> None:
    """The rest of the step for a policy's ``answer`` that is not a plain allow.

    Awaits an async policy's answer, reads it, and on ``ask`` pauses until ``approver``
    answers. Returns to go ahead.

    Raises:
        Refusal: 403 ``denied`` (a denial, or a policy that raised), 403
            ``approval_required`` (ask, with no approver), 499 ``aborted``.
    """
    if inspect.isawaitable(answer):  # an async policy
        outcome = await _running.run_async(answer, None, abort, None)
        answer = _settled(outcome, provider, "is not permitted here.")
    try:
        decision, reason = read_decision(answer)
    except BaseException as exc:
        if not contained(exc):
            raise
        raise _denied(provider, "is not permitted here.", exc) from None
    if decision is Decision.ASK:
        await _ask(approver, provider, value, ctx, abort)
    elif decision is Decision.DENY:
        if reason:
            raise refuse(403, "denied", reason)
        raise _denied(provider, "is not permitted here.")


async def _ask(
    approver: Approver | None,
    provider: ToolProvider,
    value: Any,
    ctx: ToolContext | None,
    abort: AbortSignal | None,
) -> None:
    """Pause until the approver answers; the caller's abort ends the wait."""
    if approver is None:
        label = _shaping.name_label(provider.name)
        text = f"{label} needs a person's approval, and none can be asked here."
        raise refuse(403, "approval_required", text)
    try:
        answer = approver(provider, value, ctx)
    except Refusal:  # the approval could not be put to a person: its own answer
        raise
    except BaseException as exc:
        if not contained(exc):
            raise
        raise _denied(provider, "was not approved.", exc) from None
    if inspect.isawaitable(answer):
        outcome = await _running.run_async(answer, None, abort, None)
        answer = _settled(outcome, provider, "was not approved.")
    if answer is not True:
        raise _denied(provider, "was not approved.")


def _denied(provider: ToolProvider, why: str, error: BaseException | None = None) -> Refusal:
    return refuse(403, "denied", f"{_shaping.name_label(provider.name)} {why}", error)


def _settled(outcome: _running.Outcome, provider: ToolProvider, refused: str) -> Any:
    """The value of an awaited policy or approver: 499 on abort, 403 if it raised."""
    if isinstance(outcome.kind, _running.Aborted):
        raise refuse(499, "aborted", outcome.kind.reason)
    if outcome.kind is _running.RAISED:
        if isinstance(outcome.value, Refusal):  # an approval no person could be asked
            raise outcome.value
        raise _denied(provider, refused, outcome.value)
    return outcome.value
