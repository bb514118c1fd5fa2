"""The palette server driven by the SDK's own client, in-process, in both protocol eras.

``mode="legacy"`` is the 2025-11-25 handshake era (a session per connection, so a
thinker per session); ``mode="auto"`` is the 2026-07-28 era, where every request stands
alone and shares one thinker that keeps no grants. Both are served the palette, its
meta-tools and ``call_tool`` (last in the listing); deferral and approvals over MCP
are in test_deferral.py and test_approvals.py.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import palette_fixture as fx
import pytest
import toolpalette.mcp
from mcp import Client
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from toolpalette import ToolHub
from toolpalette.testing import await_until, leak_check

ERAS = ["legacy", "auto"]


@pytest.fixture(scope="module")
def hub() -> ToolHub:
    return ToolHub()


@asynccontextmanager
async def connect(server: Any, mode: str = "legacy", **options: Any) -> AsyncIterator[Client]:
    async with Client(server, mode=mode, **options) as client:
        yield client


async def all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools


# -- tools/list ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_pages_come_in_registration_order_with_opaque_cursors(hub: ToolHub, mode: str):
    server = toolpalette.mcp.server(hub, fx.Many, page_size=100)
    async with connect(server, mode) as client:
        first = await client.list_tools()
        assert [t.name for t in first.tools] == [f"t{i:04d}" for i in range(100)]
        assert first.next_cursor is not None
        assert "100" not in first.next_cursor  # opaque, not a bare position
        tools = await all_tools(client)
    assert [t.name for t in tools] == [f"t{i:04d}" for i in range(250)] + ["call_tool"]


async def test_page_size_is_configurable(hub: ToolHub):
    server = toolpalette.mcp.server(hub, fx.Many, page_size=7)
    async with connect(server) as client:
        page = await client.list_tools()
        assert len(page.tools) == 7
        assert len(await all_tools(client)) == 251  # and call_tool


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("cursor", ["garbage", "tp1.AAAA", "", "tp1." + "A" * 200])
async def test_an_invalid_cursor_is_invalid_params(hub: ToolHub, mode: str, cursor: str):
    server = toolpalette.mcp.server(hub, fx.Many)
    async with connect(server, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.list_tools(cursor=cursor, cache_mode="refresh")
    assert caught.value.code == types.INVALID_PARAMS
    assert "cursor" in caught.value.message.lower()


async def test_a_cursor_of_another_palette_is_stale(hub: ToolHub):
    many = toolpalette.mcp.server(hub, fx.Many, page_size=10)
    other = toolpalette.mcp.server(hub, fx.Palette, page_size=3)
    async with connect(many) as client:
        foreign = (await client.list_tools()).next_cursor
    async with connect(other) as client:
        with pytest.raises(MCPError) as caught:
            await client.list_tools(cursor=foreign)
    assert caught.value.code == types.INVALID_PARAMS
    assert "Stale cursor" in caught.value.message


async def test_a_cursor_is_valid_in_another_server_serving_the_same_palette(hub: ToolHub):
    # What two workers of one deployment are: separate servers, same palette.
    first = toolpalette.mcp.server(hub, fx.Many, page_size=100)
    second = toolpalette.mcp.server(ToolHub(), fx.Many, page_size=100)
    async with connect(first) as client:
        cursor = (await client.list_tools()).next_cursor
    async with connect(second) as client:
        page = await client.list_tools(cursor=cursor)
    assert page.tools[0].name == "t0100"


@pytest.mark.parametrize("mode", ERAS)
async def test_each_tool_carries_schemas_title_and_annotations(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode) as client:
        tools = {t.name: t for t in await all_tools(client)}
    add = tools["add"]
    assert add.title == "Add numbers"
    assert add.input_schema["required"] == ["a", "b"]
    assert add.output_schema is not None
    assert add.output_schema["properties"]["total"]["type"] == "integer"
    assert tools["echo"].output_schema is None  # text output publishes no schema
    annotations = {n: t.annotations for n, t in tools.items()}
    assert annotations["echo"] is not None
    assert annotations["echo"].read_only_hint is True
    assert annotations["echo"].open_world_hint is False
    assert annotations["echo"].destructive_hint is None  # meaningless for read-only
    delete = annotations["delete_row"]
    assert delete is not None
    assert (delete.read_only_hint, delete.destructive_hint) == (False, True)
    assert (delete.idempotent_hint, delete.open_world_hint) == (False, True)
    note = annotations["append_note"]
    assert note is not None
    assert (note.destructive_hint, note.idempotent_hint, note.open_world_hint) == (
        False,
        True,
        False,
    )


async def test_the_2026_era_listing_carries_private_cache_hints(hub: ToolHub):
    server = toolpalette.mcp.server(hub, fx.Palette, list_ttl_ms=1234)
    async with connect(server, "auto") as client:
        assert client.protocol_version == "2026-07-28"
        page = await client.list_tools(cache_mode="refresh")
    assert page.ttl_ms == 1234
    assert page.cache_scope == "private"


@pytest.mark.parametrize(
    ("mode", "stateless"), [("legacy", False), ("auto", False), ("legacy", True)]
)
async def test_every_era_and_mode_serves_the_meta_tools_and_call_tool(
    hub: ToolHub, mode: str, stateless: bool
):
    server = toolpalette.mcp.server(hub, fx.Palette, stateless=stateless)
    async with connect(server, mode) as client:
        names = [t.name for t in await all_tools(client)]
        capabilities = client.server_capabilities
    assert names[-3:] == ["request_tools", "request_skill", "call_tool"]
    assert "echo" in names
    assert "secret_lookup" not in names  # deferred: reached through the meta-tools
    assert capabilities.tools is not None
    assert bool(capabilities.tools.list_changed) is (mode == "legacy" and not stateless)


# -- tools/call ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_success_is_text_and_structured_content_when_there_is_a_schema(
    hub: ToolHub, mode: str
):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode) as client:
        await all_tools(client)
        added = await client.call_tool("add", {"a": 2, "b": 3})
        echoed = await client.call_tool("echo", {"text": "hi"})
    assert not added.is_error
    assert added.structured_content == {"total": 5}
    assert added.content[0].type == "text"
    assert '"total":5' in added.content[0].text.replace(" ", "")
    assert not echoed.is_error
    assert echoed.structured_content is None
    assert echoed.content[0].text == "hi"


@pytest.mark.parametrize("mode", ERAS)
async def test_an_image_reaches_the_client_as_an_image_block(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode) as client:
        await all_tools(client)
        result = await client.call_tool("snapshot", {})
    assert not result.is_error
    blocks = [b for b in result.content if b.type == "image"]
    assert len(blocks) == 1
    assert blocks[0].mime_type == "image/png"
    assert base64.b64decode(blocks[0].data) == fx.PIXEL


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("name", ["no_such_tool", "vault_lookup", "t0001"])
async def test_unknown_and_refused_names_are_the_same_invalid_params(
    hub: ToolHub, mode: str, name: str
):
    # vault_lookup is deferred and its grant refused; t0001 exists in another palette.
    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.session.call_tool(name, {})
    assert caught.value.code == types.INVALID_PARAMS
    assert caught.value.message == f"Unknown tool: {name}"


@pytest.mark.parametrize("name", ["x" * 65, "sk-SECRET 0a9b8c7d", "a/b", ""])
async def test_a_name_no_tool_could_have_is_not_repeated_in_the_error(hub: ToolHub, name: str):
    async with connect(toolpalette.mcp.server(hub, fx.Palette)) as client:
        with pytest.raises(MCPError) as caught:
            await client.session.call_tool(name, {})
    assert caught.value.code == types.INVALID_PARAMS
    assert caught.value.message == "Unknown tool"


async def test_a_read_only_binding_hides_mutating_tools_as_unknown(hub: ToolHub):
    async with connect(toolpalette.mcp.server(hub, fx.Palette, read_only=True)) as client:
        names = [t.name for t in await all_tools(client)]
        assert "delete_row" not in names
        assert "echo" in names
        with pytest.raises(MCPError) as caught:
            await client.session.call_tool("delete_row", {"row": 1})
    assert caught.value.message == "Unknown tool: delete_row"


async def test_a_name_that_is_not_a_string_is_invalid_params(hub: ToolHub):
    request = types.CallToolRequest.model_construct(
        method="tools/call",
        params=types.CallToolRequestParams.model_construct(name=42, arguments={}),
    )
    async with connect(toolpalette.mcp.server(hub, fx.Palette)) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the client's own serializer objects
            with pytest.raises(MCPError) as caught:
                await client.session.send_request(request, types.CallToolResult)
    assert caught.value.code == types.INVALID_PARAMS
    assert caught.value.message == "Unknown tool"


async def test_absent_arguments_are_an_empty_object(hub: ToolHub):
    async with connect(toolpalette.mcp.server(hub, fx.Palette)) as client:
        result = await client.call_tool("explode")  # takes no input: {} is valid
        missing = await client.call_tool("echo")  # needs "text": {} is a 400
    assert result.is_error
    assert "unexpected" in result.content[0].text.lower() or "failed" in result.content[0].text
    assert missing.is_error
    assert "text" in missing.content[0].text


@pytest.mark.parametrize("mode", ERAS)
async def test_every_refusal_is_an_error_result_with_the_pipelines_text(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode) as client:
        await all_tools(client)
        bad_input = await client.call_tool("add", {"a": "two", "b": 3})  # 400
        denied = await client.call_tool("guarded", {})  # 403
        too_big = await client.call_tool("chatter", {})  # 413
        refused = await client.call_tool("refuse", {})  # ToolError: 422, message kept
        timed_out = await client.call_tool("dawdle", {})  # 504
        failed = await client.call_tool("explode", {})  # 500, generic
    for result in (bad_input, denied, too_big, refused, timed_out, failed):
        assert result.is_error
        assert result.structured_content is None
    assert "a" in bad_input.content[0].text
    assert "integer" in bad_input.content[0].text
    assert "guarded" in denied.content[0].text
    assert "16 bytes" in too_big.content[0].text
    assert refused.content[0].text == "The quota for today is used up; try again tomorrow."
    assert "0.2 seconds" in timed_out.content[0].text
    assert fx.CANARY not in failed.content[0].text
    assert "RuntimeError" not in failed.content[0].text


async def test_a_canary_in_an_exception_never_reaches_the_client(hub: ToolHub):
    seen: list[str] = []

    async def record(message: Any) -> None:
        seen.append(repr(message))

    async with connect(toolpalette.mcp.server(hub, fx.Palette), message_handler=record) as c:
        result = await c.call_tool("explode", {})
    assert result.is_error
    assert fx.CANARY not in result.model_dump_json()
    assert all(fx.CANARY not in text for text in seen)


async def test_a_call_the_policy_asks_about_is_refused_when_the_client_cannot_ask(hub: ToolHub):
    # The client declares no elicitation: see test_approvals.py for one that does.
    class AskFirst(fx.Palette):
        def __init__(self, hub: Any, conversation: Any = None, **options: Any) -> None:
            options["policy"] = toolpalette.ToolPolicy(ask=["append_note"])
            super().__init__(hub, conversation, **options)

    async with connect(toolpalette.mcp.server(hub, AskFirst)) as client:
        result = await asyncio.wait_for(client.call_tool("append_note", {"text": "x"}), 10)
    assert result.is_error
    assert "append_note" in result.content[0].text


async def test_a_request_before_the_handshake_is_refused_as_the_sdk_refuses_it(hub: ToolHub):
    server = toolpalette.mcp.server(hub, fx.Palette)
    refusals: list[tuple[int, str]] = []
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        async with anyio.create_task_group() as group:
            group.start_soon(server.run, *server_streams, server.create_initialization_options())
            async with ClientSession(*client_streams) as session:
                for request in (session.list_tools(), session.call_tool("echo", {"text": "x"})):
                    with pytest.raises(MCPError) as caught:
                        await request
                    refusals.append((caught.value.code, caught.value.message))
                await session.initialize()
                echoed = await session.call_tool("echo", {"text": "after"})
            group.cancel_scope.cancel()
    assert refusals == [(types.INVALID_PARAMS, "Invalid request parameters")] * 2
    assert echoed.content[0].text == "after"


async def test_a_2026_era_answer_carries_the_envelope_the_sdk_puts_on_its_own(hub: ToolHub):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), "auto") as client:
        page = await client.list_tools(cache_mode="refresh")
        echoed = await client.call_tool("echo", {"text": "hi"})
    for answer in (page, echoed):
        assert answer.result_type == "complete"
        assert answer.meta is not None
        assert answer.meta[types.SERVER_INFO_META_KEY]["name"] == "toolpalette"


# -- sessions, grants and list_changed ----------------------------------------------------


async def test_a_grant_shows_in_the_sessions_next_listing_and_is_announced(hub: ToolHub):
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    server = toolpalette.mcp.server(hub, fx.Palette)
    async with connect(server, message_handler=on_message) as client:
        granted = await client.call_tool("request_tools", {"names": ["secret_lookup"]})
        assert not granted.is_error, granted.content[0].text
        with anyio.fail_after(5):
            await changed.wait()
        names = [t.name for t in await all_tools(client)]
        assert "secret_lookup" in names
        looked_up = await client.call_tool("secret_lookup", {"key": "k"})
        assert looked_up.content[0].text == "value of k"
        # another session has a thinker of its own: nothing was granted there
        async with connect(server) as other:
            assert "secret_lookup" not in [t.name for t in await all_tools(other)]


async def test_a_cursor_from_before_a_grant_is_stale(hub: ToolHub):
    server = toolpalette.mcp.server(hub, fx.Palette, page_size=2)
    async with connect(server) as client:
        cursor = (await client.list_tools()).next_cursor
        await client.call_tool("request_tools", {"names": ["secret_lookup"]})
        with pytest.raises(MCPError) as caught:
            await client.list_tools(cursor=cursor)
    assert "Stale cursor" in caught.value.message


# -- progress and cancellation ------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tools_progress_reaches_the_client_in_order(hub: ToolHub, mode: str):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode) as client:
        await all_tools(client)
        result = await client.call_tool("count", {"steps": 3}, progress_callback=on_progress)
    assert result.content[0].text == "counted 3"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_cancelling_a_call_aborts_it_in_the_pipeline(
    hub: ToolHub, caplog: pytest.LogCaptureFixture
):
    fx.STARTED.clear()
    fx.ABORTED.clear()
    caplog.set_level(logging.INFO, logger="toolpalette.mcp")
    async with leak_check(deadline=10):
        async with connect(toolpalette.mcp.server(hub, fx.Palette)) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "wait_for_abort", {})
                await await_until(fx.STARTED.is_set, timeout=10, message="the tool started")
                group.cancel_scope.cancel()  # the client sends notifications/cancelled
            await await_until(fx.ABORTED.is_set, timeout=10, message="the tool was told to stop")
            # the pipeline ended the call as the caller's abort, and the session goes on
            await await_until(
                lambda: "wait_for_abort: The client cancelled the call. (499)" in caplog.text,
                timeout=10,
                message="the call ended with 499",
            )
            echoed = await client.call_tool("echo", {"text": "still here"})
            assert echoed.content[0].text == "still here"


# -- skills as prompts and resources ------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_skills_are_prompts_and_their_files_resources(hub: ToolHub, mode: str):
    async with connect(toolpalette.mcp.server(hub, fx.Palette), mode) as client:
        prompts = (await client.list_prompts()).prompts
        names = sorted(p.name for p in prompts)
        assert names == [
            "io.toolpalette.sql/explore-sqlite-schema",
            "io.toolpalette.sql/write-parameterized-migrations",
        ]
        prompt = await client.get_prompt("io.toolpalette.sql/explore-sqlite-schema")
        body = hub.skills().skill("io.toolpalette.sql/explore-sqlite-schema").body()
        assert prompt.messages[0].content.text == body
        resources = (await client.list_resources()).resources
        uris = sorted(str(r.uri) for r in resources)
        assert (
            "skill://io.toolpalette.sql/explore-sqlite-schema/references/catalog-queries.md" in uris
        )
        read = await client.read_resource(
            "skill://io.toolpalette.sql/explore-sqlite-schema/references/catalog-queries.md"
        )
        expected = hub.skills().skill("io.toolpalette.sql/explore-sqlite-schema")
        assert read.contents[0].text == expected.read_text("references/catalog-queries.md")


@pytest.mark.parametrize(
    "uri",
    [
        "skill://io.toolpalette.sql/explore-sqlite-schema/../write-parameterized-migrations/SKILL.md",
        "skill://io.toolpalette.sql/explore-sqlite-schema/%2e%2e/x",
        "skill://io.toolpalette.sql/explore-sqlite-schema/references%5Ccatalog-queries.md",
        "file:///etc/passwd",
        "skill://io.toolpalette.sql/explore-sqlite-schema",
    ],
)
async def test_resource_paths_follow_the_skill_loaders_rules(hub: ToolHub, uri: str):
    async with connect(toolpalette.mcp.server(hub, fx.Palette)) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert caught.value.code == types.INVALID_PARAMS


async def test_unknown_prompts_and_resources_are_errors(hub: ToolHub):
    async with connect(toolpalette.mcp.server(hub, fx.Palette)) as client:
        with pytest.raises(MCPError) as prompt:
            await client.get_prompt("io.toolpalette.files/safe-bulk-edits")  # not this thinker's
        with pytest.raises(MCPError) as resource:
            await client.read_resource(
                "skill://io.toolpalette.sql/explore-sqlite-schema/references/nope.md"
            )
    assert prompt.value.code == types.INVALID_PARAMS
    assert resource.value.code == -32002
