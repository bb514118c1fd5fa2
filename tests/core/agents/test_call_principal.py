"""Who a call is made for comes with the call: ``thinker.call(..., principal=...)``.

A shared thinker (one per class, as the MCP server's stateless mode keeps) serves many
principals at once, so nothing about the principal is set on the thinker: each call's
grants, approvals and the tool's context name that call's own.
"""

from __future__ import annotations

import asyncio

from toolpalette import (
    Approval,
    Thinker,
    ToolContext,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    tool,
)
from toolpalette.testing import FakeTool

SCHEMA = {
    "type": "object",
    "properties": {"to": {"type": "string"}},
    "required": ["to"],
    "additionalProperties": False,
}
SEND = FakeTool(
    "send_invoice",
    description="Send an invoice by e-mail.",
    input_schema=SCHEMA,
    read_only=False,
    result=lambda value: f"sent to {value['to']}",
)
LOOKUP = FakeTool(
    "look_up_order",
    description="Look up an order by its number.",
    input_schema=SCHEMA,
    result=lambda value: f"order for {value['to']}",
)


@tool
def whoami(ctx: ToolContext) -> str:
    """Say whom the call is made for."""
    return str(ctx.principal)


class Clerk(Thinker):
    tool_search = "enum"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector().tool(whoami)
        selector.provider(SEND, deferred=True)
        selector.provider(LOOKUP, deferred=True)
        return selector


def grants_by(hub: ToolHub) -> list[tuple[str, str, str | None]]:
    return [(g.name, g.decision, g.principal) for g in hub.grants()]


async def test_two_principals_overlapping_calls_each_record_their_own_principal() -> None:
    hub = ToolHub(autoload=False, config={})
    asked: dict[str, Approval] = {}
    both_asked = asyncio.Event()

    def approver(approval: Approval) -> None:
        asked[str(approval.principal)] = approval
        if len(asked) == 2:
            both_asked.set()

    shared = hub.bind(
        Clerk, policy=ToolPolicy(ask=["send_invoice"]), approver=approver, keep_grants=False
    )
    shared.begin_turn()
    # Both calls pause for a person at once: neither has ended when the other is made.
    alice = asyncio.ensure_future(
        shared.call("send_invoice", {"to": "a"}, deferred=True, principal="user:alice")
    )
    bob = asyncio.ensure_future(
        shared.call("send_invoice", {"to": "b"}, deferred=True, principal="user:bob")
    )
    await asyncio.wait_for(both_asked.wait(), 10)
    assert {a.principal for a in asked.values()} == {"user:alice", "user:bob"}
    # Answered in the other order than asked: each answer is on its own call's record.
    shared.resolve_approval(asked["user:bob"].token, approve=False)
    shared.resolve_approval(asked["user:alice"].token, approve=True)
    assert not (await alice).is_error
    assert (await bob).code == "denied"
    # Between the two calls, a host's own call is made for nobody.
    assert (await shared.call("look_up_order", {"to": "c"}, deferred=True)).text == "order for c"
    by = grants_by(hub)
    assert ("look_up_order", "granted", None) in by
    send = [(decision, who) for name, decision, who in by if name == "send_invoice"]
    assert ("granted", "user:alice") in send
    assert ("refused", "user:bob") in send
    assert ("granted", "user:bob") not in send
    assert ("refused", "user:alice") not in send


async def test_the_tool_and_the_meta_tool_see_the_calls_principal() -> None:
    hub = ToolHub(autoload=False, config={})
    shared = hub.bind(Clerk, keep_grants=False)
    shared.begin_turn()
    result = await shared.call("whoami", {}, principal="client:ci-bot")
    assert result.text == "client:ci-bot"
    assert (await shared.call("whoami", {})).text == "None"  # the turn's context keeps none
    asked = await shared.call("request_tools", {"names": ["look_up_order"]}, principal="user:carol")
    assert not asked.is_error, asked.text
    assert ("look_up_order", "granted", "user:carol") in grants_by(hub)


async def test_call_many_makes_each_call_for_its_principal() -> None:
    hub = ToolHub(autoload=False, config={})
    shared = hub.bind(Clerk, keep_grants=False)
    shared.begin_turn()
    results = await shared.call_many(
        [("whoami", {}), ("look_up_order", {"to": "d"})], deferred=True, principal="user:dan"
    )
    assert [r.text for r in results] == ["user:dan", "order for d"]
    assert ("look_up_order", "granted", "user:dan") in grants_by(hub)
