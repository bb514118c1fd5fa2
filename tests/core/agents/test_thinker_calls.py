"""thinker.call's call id, abort and advance approval; thinker.call_many."""

from __future__ import annotations

import asyncio

from toolpalette import (
    AbortSignal,
    Thinker,
    ToolContext,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    tool,
)

RAN: list[str] = []


@tool(read_only=True)
def whoami(ctx: ToolContext) -> str:
    """Say the call id."""
    return str(ctx.call_id)


@tool
def pay(amount: int) -> str:
    """Pay an amount."""
    RAN.append(f"pay {amount}")
    return f"paid {amount}"


@tool(read_only=True)
async def slow() -> str:
    """Take a long time."""
    await asyncio.sleep(30)
    return "late"


class Payer(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(whoami).tool(pay).tool(slow)


async def test_the_call_id_reaches_the_tool() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Payer)
    assert (await thinker.call("whoami", {}, call_id="call_42")).text == "call_42"
    results = await thinker.call_many([("whoami", {}, "a"), ("whoami", "{}", "b")])
    assert [r.text for r in results] == ["a", "b"]


async def test_the_hosts_abort_ends_the_call() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Payer)
    abort = AbortSignal()
    task = asyncio.ensure_future(thinker.call("slow", {}, abort=abort))
    await asyncio.sleep(0)
    abort.abort("the user left")
    result = await asyncio.wait_for(task, 10)
    assert result.status == 499


async def test_an_advance_approval_answers_an_ask_and_is_recorded() -> None:
    RAN.clear()
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Payer, policy=ToolPolicy(ask=["pay"]))
    result = await thinker.call("pay", {"amount": 5}, approved=True)
    assert result.text == "paid 5"
    assert thinker.pending_approvals() == []
    assert [(r.name, r.decision) for r in hub.grants()] == [("pay", "granted")]


async def test_an_advance_approval_does_not_lift_a_deny() -> None:
    RAN.clear()
    thinker = ToolHub(autoload=False, config={}).bind(Payer, policy=ToolPolicy(deny=["pay"]))
    result = await thinker.call("pay", {"amount": 5}, approved=True)
    assert result.is_error
    assert RAN == []
