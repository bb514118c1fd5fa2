"""What bind time fixes for a thinker: the parts of a bound thinker, made once."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from toolpalette._agents.admission import Admission
from toolpalette._agents.deferral import CurrentScope, apply_grants
from toolpalette._agents.reconcile import Reconciler, SearchMode
from toolpalette._agents.turn import Approval
from toolpalette._run.executor import Executor, with_rules
from toolpalette._run.rules import Rules

if TYPE_CHECKING:
    from toolpalette._agents.approvals import Approvals, Notify
    from toolpalette._agents.policy import ToolPolicy
    from toolpalette._agents.resolved import ThinkerHub
    from toolpalette._run.consent import Approver
    from toolpalette._tools.channel import ClientChannel
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.tool import ToolContext

__all__ = ["Binding", "approved_before", "call_rules", "make_binding", "script_approver"]


def call_rules(read_only: bool, policy: ToolPolicy, grants: Admission, hub: ThinkerHub) -> Rules:
    """What a thinker's executor asks about each call.

    ``read_only`` and ``policy`` are the binding's; there is no further guard (the
    executor checks each tool's own ``read_only`` on every call). An ``ask`` goes to the
    thinker's approvals; the configuration of a tool is the host's settings for its
    pack, fixed for the hub's life, so the executor reads it once per tool.
    """
    return Rules(
        read_only=read_only,
        policy=policy,
        approver=partial(_ask, grants),
        config_for=partial(_config, hub),
        config_per_tool=True,
    )


async def _ask(
    grants: Admission,
    provider: ToolProvider,
    value: Any,
    ctx: ToolContext | None,
    via: ClientChannel | None = None,
    script: tuple[str, str] | None = None,
) -> bool:
    """Pause a call the policy asks about until a person answers.

    The approval names whom the call is for and how to reach its caller: the call's
    context's principal, and its channel (``via`` instead, for a script's call, with
    ``script``: that call's id and the script's), which the host's approver may ask
    through.
    """
    data = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    call_id, parent = script if script is not None else (None, None)
    channel = via if via is not None else ctx.channel if ctx is not None else None
    approval = Approval(
        uuid.uuid4().hex,
        "call",
        provider.name,
        data,
        grants.turn_number,
        call_id,
        parent,
        ctx.principal if ctx is not None else None,
        channel,
    )
    return await grants.approvals.ask_call(approval)


def script_approver(
    grants: Admission, via: ClientChannel | None, call_id: str, parent: str
) -> Approver:
    """Who asks about a call a ``run_code`` script makes: the thinker's approvals.

    The approval names the script's channel and that call (``call_id``, ``parent``).
    """
    return partial(_ask, grants, via=via, script=(call_id, parent))


def approved_before(grants: Admission) -> Approver:
    """The approver of a call a person approved before it was made: it says yes, recorded."""

    def approve(provider: ToolProvider, value: Any, ctx: ToolContext | None) -> bool:
        principal = ctx.principal if ctx is not None else None
        reason = "approved before the call"
        grants.record("call", provider.name, "granted", reason, principal=principal)
        return True

    return approve


def _config(hub: ThinkerHub, provider: ToolProvider) -> Mapping[str, Any]:
    origin = provider.origin
    return hub.pack_config(origin.pack or "") if origin is not None else {}


@dataclass(frozen=True)
class Binding:
    """What bind time fixed for one thinker; immutable, and found by its identity."""

    read_only: bool
    """The read-only binding: mutating tools are neither offered, granted nor run."""
    strict: bool
    """Whether turns normalize schemas into the providers' strict subsets."""
    policy: ToolPolicy
    """Decides what is offered, and calls and grants."""
    palette: Reconciler
    """The palette's reconciliation (and the catalogs it leaves)."""
    grants: Admission
    """Admission of grants."""
    approvals: Approvals
    """The thinker's pending approvals, of calls and of grants."""
    executor: Executor
    """The pipeline of every call, for the thinker's life (class tools keep their state)."""
    rules: Rules
    """What the executor asks about each call (a call decided at call time asks it too)."""
    current: CurrentScope
    """The current turn's scope, which every call of the turn carries."""


def make_binding(
    thinker: Any,
    *,
    read_only: bool,
    strict: bool,
    policy: ToolPolicy,
    approver: Notify | None,
    keep_grants: bool = True,
    mode: SearchMode = "auto",
    max_granted: int | None = None,
) -> Binding:
    """``thinker``'s binding: its palette's reconciliation, its grants and its executor.

    ``keep_grants`` and ``mode`` are the thinker's (``hub.bind(..., keep_grants=...)``,
    its class's ``tool_search``): whether grants are kept, and how the model reaches the
    deferred tools and skills; ``max_granted`` (its class's) bounds the kept grants.
    """
    hub: ThinkerHub = thinker.hub
    palette = Reconciler(thinker.palette, hub, policy, read_only, mode)
    grants = Admission(
        thinker, palette, policy, read_only, approver, keep=keep_grants, max_granted=max_granted
    )
    rules = call_rules(read_only, policy, grants, hub)
    executor = with_rules(
        thinker.palette,
        rules,
        offered=(),
        hook=hub.pm.hook.toolpalette_tool_error,
        worker_threads=hub.config.worker_threads,
    )
    current = CurrentScope()
    binding = Binding(
        read_only, strict, policy, palette, grants, grants.approvals, executor, rules, current
    )
    grants.on_granted = partial(apply_grants, thinker, grants, palette, current)
    grants.on_evicted = palette.forget
    return binding
