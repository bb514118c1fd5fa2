"""Approvals over MCP: a call the policy asks about is asked of the client's user.

On the 2025-era protocols the server sends an ``elicitation/create`` form within the
``tools/call``; on 2026-07-28 the call answers ``input_required`` with the form and a
sealed request state, and the client's retry carries the answer (the SDK's client
drives both through its ``elicitation_callback``). A "no" is the pipeline's 403, and
a client that declared no elicitation is refused. Every answer is on the grant ledger.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import palette_fixture as fx
import pytest
import toolpalette
import toolpalette.mcp
from mcp import Client
from mcp.shared.exceptions import MCPError
from toolpalette import ToolHub

ERAS = ["legacy", "auto"]
KEY = "k" * 32
Answer = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


@pytest.fixture
def hub() -> ToolHub:
    fx.WIPED.clear()
    return ToolHub()


def answering(action: str, approve: Any = True, asked: list[str] | None = None) -> Answer:
    async def answer(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if asked is not None:
            asked.append(params.message)
        content = {"approve": approve} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


@asynccontextmanager
async def connect(server: Any, mode: str, answer: Answer | None) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"elicitation_callback": answer} if answer else {}
    async with Client(server, mode=mode, **options) as client:
        yield client


def ledger(hub: ToolHub, name: str) -> list[tuple[str, str, str]]:
    return [(r.kind, r.decision, r.reason) for r in hub.grants() if r.name == name]


class AskFirst(fx.Palette):
    """The fixture palette, with every call of ``append_note`` asked about."""

    def __init__(self, hub: Any, conversation: Any = None, **options: Any) -> None:
        options["policy"] = toolpalette.ToolPolicy(ask=["append_note"])
        super().__init__(hub, conversation, **options)


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("how", ["by name", "call_tool"])
async def test_a_yes_runs_a_deferred_tool_whose_grant_a_person_approves(
    hub: ToolHub, mode: str, how: str
):
    asked: list[str] = []
    async with connect(
        toolpalette.mcp.server(hub, fx.Palette), mode, answering("accept", True, asked)
    ) as client:
        if how == "by name":
            result = await client.call_tool("wipe_table", {"table": "orders"})
        else:
            arguments = {"name": "wipe_table", "arguments": {"table": "orders"}}
            result = await client.call_tool("call_tool", arguments)
    assert not result.is_error, result.content[0].text
    assert result.content[0].text == "wiped orders"
    assert fx.WIPED == ["orders"]
    assert asked == ["Approve this call of the tool 'wipe_table'?\nInput:\n  table: \"orders\""]
    assert ledger(hub, "wipe_table")[-2:] == [
        ("call", "granted", "a person's decision"),
        ("tool", "granted", "a person's decision at call time"),
    ]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("action", "approve"), [("accept", False), ("decline", None), ("cancel", None)]
)
async def test_a_no_is_the_pipelines_403_and_recorded_refused(
    hub: ToolHub, mode: str, action: str, approve: Any
):
    async with connect(
        toolpalette.mcp.server(hub, fx.Palette), mode, answering(action, approve)
    ) as client:
        result = await client.call_tool("wipe_table", {"table": "orders"})
    assert result.is_error
    assert result.content[0].text == "Tool 'wipe_table' was not approved."
    assert fx.WIPED == []
    assert ledger(hub, "wipe_table")[-2:] == [
        ("call", "refused", "a person's decision"),
        ("tool", "refused", "a person's decision at call time"),
    ]


@pytest.mark.parametrize("mode", ERAS)
async def test_an_offered_tool_the_policy_asks_about_is_asked_too(hub: ToolHub, mode: str):
    asked: list[str] = []
    async with connect(
        toolpalette.mcp.server(hub, AskFirst), mode, answering("accept", True, asked)
    ) as client:
        result = await client.call_tool("append_note", {"text": "hello"})
    assert result.content[0].text == "noted"
    assert len(asked) == 1
    waiting = "asked the client's user; the answer comes with the client's retry"
    asked_first = [("call", "refused", waiting)] if mode == "auto" else []
    assert ledger(hub, "append_note") == [*asked_first, ("call", "granted", "a person's decision")]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_client_that_cannot_ask_is_refused(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode, None) as client:
        result = await client.call_tool("wipe_table", {"table": "orders"})
    assert result.is_error
    assert result.content[0].text.startswith(
        "The call of 'wipe_table' needs a person's approval, and none could be asked"
    )
    assert fx.WIPED == []


async def test_an_elicitation_that_fails_is_a_no(hub: ToolHub):
    async def broken(ctx: Any, params: types.ElicitRequestParams) -> types.ErrorData:
        return types.ErrorData(code=types.INTERNAL_ERROR, message="the client's dialog crashed")

    async with Client(
        toolpalette.mcp.server(hub, fx.Palette), mode="legacy", elicitation_callback=broken
    ) as client:
        result = await client.call_tool("wipe_table", {"table": "orders"})
    assert result.content[0].text == "Tool 'wipe_table' was not approved."
    assert fx.WIPED == []


# -- the sealed request state of the 2026-07-28 era ---------------------------------------


async def first_round(server: Any, arguments: dict[str, Any]) -> types.InputRequiredResult:
    async with Client(server, elicitation_callback=answering("accept")) as client:
        first = await client.session.call_tool("wipe_table", arguments, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    return first


def yes() -> dict[str, Any]:
    return {"approval": types.ElicitResult(action="accept", content={"approve": True})}


async def test_another_server_with_the_same_keys_verifies_the_state(hub: ToolHub):
    # What two workers of one deployment are: separate servers, the same keys.
    first = await first_round(
        toolpalette.mcp.server(hub, fx.Palette, state_keys=[KEY]), {"table": "a"}
    )
    assert first.request_state is not None
    assert "toolpalette" not in first.request_state  # sealed: the client cannot read it
    assert fx.WIPED == []  # the tool did not run in the first round
    other = toolpalette.mcp.server(ToolHub(), fx.Palette, state_keys=["j" * 40, KEY])
    async with Client(other, elicitation_callback=answering("accept")) as client:
        done = await client.session.call_tool(
            "wipe_table",
            {"table": "a"},
            input_responses=yes(),
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, types.CallToolResult)
    assert done.content[0].text == "wiped a"


@pytest.mark.parametrize(
    ("keys", "arguments"),
    [([KEY], {"table": "b"}), (["j" * 40], {"table": "a"})],
    ids=["other arguments", "another key"],
)
async def test_a_state_for_other_arguments_or_under_another_key_is_refused(
    hub: ToolHub, keys: list[str], arguments: dict[str, Any]
):
    first = await first_round(
        toolpalette.mcp.server(hub, fx.Palette, state_keys=[KEY]), {"table": "a"}
    )
    other = toolpalette.mcp.server(ToolHub(), fx.Palette, state_keys=keys)
    async with Client(other, elicitation_callback=answering("accept")) as client:
        with pytest.raises(MCPError) as caught:
            await client.session.call_tool(
                "wipe_table",
                arguments,
                input_responses=yes(),
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert caught.value.code == types.INVALID_PARAMS
    assert caught.value.message == "Invalid or expired requestState"
    assert fx.WIPED == []


async def test_an_answer_without_a_sealed_state_is_no_answer(hub: ToolHub):
    async with Client(
        toolpalette.mcp.server(hub, fx.Palette), elicitation_callback=answering("accept")
    ) as client:
        again = await client.session.call_tool(
            "wipe_table", {"table": "a"}, input_responses=yes(), allow_input_required=True
        )
    assert isinstance(again, types.InputRequiredResult)  # asked again: nothing ran
    assert fx.WIPED == []


@pytest.mark.parametrize("keys", [["short"], ["k" * 32, "k" * 32], []])
def test_state_keys_are_checked_when_the_server_is_made(hub: ToolHub, keys: list[str]):
    with pytest.raises(ValueError, match="key"):
        toolpalette.mcp.server(hub, fx.Palette, state_keys=keys)


@pytest.mark.parametrize("mode", ERAS)
async def test_overlapping_requests_each_ask_their_own_client(hub: ToolHub, mode: str):
    """Each call's approval reaches the asker of the request it came in, and no other's."""
    server = toolpalette.mcp.server(hub, fx.Palette)
    asked: dict[str, list[str]] = {"alice": [], "bob": []}
    both = anyio.Event()

    def person(who: str, approve: bool) -> Answer:
        async def answer(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked[who].append(params.message)
            if all(asked.values()):
                both.set()
            with anyio.fail_after(10):
                await both.wait()  # both calls wait for a person at once
            return types.ElicitResult(action="accept", content={"approve": approve})

        return answer

    async def call(who: str, approve: bool, table: str) -> Any:
        async with connect(server, mode, person(who, approve)) as client:
            return await client.call_tool("wipe_table", {"table": table})

    results: dict[str, Any] = {}

    async def run(who: str, approve: bool, table: str) -> None:
        results[who] = await call(who, approve, table)

    async with anyio.create_task_group() as group:
        group.start_soon(run, "alice", True, "orders")
        group.start_soon(run, "bob", False, "users")
    assert asked["alice"] == [
        "Approve this call of the tool 'wipe_table'?\nInput:\n  table: \"orders\""
    ]
    assert asked["bob"] == [
        "Approve this call of the tool 'wipe_table'?\nInput:\n  table: \"users\""
    ]
    assert results["alice"].content[0].text == "wiped orders"
    assert results["bob"].is_error
    assert fx.WIPED == ["orders"]
