"""Deferred tools reached during a turn: grants callable at once, calls decided at call time."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from functools import partial
from typing import TYPE_CHECKING, Any, final

from toolpalette._run.call import CallScope, Refusal
from toolpalette._run.consent import Decision, read_decision
from toolpalette._run.executor import with_rules
from toolpalette._tools.registry import ToolRegistry, lookup

if TYPE_CHECKING:
    from toolpalette._agents.admission import Admission
    from toolpalette._agents.reconcile import Reconciler
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.consent import Approver
    from toolpalette._run.executor import Executor
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.result import ToolResult
    from toolpalette._tools.tool import ToolContext

__all__ = ["CurrentScope", "Offered", "apply_grants", "call_at_call_time"]


class Offered(AbstractSet[str]):
    """The names a turn offered, and those granted since, as one set (nothing copied).

    Args:
        base: the turn's own offer (its surface's names).
        extra: names granted during the turn.
    """

    _base: AbstractSet[str]
    _extra: frozenset[str]

    def __init__(self, base: AbstractSet[str], extra: Iterable[str]) -> None:
        if isinstance(base, Offered):
            extra = [*base._extra, *extra]
            base = base._base
        self._base = base
        self._extra = frozenset(extra) - base

    def __contains__(self, name: object) -> bool:
        return name in self._base or name in self._extra

    def __iter__(self) -> Iterator[str]:
        yield from self._base
        yield from self._extra

    def __len__(self) -> int:
        return len(self._base) + len(self._extra)


@final
class CurrentScope:
    """The scope of a thinker's current turn: made by ``begin_turn``, widened by grants.

    The one thing a turn changes: the thinker's executor is never written to.
    """

    __slots__ = ("scope",)

    def __init__(self) -> None:
        self.scope = CallScope(offered=frozenset())
        """The turn's offered names, context and failure reporters."""


def apply_grants(
    thinker: Any, grants: Admission, palette: Reconciler, current: CurrentScope
) -> None:
    """Put the tools granted since the last turn into the palette now.

    The palette holds them as the next turn would (``Reconciler.add_granted``; the next
    turn's reconcile is still given them, and rebuilds the meta-tools), and the current
    turn's offer grows by each name the palette now holds.
    """
    granted = grants.granted_since()
    if not granted:
        return
    palette.add_granted(thinker, grants.admitted, granted)
    registry = palette.registry
    held = [n for n in granted if lookup(registry, n) is grants.admitted.get(n)]
    scope = current.scope
    if held and scope.offered is not None:
        current.scope = dataclasses.replace(scope, offered=Offered(scope.offered, held))


class _AtCallPolicy:
    """The thinker's policy for one call admitted at call time.

    When the grant needed a person, the call asks one (once, seeing the call's input)
    unless the policy denies the call itself.
    """

    def __init__(self, policy: Any, ask: bool) -> None:
        self._policy = policy
        self._ask = ask

    def decide_call(self, parent: Any, provider: ToolProvider, value: Any) -> Any:
        answer = self._policy.decide_call(parent, provider, value)
        if not self._ask:
            return answer
        if inspect.isawaitable(answer):
            return self._settled(answer)
        return _asked(answer)

    @staticmethod
    async def _settled(answer: Any) -> Any:
        return _asked(await answer)


def _asked(answer: Any) -> Any:
    """A deny stays one (with its reason); anything else asks a person."""
    decision, _ = read_decision(answer)
    return answer if decision is Decision.DENY else Decision.ASK


async def _approve_recorded(
    ask: Approver, grants: Admission, provider: ToolProvider, value: Any, ctx: Any
) -> bool:
    """Ask as the thinker asks, and record the answer as the grant a person decided."""
    name, principal = provider.name, ctx.principal if ctx is not None else None
    try:
        answer = ask(provider, value, ctx)
        approved = bool(await answer) if inspect.isawaitable(answer) else bool(answer)
    except Refusal as refusal:  # no person could be asked: the approver said why
        grants.answered(name, False, refusal.result.text, principal)
        raise
    except asyncio.CancelledError:
        grants.answered(name, False, "the call ended before an answer", principal)
        raise
    except BaseException:
        grants.answered(name, False, "no person could be asked", principal)
        raise
    grants.answered(name, approved, "a person's decision at call time", principal)
    return approved


async def call_at_call_time(
    base: Executor,
    grants: Admission,
    provider: ToolProvider,
    ask: bool,
    value: Any,
    *,
    scope: CallScope,
    context: ToolContext | None,
    abort: AbortSignal | None,
    call_id: str | None,
) -> ToolResult:
    """Run one call of ``provider``, admitted at call time, through the pipeline.

    ``base`` is the thinker's executor (its rules are the thinker's call rules),
    ``grants`` its admission; ``ask`` says the grant needs a person (the call asks, and
    the answer is recorded as the grant). ``scope`` is the call's. The executor is made
    for this call with the rules replaced, and shares the thinker's worker pool and
    report queue; the tool is built for this call and kept nowhere.
    """
    rules = base.rules
    approver = scope.approver or rules.approver
    if ask and approver is not None:
        approver = partial(_approve_recorded, approver, grants)
    at_call = dataclasses.replace(rules, policy=_AtCallPolicy(rules.policy, ask), approver=approver)
    executor = with_rules(
        ToolRegistry([provider]),
        at_call,
        pool=base.pool,
        reports=base.reports,
        hook=base.hook,
        timeout=base.timeout,
        output_cap=base.output_cap,
    )
    return await executor.execute(
        provider.name,
        value,
        context=context,
        abort=abort,
        call_id=call_id,
        scope=dataclasses.replace(scope, offered=None, approver=None),
    )
