"""What an executor asks about a call besides its registry: read-only, policy, approval, config."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolpalette._run.call import refuse
from toolpalette._run.shaping import name_label

if TYPE_CHECKING:
    from toolpalette._run.consent import Approver, Policy
    from toolpalette._tools.provider import ToolProvider

__all__ = ["CallPolicy", "KeywordRules", "Rules", "check_read_only"]

Guard = Callable[["ToolProvider"], object]
"""A further read-only check: raising or returning False refuses the call (403)."""
ConfigFor = Callable[["ToolProvider"], Mapping[str, Any]]
"""The host's configuration for a provider's pack (``ToolContext.config``)."""


class CallPolicy(Protocol):
    """Decides one validated call (``ToolPolicy`` is one)."""

    def decide_call(self, parent: Any, provider: ToolProvider, value: Any) -> Any:
        """A decision (see ``consent.read_decision``) for ``provider`` called with ``value``.

        ``parent`` is the call context's parent (the bound thinker, for a thinker's
        call). An awaitable answer is awaited.
        """
        ...


class Rules(Protocol):
    """The answers an executor needs about each call, fixed when the executor is made."""

    @property
    def read_only(self) -> bool:
        """Refuse every tool not declared ``read_only`` (403 ``read_only``)."""
        ...

    @property
    def guard(self) -> Guard | None:
        """A further read-only check, run on every call, or None."""
        ...

    @property
    def policy(self) -> CallPolicy | None:
        """Decides allow, deny or ask per call; None allows every call without asking."""
        ...

    @property
    def approver(self) -> Approver | None:
        """Answers ``ask`` (the call pauses until it does); None refuses ``ask`` (403)."""
        ...

    @property
    def config_for(self) -> ConfigFor | None:
        """Each tool's configuration; None leaves the call context's own."""
        ...

    @property
    def config_per_tool(self) -> bool:
        """Whether `config_for` is fixed per provider.

        Then it is asked once, when the executor builds the provider's tool, rather
        than on every call.
        """
        ...


@dataclass(frozen=True)
class _CallablePolicy:
    """A standalone executor's ``policy(provider, value)`` as a `CallPolicy`."""

    decide: Policy

    def decide_call(self, parent: Any, provider: ToolProvider, value: Any) -> Any:
        return self.decide(provider, value)


@dataclass(frozen=True)
class KeywordRules:
    """The rules of an executor built with keywords (``Executor(policy=..., approve=...)``)."""

    read_only: bool = False
    guard: Guard | None = None
    policy: CallPolicy | None = None
    approver: Approver | None = None
    config_for: ConfigFor | None = None
    config_per_tool: bool = False

    @classmethod
    def of(
        cls,
        *,
        read_only: bool,
        require_read_only: Guard | None,
        policy: Policy | None,
        approve: Approver | None,
        config_for: ConfigFor | None,
    ) -> KeywordRules:
        """The rules the executor's documented keywords describe.

        ``config_for`` is asked on every call: a host's function may answer differently
        over time.
        """
        return cls(
            read_only=read_only,
            guard=require_read_only,
            policy=_CallablePolicy(policy) if policy is not None else None,
            approver=approve,
            config_for=config_for,
        )


def check_read_only(rules: Rules, provider: ToolProvider) -> None:
    """Step 2 of the pipeline, the read-only binding: refuse what ``rules`` refuse.

    Raises:
        Refusal: 403 ``read_only`` for a tool not declared ``read_only`` under a
            read-only binding, or one the guard refuses (it returned False or raised).
    """
    error: BaseException | None = None
    allowed = provider.read_only if rules.read_only else True
    guard = rules.guard
    if allowed and guard is not None:
        try:
            allowed = guard(provider) is not False
        except Exception as exc:
            allowed, error = False, exc
    if not allowed:
        text = (
            f"{name_label(provider.name)} can change things, and this agent "
            "may only use read-only tools."
        )
        raise refuse(403, "read_only", text, error)
