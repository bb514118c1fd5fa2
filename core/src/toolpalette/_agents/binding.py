"""What bind time fixes for a thinker: the parts of a bound thinker, made once."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from toolpalette._agents.admission import Admission
from toolpalette._agents.deferral import apply_grants
from toolpalette._agents.grants import SCRIPT_CALL
from toolpalette._agents.reconcile import Reconciler, SearchMode
from toolpalette._agents.turn import Approval
from toolpalette._run.executor import Executor, with_rules

if TYPE_CHECKING:
    from toolpalette._agents.approvals import Approvals, Notify
    from toolpalette._agents.policy import ToolPolicy
    from toolpalette._agents.resolved import ThinkerHub
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.tool import ToolContext

__all__ = ["APPROVED", "Binding", "CallRules", "make_binding"]

APPROVED: ContextVar[bool] = ContextVar("toolpalette_approved", default=False)
"""Set while a call runs that a person approved before it was made (``approved=True``)."""


@dataclass(frozen=True)
class CallRules:
    """What a thinker's executor asks about each call (a ``_run.rules.Rules``).

    ``read_only`` and ``policy`` are the binding's; there is no further guard (the
    executor checks each tool's own ``read_only`` on every call). An ``ask`` goes to the
    thinker's approvals; the configuration of a tool is the host's settings for its
    pack, fixed for the hub's life, so the executor reads it once per tool.
    """

    read_only: bool
    policy: ToolPolicy
    grants: Admission
    hub: ThinkerHub
    guard: None = None
    config_per_tool: bool = True

    @property
    def approver(self) -> Any:
        """Pauses a call the policy asks about until a person answers (or the host said yes)."""
        return self._ask

    @property
    def config_for(self) -> Any:
        """The host's settings for a provider's pack."""
        return self._config

    async def _ask(self, provider: ToolProvider, value: Any, _ctx: ToolContext | None) -> bool:
        grants = self.grants
        if APPROVED.get():
            grants.record("call", provider.name, "granted", "approved before the call")
            return True
        data = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        inner = SCRIPT_CALL.get()  # a run_code script's call: say which, and whose
        call_id, parent = inner if inner is not None else (None, None)
        approval = Approval(
            uuid.uuid4().hex, "call", provider.name, data, grants.turn_number, call_id, parent
        )
        return await grants.approvals.ask_call(approval)

    def _config(self, provider: ToolProvider) -> Mapping[str, Any]:
        origin = provider.origin
        return self.hub.pack_config(origin.pack or "") if origin is not None else {}


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
    rules: CallRules
    """What the executor asks about each call (a call decided at call time asks it too)."""


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
    rules = CallRules(read_only, policy, grants, hub)
    executor = with_rules(
        thinker.palette,
        rules,
        offered=(),
        hook=hub.pm.hook.toolpalette_tool_error,
        worker_threads=hub.config.worker_threads,
    )
    binding = Binding(read_only, strict, policy, palette, grants, grants.approvals, executor, rules)
    grants.on_granted = partial(apply_grants, thinker, grants, palette, executor)
    grants.on_evicted = palette.forget
    return binding
