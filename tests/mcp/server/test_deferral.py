"""Deferred tools over MCP, in every protocol era and mode, through the SDK's own client.

Every client is served the palette, the meta-tools of the thinker's ``tool_search``
mode and ``call_tool``. Requests without a session (the 2026-07-28 era, stateless HTTP)
share one thinker that keeps nothing: their listing never moves, and a deferred tool is
admitted at each call (by its own name or through ``call_tool``). A stateful session
keeps its grants as before. Every decision is on the grant ledger, as in a host.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import palette_fixture as fx
import pytest
import toolpalette
import toolpalette.mcp
from mcp import Client
from mcp.shared.exceptions import MCPError
from toolpalette import Thinker, ToolHub, ToolSelector

# (client mode, stateless server): the 2025-era session, the 2026-07-28 era, and the
# 2025 era without sessions (stateless HTTP's rules, in-process).
MODES = [("legacy", False), ("auto", False), ("legacy", True)]
IDS = ["session", "2026-07-28", "stateless"]


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub()


@asynccontextmanager
async def connect(server: Any, mode: str, **options: Any) -> AsyncIterator[Client]:
    async with Client(server, mode=mode, **options) as client:
        yield client


async def names(client: Client) -> list[str]:
    found: list[str] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        found.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return found


def decisions(hub: ToolHub, name: str) -> list[tuple[str, str, str]]:
    return [(r.kind, r.decision, r.reason) for r in hub.grants() if r.name == name]


@pytest.mark.parametrize(("mode", "stateless"), MODES, ids=IDS)
async def test_search_then_call_a_deferred_tool_by_name_and_through_call_tool(
    hub: ToolHub, mode: str, stateless: bool
):
    server = toolpalette.mcp.server(hub, fx.Searching, stateless=stateless)
    async with connect(server, mode) as client:
        listed = await names(client)
        assert {"search_tools", "search_skills", "call_tool"} <= set(listed)
        assert "secret_lookup" not in listed
        found = await client.call_tool("search_tools", {"query": "look up a secret", "limit": 3})
        assert not found.is_error, found.content[0].text
        assert found.structured_content is not None
        matches = found.structured_content["tools"]
        assert matches[0]["name"] == "secret_lookup"
        assert matches[0]["input_schema"]["required"] == ["key"]
        assert "vault_lookup" not in [m["name"] for m in matches]  # refused: left out
        direct = await client.call_tool("secret_lookup", {"key": "k"})
        wrapped = await client.call_tool(
            "call_tool", {"name": "secret_lookup", "arguments": {"key": "k"}}
        )
    assert direct.content[0].text == wrapped.content[0].text == "value of k"
    assert not direct.is_error
    assert not wrapped.is_error
    assert ("tool", "granted", "") in decisions(hub, "secret_lookup")


@pytest.mark.parametrize(("mode", "stateless"), MODES[1:], ids=IDS[1:])
async def test_without_a_session_the_listing_never_moves(hub: ToolHub, mode: str, stateless: bool):
    server = toolpalette.mcp.server(hub, fx.Palette, stateless=stateless)
    async with connect(server, mode) as first:
        before = await names(first)
        granted = await first.call_tool("request_tools", {"names": ["secret_lookup"]})
        assert not granted.is_error, granted.content[0].text
        assert "secret_lookup" in json.loads(granted.content[0].text)["granted"]
        called = await first.call_tool("secret_lookup", {"key": "x"})
        assert called.content[0].text == "value of x"
        after = await names(first)
        async with connect(server, mode) as second:
            other = await names(second)
    assert before == after == other
    assert "secret_lookup" not in after
    assert [r.reason for r in hub.grants() if r.name == "secret_lookup"] == [
        "",
        "admitted for one call",
    ]


async def test_a_session_keeps_its_grants_and_is_also_served_call_tool(hub: ToolHub):
    server = toolpalette.mcp.server(hub, fx.Palette)
    async with connect(server, "legacy") as client:
        wrapped = await client.call_tool(
            "call_tool", {"name": "secret_lookup", "arguments": {"key": "before"}}
        )
        assert wrapped.content[0].text == "value of before"
        assert "secret_lookup" not in await names(client)  # a call at call time keeps nothing
        await client.call_tool("request_tools", {"names": ["secret_lookup"]})
        assert "secret_lookup" in await names(client)


async def test_call_tool_answers_as_the_tool_itself(hub: ToolHub):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), "auto") as client:
        direct = await client.call_tool("add", {"a": 2, "b": 3})
        wrapped = await client.call_tool(
            "call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}}
        )
        refused = await client.call_tool("add", {"a": "two", "b": 3})
        wrapped_refused = await client.call_tool(
            "call_tool", {"name": "add", "arguments": {"a": "two", "b": 3}}
        )
        no_arguments = await client.call_tool("call_tool", {"name": "explode"})
    assert wrapped.structured_content == direct.structured_content == {"total": 5}
    assert wrapped.content[0].text == direct.content[0].text
    assert wrapped_refused.is_error
    assert refused.is_error
    assert wrapped_refused.content[0].text == refused.content[0].text
    assert no_arguments.is_error  # {} by default: the tool ran (and failed as it does)
    assert "internal error" in no_arguments.content[0].text


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"name": 42},
        {"name": "add", "arguments": [1, 2]},
        {"name": "add", "arguments": {}, "extra": "sk-CANARY-9f8e"},
    ],
)
async def test_call_tools_own_input_is_checked_as_any_tools_is(hub: ToolHub, arguments: Any):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), "auto") as client:
        result = await client.call_tool("call_tool", arguments)
    assert result.is_error
    text = result.content[0].text
    assert "call_tool" in text
    assert "sk-CANARY" not in text
    assert "42" not in text


@pytest.mark.parametrize("target", ["request_tools", "call_tool", "vault_lookup", "no_such_tool"])
@pytest.mark.parametrize(("mode", "stateless"), MODES, ids=IDS)
async def test_call_tool_reaches_no_meta_tool_and_nothing_refused(
    hub: ToolHub, target: str, mode: str, stateless: bool
):
    server = toolpalette.mcp.server(hub, fx.Palette, stateless=stateless)
    async with connect(server, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("call_tool", {"name": target, "arguments": {}})
    assert caught.value.code == types.INVALID_PARAMS
    assert caught.value.message == f"Unknown tool: {target}"


@pytest.mark.parametrize(("mode", "stateless"), MODES, ids=IDS)
async def test_a_refused_deferred_tool_is_the_unknown_tool_and_on_the_ledger(
    hub: ToolHub, mode: str, stateless: bool
):
    server = toolpalette.mcp.server(hub, fx.Palette, stateless=stateless)
    async with connect(server, mode) as client:
        answers = []
        for name in ("vault_lookup", "no_such_tool"):
            with pytest.raises(MCPError) as caught:
                await client.call_tool(name, {"key": "k"})
            answers.append((caught.value.code, caught.value.message.replace(name, "NAME")))
    assert answers[0] == answers[1] == (types.INVALID_PARAMS, "Unknown tool: NAME")
    assert decisions(hub, "vault_lookup") == [("tool", "refused", "denied by policy")]


async def test_a_read_only_binding_reaches_no_mutating_tool_through_call_tool(hub: ToolHub):
    server = toolpalette.mcp.server(hub, fx.Palette, read_only=True)
    wiped = list(fx.WIPED)  # another test of this worker may have wiped a table
    async with connect(server, "auto") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for target in ("delete_row", "wipe_table"):
            with pytest.raises(MCPError) as caught:
                await client.call_tool("call_tool", {"name": target, "arguments": {"row": 1}})
            assert caught.value.message == f"Unknown tool: {target}"
    annotations = listed["call_tool"].annotations
    assert annotations is not None
    assert annotations.read_only_hint is True
    assert wiped == fx.WIPED


@toolpalette.tool(read_only=True, open_world=False)
def peek(key: str) -> str:
    """Read a key (closed world)."""
    return key


@toolpalette.tool(destructive=False, idempotent=True, open_world=False)
def tag(key: str) -> str:
    """Tag a key (mutating, additive, idempotent, closed world)."""
    return key


@toolpalette.tool
def purge(key: str) -> str:
    """Purge a key (mutating, destructive, open world)."""
    return key


def annotated(*offered: Any, deferred: Any = ()) -> type[Thinker]:
    class Annotated(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector()
            for tool in offered:
                selector.tool(tool)
            for tool in deferred:
                selector.tool(tool, deferred=True)
            return selector

    return Annotated


@pytest.mark.parametrize(
    ("thinker", "expected"),
    [
        (annotated(peek), (True, None, None, False)),
        (annotated(peek, tag), (False, False, True, False)),
        (annotated(peek, tag, deferred=[purge]), (False, True, False, True)),
    ],
    ids=["read-only", "additive", "a deferred destructive tool"],
)
async def test_call_tools_annotations_are_the_least_permissive_of_what_it_reaches(
    thinker: type[Thinker], expected: tuple[Any, ...]
):
    hub = ToolHub(autoload=False)
    async with connect(toolpalette.mcp.server(hub, thinker), "auto") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    hints = tools["call_tool"].annotations
    assert hints is not None
    got = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
    assert (*got, hints.open_world_hint) == expected
    assert tools["call_tool"].input_schema["required"] == ["name"]


async def test_the_ledger_says_what_a_host_thinker_would(hub: ToolHub):
    server = toolpalette.mcp.server(hub, fx.Palette, stateless=True)
    async with connect(server, "auto") as client:
        await client.call_tool("secret_lookup", {"key": "k"})
        with pytest.raises(MCPError):
            await client.call_tool("vault_lookup", {"key": "k"})
    served = [(r.kind, r.name, r.decision, r.reason) for r in hub.grants()]
    host = ToolHub()
    thinker = host.bind(fx.Palette, keep_grants=False)
    thinker.begin_turn()
    await thinker.call("secret_lookup", {"key": "k"}, deferred=True)
    await thinker.call("vault_lookup", {"key": "k"}, deferred=True)
    assert served == [(r.kind, r.name, r.decision, r.reason) for r in host.grants()]
