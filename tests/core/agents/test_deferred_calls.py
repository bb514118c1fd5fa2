"""Calls of deferred tools decided at call time, and a thinker that keeps no grants.

``thinker.call(name, input, deferred=True)`` admits a tool of the deferred catalog for
that one call (hooks, policy, the record) and runs it through the pipeline; a name the
policy denies or the catalog lacks answers as an unknown name does. With
``hub.bind(..., keep_grants=False)`` admissions are decided, recorded and answered, and
nothing is kept. This is the thinker API the MCP server's stateless mode builds on.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import types
from typing import Any

import pytest
from toolpalette import (
    Approval,
    Decision,
    Thinker,
    ToolHub,
    ToolPolicy,
    ToolResult,
    ToolSelector,
    hookimpl,
)
from toolpalette.testing import FakeTool, await_until

SCHEMA = {
    "type": "object",
    "properties": {"to": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["to"],
    "additionalProperties": False,
}


def fake(name: str, *, read_only: bool = True, description: str = "") -> FakeTool:
    return FakeTool(
        name,
        description=description or f"The {name.replace('_', ' ')} tool.",
        input_schema=SCHEMA,
        read_only=read_only,
        result=lambda value: f"{name} to {value['to']}",
    )


LOOKUP = fake("look_up_order", description="Look up an order by its number.")
SEND = fake("send_invoice", read_only=False, description="Send an invoice by e-mail.")
REFUND = fake("refund_order", read_only=False, description="Refund an order.")
GREET = fake("greet", description="Say hello.")


def thinker_class(*, read_only: bool = False, mode: str = "auto") -> type[Thinker]:
    class Clerk(Thinker):
        tool_search = mode  # type: ignore[assignment]

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector().provider(GREET)
            for provider in (LOOKUP, SEND, REFUND):
                selector.provider(provider, deferred=True)
            return selector

    Clerk.read_only = read_only  # type: ignore[misc]
    return Clerk


@pytest.fixture
def hub() -> ToolHub:
    for tool in (LOOKUP, SEND, REFUND, GREET):
        tool.calls.clear()
    return ToolHub(autoload=False, config={})


def records(hub: ToolHub) -> list[tuple[str, str, str, str]]:
    return [(g.kind, g.name, g.decision, g.reason) for g in hub.grants()]


def shape(result: ToolResult) -> tuple[int, str, str]:
    return result.status, result.code, result.text


# -- admitted for one call ----------------------------------------------------------------


async def test_a_deferred_tool_runs_for_one_call_and_nothing_is_kept(hub: ToolHub) -> None:
    clerk = hub.bind(thinker_class())
    turn = clerk.begin_turn()
    result = await clerk.call("look_up_order", {"to": "a"}, deferred=True, call_id="c1")
    assert (result.status, result.text) == (200, "look_up_order to a")
    assert LOOKUP.calls[0].context.call_id == "c1"  # type: ignore[union-attr]
    assert clerk.begin_turn().tool_names == turn.tool_names  # not granted
    assert "look_up_order" in {p.name for p in clerk.deferred_tools()}
    await clerk.call("look_up_order", {"to": "b"}, deferred=True)
    assert records(hub) == [("tool", "look_up_order", "granted", "admitted for one call")] * 2


async def test_without_the_flag_a_deferred_tool_is_an_unknown_name(hub: ToolHub) -> None:
    clerk = hub.bind(thinker_class())
    result = await clerk.call("look_up_order", {"to": "a"})
    assert shape(result) == (
        404,
        "unknown_tool",
        "Tool 'look_up_order' is not available. Available tools: greet, request_tools.",
    )
    assert LOOKUP.calls == []
    assert hub.grants() == []


async def test_the_pipeline_still_validates_a_call_admitted_at_call_time(hub: ToolHub) -> None:
    clerk = hub.bind(thinker_class())
    result = await clerk.call("look_up_order", {"to": 7, "count": "x"}, deferred=True)
    assert (result.status, result.code) == (400, "invalid_input")
    assert LOOKUP.calls == []


@pytest.mark.parametrize("name", ["nope", "Look_Up_Order", "", None, 7, ["look_up_order"]])
async def test_a_name_off_the_catalog_answers_as_an_unknown_name(
    hub: ToolHub, name: object
) -> None:
    clerk = hub.bind(thinker_class())
    result = await clerk.call(name, {"to": "a"}, deferred=True)
    assert shape(result) == shape(await clerk.call(name, {"to": "a"}))
    assert result.status == 404
    assert hub.grants() == []  # nothing in the catalog: nothing decided


async def test_a_name_the_policy_denies_answers_as_an_unknown_name(hub: ToolHub) -> None:
    class NoRefunds(ToolPolicy):
        def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
            return Decision.DENY if name == "refund_order" else Decision.ALLOW

    clerk = hub.bind(thinker_class(), policy=NoRefunds())
    denied = await clerk.call("refund_order", {"to": "a"}, deferred=True)
    unknown = await clerk.call("refund_order", {"to": "a"})  # as if it did not exist
    assert shape(denied) == shape(unknown)
    assert denied.status == 404
    assert REFUND.calls == []
    assert records(hub) == [("tool", "refund_order", "refused", "denied by policy")]


async def test_an_admit_hook_decides_at_call_time_too(hub: ToolHub) -> None:
    class Gate:
        @hookimpl
        def toolpalette_admit(self, thinker: Any, kind: str, name: str) -> str | None:
            return "closed today" if name == "look_up_order" else None

    hub.add_plugin(Gate(), name="gate")
    clerk = hub.bind(thinker_class())
    result = await clerk.call("look_up_order", {"to": "a"}, deferred=True)
    assert result.status == 404
    assert "closed today" not in result.text  # no oracle: the unknown name's text
    assert records(hub) == [("tool", "look_up_order", "refused", "closed today")]


async def test_a_read_only_thinker_reaches_only_read_only_deferred_tools(hub: ToolHub) -> None:
    clerk = hub.bind(thinker_class(read_only=True))
    assert [p.name for p in clerk.deferred_tools()] == ["look_up_order"]
    mutating = await clerk.call("send_invoice", {"to": "a"}, deferred=True)
    assert shape(mutating) == shape(await clerk.call("send_invoice", {"to": "a"}))
    assert mutating.status == 404
    assert SEND.calls == []
    assert hub.grants() == []  # not in its catalog: nothing decided
    allowed = await clerk.call("look_up_order", {"to": "a"}, deferred=True)
    assert allowed.status == 200


async def test_an_ask_is_the_calls_own_approval_and_the_answer_is_the_grant(hub: ToolHub) -> None:
    queue: asyncio.Queue[Approval] = asyncio.Queue()
    clerk = hub.bind(thinker_class(), policy=ToolPolicy(ask=["send_invoice"]), approver=queue.put)
    call = asyncio.ensure_future(clerk.call("send_invoice", {"to": "a"}, deferred=True))
    approval = await queue.get()
    assert (approval.kind, approval.name, approval.input) == ("call", "send_invoice", {"to": "a"})
    assert SEND.calls == []
    clerk.resolve_approval(approval.token, approve=True)
    assert (await call).text == "send_invoice to a"
    refused = asyncio.ensure_future(clerk.call("send_invoice", {"to": "b"}, deferred=True))
    clerk.resolve_approval((await queue.get()).token, approve=False)
    assert ((await refused).status, (await refused).code) == (403, "denied")
    assert len(SEND.calls) == 1
    assert records(hub) == [
        ("call", "send_invoice", "granted", "a person's decision"),
        ("tool", "send_invoice", "granted", "a person's decision at call time"),
        ("call", "send_invoice", "refused", "a person's decision"),
        ("tool", "send_invoice", "refused", "a person's decision at call time"),
    ]


async def test_approved_answers_the_ask_without_pausing(hub: ToolHub) -> None:
    asked: list[Approval] = []
    clerk = hub.bind(
        thinker_class(), policy=ToolPolicy(ask=["send_invoice"]), approver=asked.append
    )
    result = await clerk.call("send_invoice", {"to": "a"}, deferred=True, approved=True)
    assert result.text == "send_invoice to a"
    assert asked == []
    assert records(hub) == [
        ("call", "send_invoice", "granted", "approved before the call"),
        ("tool", "send_invoice", "granted", "a person's decision at call time"),
    ]


async def test_a_grant_that_needs_a_person_asks_even_when_the_call_would_not(hub: ToolHub) -> None:
    class AskGrants(ToolPolicy):
        def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
            return Decision.ASK

    asked: list[Approval] = []
    holder: dict[str, Thinker] = {}

    def approve(approval: Approval) -> None:
        asked.append(approval)
        holder["clerk"].resolve_approval(approval.token, approve=True)

    clerk = hub.bind(thinker_class(), policy=AskGrants(), approver=approve)
    holder["clerk"] = clerk
    assert (await clerk.call("look_up_order", {"to": "a"}, deferred=True)).status == 200
    assert [a.kind for a in asked] == ["call"]  # asked once, with the call's input
    assert (await clerk.call("greet", {"to": "a"})).status == 200  # offered: not asked
    assert len(asked) == 1


async def test_call_many_decides_each_deferred_call_in_its_place(hub: ToolHub) -> None:
    clerk = hub.bind(thinker_class())
    calls = [
        ("greet", {"to": "a"}, "1"),
        ("look_up_order", {"to": "b"}, "2"),
        ("nope", {"to": "c"}, "3"),
        ("greet", {"to": "d"}, "4"),
    ]
    results = await clerk.call_many(calls, deferred=True)
    assert [r.text for r in results[:2]] == ["greet to a", "look_up_order to b"]
    assert results[2].status == 404
    assert results[3].text == "greet to d"
    plain = await clerk.call_many(calls)
    assert [r.status for r in plain] == [200, 404, 404, 200]


async def test_deferred_tools_is_the_catalog_and_costs_nothing_when_unchanged(
    hub: ToolHub,
) -> None:
    clerk = hub.bind(thinker_class(), policy=ToolPolicy(deny=["refund_order"]))
    tools = clerk.deferred_tools()
    assert [p.name for p in tools] == ["look_up_order", "send_invoice"]
    assert clerk.deferred_tools() is tools  # kept until the catalog changes
    clerk.admit("tool", ["look_up_order"])
    assert [p.name for p in clerk.deferred_tools()] == ["send_invoice"]


# -- keep_grants=False: decided, recorded, answered; nothing kept ---------------------------------


# What the walk does not count: the hub, classes, modules, code, and what the process
# shares among every caller. The worker pool's threads come and go with their idle expiry
# and the state of its locks and of the event loop changes with timing, whatever this
# thinker keeps; walking into them makes the count depend on the other tests of the run.
SHARED = (
    type,
    types.ModuleType,
    types.FunctionType,
    threading.Thread,
    asyncio.AbstractEventLoop,
    type(threading.Lock()),
    type(threading.RLock()),
)


def reachable(root: object, stop: object) -> int:
    """How many objects ``root`` holds (not counting ``stop`` nor what :data:`SHARED` names)."""
    seen = {id(stop)}
    stack = [root]
    count = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, SHARED):
            continue
        seen.add(id(obj))
        count += 1
        stack.extend(gc.get_referents(obj))
    return count


class Reports:
    """The failure reports delivered (on the report thread), counted."""

    def __init__(self) -> None:
        self.delivered = 0

    @hookimpl
    def toolpalette_tool_error(self, report: Any) -> None:
        self.delivered += 1


async def test_a_thinker_that_keeps_nothing_does_not_grow(hub: ToolHub) -> None:
    reports = Reports()
    hub.add_plugin(reports)
    clerk = hub.bind(thinker_class(mode="search"), keep_grants=False)
    turn = clerk.begin_turn()

    async def a_round(i: int) -> None:
        found = await clerk.call("search_tools", {"query": "order invoice", "limit": 3})
        assert {t["name"] for t in found.structured["tools"]} == {  # type: ignore[index]
            "look_up_order",
            "refund_order",
            "send_invoice",
        }
        assert "next turn" not in found.structured["note"]  # type: ignore[index]
        requested = await clerk.call("request_tools", {"names": ["send_invoice"]})
        assert requested.status == 404  # search mode: request_tools is not offered
        outcome = clerk.admit("tool", ["refund_order"])
        assert outcome["granted"] == ["refund_order"]
        assert outcome["note"] == "Granted tools can be called now."
        ran = await clerk.call("refund_order", {"to": str(i)}, deferred=True)
        assert ran.text == f"refund_order to {i}"
        assert (await clerk.call("refund_order", {"to": "x"})).status == 404  # not kept

    async def held(rounds: int) -> int:
        # Each round's two refusals are reported on the report thread, which holds a
        # report until it is delivered: count once they all are.
        await await_until(lambda: reports.delivered == 2 * rounds)
        for tool in (LOOKUP, SEND, REFUND):
            tool.calls.clear()  # the fakes' own record of their calls
        gc.collect()
        return reachable(clerk, hub)

    for i in range(5):
        await a_round(i)
    before = await held(5)
    for i in range(50):
        await a_round(i)
    assert await held(55) == before
    again = clerk.begin_turn()
    assert (again.version, again.tool_names) == (turn.version, turn.tool_names)
    assert len(clerk.deferred_tools()) == 3
    assert clerk.pending_approvals() == []
    decisions = {(g.name, g.decision) for g in hub.grants()}
    # The mutating matches are destructive: offered by the search, granted per call.
    assert decisions == {
        ("look_up_order", "granted"),
        ("refund_order", "offered"),
        ("refund_order", "granted"),
        ("send_invoice", "offered"),
    }


async def test_a_request_that_needs_a_person_asks_at_each_call_when_nothing_is_kept(
    hub: ToolHub,
) -> None:
    asked: list[Approval] = []
    clerk = hub.bind(
        thinker_class(),
        policy=ToolPolicy(ask=["send_invoice"]),
        approver=asked.append,
        keep_grants=False,
    )
    clerk.begin_turn()
    result = await clerk.call("request_tools", {"names": ["send_invoice"]})
    outcome = json.loads(result.text)
    assert outcome["pending"] == ["send_invoice"]
    assert "approves each call" in outcome["note"]
    assert asked == []
    assert clerk.pending_approvals() == []
