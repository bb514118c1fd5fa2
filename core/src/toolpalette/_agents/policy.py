"""ToolPolicy: what a run is offered, and which calls and grants need a human's approval."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolpalette._agents.meta_search import META_TOOLS
from toolpalette._run.consent import Decision
from toolpalette._tools.provider import ToolProvider

__all__ = ["Decision", "ToolPolicy"]


class ToolPolicy:
    """Decides what a run is offered and whether a call or a grant may proceed.

    The default allows everything. Hosts either pass options or subclass and override
    [`offers()`][toolpalette.ToolPolicy.offers],
    [`decide_call()`][toolpalette.ToolPolicy.decide_call] and
    [`decide_grant()`][toolpalette.ToolPolicy.decide_grant].

    Args:
        deny: tool names never offered, called or granted.
        ask: tool names whose calls and grants need approval.
        ask_for_mutating: every mutating tool's calls and grants need approval.
    """

    def __init__(
        self,
        *,
        deny: Iterable[str] = (),
        ask: Iterable[str] = (),
        ask_for_mutating: bool = False,
    ) -> None:
        self.deny = frozenset(deny)
        """Names never offered, called or granted."""
        self.ask = frozenset(ask)
        """Names whose calls and grants need approval."""
        self.ask_for_mutating = ask_for_mutating
        """Whether every mutating tool needs approval."""

    def offers(self, provider: ToolProvider) -> bool:
        """Whether ``provider`` may be offered to the run at all."""
        return provider.name not in self.deny

    def decide_call(self, thinker: Any, provider: ToolProvider, value: Any) -> Decision:
        """The decision for one validated call of ``provider`` by ``thinker``.

        A meta-tool call (``request_tools``, ``search_tools`` and their skill
        counterparts) is not asked about: each grant it requests is decided (and asked
        about) on its own by [`decide_grant()`][toolpalette.ToolPolicy.decide_grant].
        """
        if not (self.deny or self.ask or self.ask_for_mutating):
            return Decision.ALLOW  # the default policy: no class check, no look-up
        if isinstance(provider, META_TOOLS):
            return Decision.DENY if provider.name in self.deny else Decision.ALLOW
        return self._decide(provider)

    def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
        """The decision for admitting a deferred tool (``kind="tool"``) or a skill."""
        if kind == "tool" and isinstance(item, ToolProvider):
            return self._decide(item)
        return Decision.DENY if name in self.deny else Decision.ALLOW

    def _decide(self, provider: ToolProvider) -> Decision:
        if not (self.deny or self.ask or self.ask_for_mutating):
            return Decision.ALLOW  # nothing to look up: the default policy
        name = provider.name
        if name in self.deny:
            return Decision.DENY
        if name in self.ask or (self.ask_for_mutating and not provider.read_only):
            return Decision.ASK
        return Decision.ALLOW

    def __repr__(self) -> str:
        return (
            f"ToolPolicy(deny={sorted(self.deny)}, ask={sorted(self.ask)}, "
            f"ask_for_mutating={self.ask_for_mutating})"
        )
