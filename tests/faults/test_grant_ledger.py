"""The grant ledger stays bounded however many calls are refused, and loses no record.

A thinker bound as stateless serving binds it (``keep_grants=False``) decides each
deferred call at call time; every refused one is a record. ``hub.grants()`` keeps the
newest ones only, and the ``toolpalette_grant`` hook hears every one.
"""

from __future__ import annotations

from typing import Any

from toolpalette import (
    Decision,
    GrantRecord,
    Thinker,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    hookimpl,
    tool,
)

WINDOW = 10_000
"""The documented window of ``hub.grants()``."""


@tool
def wire_money(to_account: str) -> str:
    """Move money (deferred; the policy refuses every grant)."""
    return "moved"


class Refusing(ToolPolicy):
    def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
        return Decision.DENY


class Stateless(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(wire_money, deferred=True)


class Audit:
    def __init__(self) -> None:
        self.heard = 0
        self.last: GrantRecord | None = None

    @hookimpl
    def toolpalette_grant(self, record: GrantRecord) -> None:
        self.heard += 1
        self.last = record


async def test_the_ledger_keeps_a_window_and_the_hook_hears_every_record() -> None:
    hub = ToolHub(autoload=False, config={})
    audit = Audit()
    hub.add_plugin(audit, name="audit")
    thinker = hub.bind(Stateless, policy=Refusing(), keep_grants=False)
    calls = WINDOW + 1500
    for i in range(calls):
        result = await thinker.call("wire_money", {"to_account": f"A-{i}"}, deferred=True)
        assert result.is_error
    kept = hub.grants()
    assert len(kept) == WINDOW
    assert audit.heard >= calls  # every refusal reached the hook
    assert audit.last == kept[-1]  # the window holds the newest
    assert all(r.decision == "refused" for r in kept)
