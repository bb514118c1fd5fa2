"""The client pool and the provider, against SDK servers: in-process and over stdio.

Pagination, cache hints and list changes, validation of tool descriptions, both failure
shapes, content blocks, the output cap; a server killed mid-call, a timeout and an abort
(each sends ``notifications/cancelled``), and one connection shared by many callers.
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import MCPError
from mcp.server import Server
from mcp.server.mcpserver import Context, MCPServer
from toolpalette import (
    AbortSignal,
    Audio,
    Executor,
    File,
    Image,
    ResourceLink,
    ToolContext,
    ToolErrorReport,
    ToolHub,
    ToolRegistry,
    render_result,
    tool,
)
from toolpalette.mcp import MCPServerConfig
from toolpalette.testing import await_until, wait_until

from .conftest import PROCESS_WAIT, SLOW_SERVER, alive, server_pids


def executor(hub: ToolHub, **options: Any) -> Executor:
    return Executor(hub.catalog(), **options)


def tool_of(name: str, **extra: Any) -> types.Tool:
    fields: dict[str, Any] = {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    fields.update(extra)
    return types.Tool(**fields)


def lowlevel(
    tools: list[types.Tool],
    call: Callable[[str, dict[str, Any]], Any] | None = None,
    page_size: int = 100,
    ttl_ms: int | None = None,
) -> tuple[Server[Any], list[str | None]]:
    """A lowlevel SDK server listing ``tools`` in pages; returns it and the cursors asked."""
    asked: list[str | None] = []

    async def on_list_tools(_ctx: Any, params: Any) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        asked.append(cursor)
        start = int(cursor) if cursor else 0
        end = start + page_size
        more = str(end) if end < len(tools) else None
        extra = {"ttl_ms": ttl_ms} if ttl_ms is not None else {}
        return types.ListToolsResult(tools=tools[start:end], next_cursor=more, **extra)

    async def on_call_tool(_ctx: Any, params: Any) -> types.CallToolResult:
        assert call is not None
        return call(params.name, dict(params.arguments or {}))  # type: ignore[no-any-return]

    server: Server[Any] = Server("test", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    return server, asked


# -- listing ------------------------------------------------------------------------------


def test_listing_follows_next_cursor(make_hub: Callable[..., ToolHub]):
    tools = [tool_of(f"t{i}") for i in range(7)]
    server, asked = lowlevel(tools, page_size=3)
    hub = make_hub(mcp_servers={"paged": server})
    assert [p.name for p in hub.providers_for_server("paged")] == [f"t{i}" for i in range(7)]
    assert asked == [None, "3", "6"]


def test_listing_is_kept_until_its_ttl_runs_out(make_hub: Callable[..., ToolHub]):
    server, asked = lowlevel([tool_of("a")], ttl_ms=1)  # read as the one-second floor
    hub = make_hub(mcp_servers={"s": server})
    hub.providers_for_server("s")
    hub.providers_for_server("s")
    assert asked == [None]
    wait_until(lambda: (hub.providers_for_server("s"), len(asked) > 1)[1], timeout=10)
    assert asked == [None, None]


def test_listing_without_a_hint_is_kept(make_hub: Callable[..., ToolHub]):
    server, asked = lowlevel([tool_of("a")])
    hub = make_hub(mcp_servers={"s": server})
    for _ in range(3):
        hub.providers_for_server("s")
    assert asked == [None]


def test_list_changed_refreshes_the_palette(make_hub: Callable[..., ToolHub]):
    server = MCPServer("growing")

    def extra(n: int) -> int:
        """A tool added while the server runs."""
        return n * 2

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool and say so."""
        server.add_tool(extra)
        await ctx.notify_tools_changed()
        return "grown"

    hub = make_hub(mcp_servers={"g": server})
    assert [p.name for p in hub.providers_for_server("g")] == ["grow"]
    before = hub.version
    assert executor(hub).execute_sync("grow", {}).structured == {"result": "grown"}
    wait_until(lambda: hub.version != before, timeout=PROCESS_WAIT)
    # The new listing is read in the background; the last good one serves meanwhile.
    wait_until(
        lambda: sorted(p.name for p in hub.providers_for_server("g")) == ["extra", "grow"],
        timeout=PROCESS_WAIT,
    )
    assert executor(hub).execute_sync("extra", {"n": 21}).text == '{"result":42}'


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        (tool_of("bad name!"), "not a valid tool name"),
        (tool_of("quiet", description=None), "no description"),
        (tool_of("blank", description="   "), "no description"),
        (tool_of("ctrl", description="a\x00b"), "control characters"),
        (tool_of("required", input_schema={"type": "object", "required": "n"}), "input schema"),
        (tool_of("broken", input_schema={"type": "object", "properties": 3}), "input schema"),
        (
            tool_of(
                "remote",
                output_schema={"type": "object", "$ref": "https://example.com/schema.json"},
            ),
            "only local references",
        ),
        (
            tool_of(
                "remote_in",
                input_schema={
                    "type": "object",
                    "properties": {"x": {"$ref": "http://127.0.0.1:9/x.json"}},
                },
            ),
            "only local references",
        ),
    ],
)
def test_invalid_tool_descriptions_are_problems(
    make_hub: Callable[..., ToolHub], tool: types.Tool, why: str
):
    server, _ = lowlevel([tool, tool_of("good")])
    hub = make_hub(mcp_servers={"s": server})
    assert [p.name for p in hub.providers_for_server("s")] == ["good"]
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack, problem.item) == ("invalid-tool", "mcp:s", tool.name)
    assert why in problem.reason


def test_two_tools_renamed_to_one_name_are_a_collision(make_hub: Callable[..., ToolHub]):
    server, _ = lowlevel([tool_of("a"), tool_of("b")])
    config = MCPServerConfig("s", server=server, rename={"a": "same", "b": "same"})
    hub = make_hub(mcp_servers={"s": config})
    assert hub.providers_for_server("s") == []
    assert [(p.kind, p.item) for p in hub.problems()] == [("collision", "same")]


# -- results ------------------------------------------------------------------------------


def test_json_rpc_error_is_generic_for_the_model_and_whole_in_the_report(
    make_hub: Callable[..., ToolHub],
):
    def call(_name: str, _args: dict[str, Any]) -> Any:
        raise MCPError(code=-32000, message="db password is hunter2", data={"trace": "x"})

    server, _ = lowlevel([tool_of("leaky")], call)
    hub = make_hub(mcp_servers={"s": server})
    reports: list[ToolErrorReport] = []
    delivered = threading.Event()

    def report(r: ToolErrorReport) -> None:
        reports.append(r)
        delivered.set()

    result = executor(hub, on_tool_error=report).execute_sync("leaky", {"n": 1}, context=_context())
    assert (result.status, result.code) == (502, "server_error")
    assert "hunter2" not in result.text
    assert "'leaky'" in result.text
    assert delivered.wait(10)
    cause = reports[0].error.__cause__ if reports[0].error is not None else None
    assert isinstance(cause, MCPError)
    assert "hunter2" in str(cause)


def _context() -> ToolContext:
    return ToolContext(run_id="r1")


def test_is_error_result_passes_the_message_on(make_hub: Callable[..., ToolHub]):
    def call(_name: str, _args: dict[str, Any]) -> Any:
        return types.CallToolResult(
            content=[types.TextContent(text="n must be even")], is_error=True
        )

    server, _ = lowlevel([tool_of("picky")], call)
    hub = make_hub(mcp_servers={"s": server})
    result = executor(hub).execute_sync("picky", {"n": 1})
    assert (result.status, result.code, result.text) == (422, "tool_error", "n must be even")


def test_content_blocks_map_onto_the_result(make_hub: Callable[..., ToolHub]):
    png = base64.b64encode(b"\x89PNG fake").decode()
    blocks = [
        types.TextContent(text="here you are"),
        types.ImageContent(data=png, mime_type="image/png"),
        types.AudioContent(data=png, mime_type="audio/wav"),
        types.ResourceLink(name="readme", uri="file:///r.md", mime_type="text/markdown"),
        types.EmbeddedResource(
            resource=types.TextResourceContents(uri="file:///e.txt", text="embedded")
        ),
    ]
    server, _ = lowlevel([tool_of("rich")], lambda _n, _a: types.CallToolResult(content=blocks))
    hub = make_hub(mcp_servers={"s": server})
    result = executor(hub).execute_sync("rich", {})
    assert not result.is_error, result
    assert result.content == [
        {"type": "text", "text": "here you are"},
        {"type": "image", "data": png, "mimeType": "image/png"},
        {"type": "audio", "data": png, "mimeType": "audio/wav"},
        {
            "type": "resource_link",
            "uri": "file:///r.md",
            "name": "readme",
            "mimeType": "text/markdown",
        },
        {
            "type": "resource",
            "resource": {"uri": "file:///e.txt", "mimeType": "text/plain", "text": "embedded"},
        },
    ]
    assert png not in result.text  # text-only readers get summaries, not base64
    # The same content from a local tool reads the same, block for block.
    local = Executor(ToolRegistry([rich_locally])).execute_sync("rich_locally", {})
    assert (local.content, local.text) == (result.content, result.text)
    # And every provider format renders the remote result as it renders the local one.
    for fmt in ("openai_chat", "openai_responses", "anthropic", "mcp"):
        assert render_result(fmt, result, "call_1") == render_result(fmt, local, "call_1")


@tool
def rich_locally() -> list[str | Image | Audio | ResourceLink | File]:
    """The blocks of the test above, from a local tool."""
    data = b"\x89PNG fake"
    return [
        "here you are",
        Image(data, "image/png"),
        Audio(data, "audio/wav"),
        ResourceLink("file:///r.md", "readme", mime_type="text/markdown"),
        File("embedded", "e.txt", "text/plain"),
    ]


@pytest.mark.parametrize(
    "block",
    [
        types.ImageContent(data="not base64!", mime_type="image/png"),
        types.ImageContent(data=base64.b64encode(b"x").decode(), mime_type="text/plain"),
        types.EmbeddedResource(
            resource=types.BlobResourceContents(uri="file:///b.bin", blob="%%%")
        ),
    ],
)
def test_unreadable_content_is_the_servers_fault(make_hub: Callable[..., ToolHub], block: Any):
    server, _ = lowlevel([tool_of("bad")], lambda _n, _a: types.CallToolResult(content=[block]))
    hub = make_hub(mcp_servers={"s": server})
    result = executor(hub).execute_sync("bad", {})
    assert (result.status, result.code) == (502, "server_error")
    assert "base64" not in result.text
    assert "%%%" not in result.text


def test_text_blocks_join_and_structured_content_is_kept(make_hub: Callable[..., ToolHub]):
    def call(name: str, _args: dict[str, Any]) -> Any:
        if name == "texts":
            return types.CallToolResult(
                content=[types.TextContent(text="one"), types.TextContent(text="two")]
            )
        return types.CallToolResult(
            content=[types.TextContent(text='{"n": 2}')], structured_content={"n": 2}
        )

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    server, _ = lowlevel([tool_of("texts"), tool_of("typed", output_schema=schema)], call)
    hub = make_hub(mcp_servers={"s": server})
    assert executor(hub).execute_sync("texts", {}).text == "one\ntwo"
    typed = executor(hub).execute_sync("typed", {})
    assert typed.structured == {"n": 2}


_COUNTED = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}}
"""An output schema the compiled quick check decides."""
_PATTERNED = {"type": "object", "properties": {"n": {"type": "string", "pattern": "^a+$"}}}
"""One it leaves to the validator (``pattern`` is outside its subset)."""


@pytest.mark.parametrize(
    ("schema", "good", "bad", "why"),
    [
        (_COUNTED, {"n": 2}, {"n": 12}, "at $.n: it fails 'maximum'"),
        (_PATTERNED, {"n": "aa"}, {"n": "ab"}, "at $.n: it fails 'pattern'"),
        (
            {"type": "object"},
            {"n": [[]] * 10},
            {"n": [[]] * 20_000},
            "the result is over a bound: at most 16384 arrays and objects in all "
            "(the bound on input for a hand-written schema)",
        ),
    ],
    ids=["quick-check", "validator", "container-bound"],
)
def test_structured_content_is_checked_against_the_output_schema_on_every_call(
    make_hub: Callable[..., ToolHub], schema: dict[str, Any], good: Any, bad: Any, why: str
):
    answers = iter([good, bad, good, bad])

    def call(_name: str, _args: dict[str, Any]) -> Any:
        structured = next(answers)
        return types.CallToolResult(content=[], structured_content=structured)

    server, _ = lowlevel([tool_of("typed", output_schema=schema)], call)
    hub = make_hub(mcp_servers={"s": server})
    reports: list[ToolErrorReport] = []
    run = executor(hub, on_tool_error=reports.append)
    # The check is compiled at the first call and kept: the later ones decide alike.
    outcomes = [run.execute_sync("typed", {}, context=_context()) for _ in range(4)]
    run.reports.join(10)
    assert [r.structured for r in outcomes[::2]] == [good, good]
    assert [(r.status, r.code) for r in outcomes[1::2]] == [(502, "server_error")] * 2
    assert [str(r.error.__cause__ if r.error else None) for r in reports] == [why, why]


def test_output_cap_applies_to_remote_content(make_hub: Callable[..., ToolHub]):
    big = types.CallToolResult(content=[types.TextContent(text="x" * 5000)])
    server, _ = lowlevel([tool_of("big")], lambda _n, _a: big)
    hub = make_hub(mcp_servers={"s": server})
    result = executor(hub, output_cap=1000).execute_sync("big", {})
    assert (result.status, result.code) == (413, "output_too_large")


# -- one connection, many callers ------------------------------------------------------------


def test_one_connection_serves_sync_and_async_callers_on_many_loops(
    make_hub: Callable[..., ToolHub],
):
    server = MCPServer("shared")

    @server.tool()
    def double(n: int) -> int:
        """Double n."""
        return 2 * n

    hub = make_hub(mcp_servers={"s": server})
    ex = executor(hub)
    results: list[str] = []

    def on_own_loop(n: int) -> None:
        results.append(asyncio.run(ex.execute("double", {"n": n})).text)

    threads = [threading.Thread(target=on_own_loop, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    results.append(ex.execute_sync("double", {"n": 10}).text)
    for t in threads:
        t.join()
    assert sorted(results) == sorted(f'{{"result":{2 * n}}}' for n in [0, 1, 2, 3, 10])
    assert hub.mcp().connection("s").starts == 1


# -- a stdio server that waits: crashes, timeouts, aborts ------------------------------------------


def slow(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SLOW_SERVER)], **extra}


def test_a_server_killed_mid_call_is_answered_at_once_and_restarted(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    hub = make_hub(mcp_servers={"slow": slow(timeout=120)})
    ex = executor(hub)
    marker = str(tmp_path / "call")
    box: list[Any] = []
    caller = threading.Thread(
        target=lambda: box.append(ex.execute_sync("wait", {"seconds": 100, "marker": marker}))
    )
    caller.start()
    wait_until(lambda: Path(marker + ".started").exists(), timeout=PROCESS_WAIT)
    (pid,) = server_pids(str(SLOW_SERVER))
    os.kill(pid, signal.SIGKILL)
    caller.join(30)  # the call's own timeout is 120 seconds
    assert not caller.is_alive()
    (result,) = box
    assert (result.status, result.code) == (502, "server_stopped")
    assert "restarted" in result.text
    again = ex.execute_sync("wait", {"seconds": 0, "marker": str(tmp_path / "again")})
    assert again.structured == {"result": "done"}
    assert server_pids(str(SLOW_SERVER)) != [pid]


def test_a_timeout_sends_notifications_cancelled(make_hub: Callable[..., ToolHub], tmp_path: Path):
    hub = make_hub(mcp_servers={"slow": slow(timeout=0.5)})
    marker = str(tmp_path / "t")
    result = executor(hub).execute_sync("wait", {"seconds": 60, "marker": marker})
    assert (result.status, result.code) == (504, "timeout")
    wait_until(lambda: Path(marker + ".cancelled").exists(), timeout=PROCESS_WAIT)
    # The server is still healthy: the next call runs on the same process.
    again = executor(hub).execute_sync("wait", {"seconds": 0, "marker": str(tmp_path / "u")})
    assert again.structured == {"result": "done"}
    assert hub.mcp().connection("slow").starts == 1


async def test_an_abort_sends_notifications_cancelled(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    hub = make_hub(mcp_servers={"slow": slow(timeout=60)})
    ex = executor(hub)
    marker = str(tmp_path / "a")
    abort = AbortSignal()
    task = asyncio.ensure_future(ex.execute("wait", {"seconds": 60, "marker": marker}, abort=abort))
    await await_until(lambda: Path(marker + ".started").exists(), timeout=PROCESS_WAIT)
    abort.abort("The user stopped it.")
    result = await task
    assert (result.status, result.code, result.text) == (499, "aborted", "The user stopped it.")
    await await_until(lambda: Path(marker + ".cancelled").exists(), timeout=PROCESS_WAIT)


def test_the_server_environment_holds_only_what_the_config_names(
    make_hub: Callable[..., ToolHub], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HOST_SECRET", "s3cret")
    monkeypatch.setenv("GIVEN_TOKEN", "t0ken")
    dump = tmp_path / "env.txt"
    script = tmp_path / "env_server.py"
    script.write_text(
        "import os\n"
        "from mcp.server.mcpserver import MCPServer\n"
        f"open({str(dump)!r}, 'w').write('\\n'.join(sorted(os.environ)))\n"
        "s = MCPServer('env')\n"
        "@s.tool()\n"
        "def token() -> str:\n"
        "    '''The token.'''\n"
        "    return os.environ.get('TOKEN', '')\n"
        "s.run('stdio')\n"
    )
    env = {"TOKEN": "${GIVEN_TOKEN}", "PLAIN": "x"}
    hub = make_hub(
        mcp_servers={"env": {"command": sys.executable, "args": [str(script)], "env": env}}
    )
    assert executor(hub).execute_sync("token", {}).structured == {"result": "t0ken"}
    names = set(dump.read_text().split())
    assert "HOST_SECRET" not in names
    assert "GIVEN_TOKEN" not in names
    assert {"TOKEN", "PLAIN"} <= names
    assert names - {"TOKEN", "PLAIN"} <= {
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "TERM",
        "USER",
        "LC_CTYPE",
    }


def test_closing_stops_a_server_in_the_middle_of_a_call(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    hub = make_hub(mcp_servers={"slow": slow(timeout=120)})
    ex = executor(hub)
    marker = str(tmp_path / "c")
    box: list[Any] = []
    caller = threading.Thread(
        target=lambda: box.append(ex.execute_sync("wait", {"seconds": 100, "marker": marker}))
    )
    caller.start()
    wait_until(lambda: Path(marker + ".started").exists(), timeout=PROCESS_WAIT)
    (pid,) = server_pids(str(SLOW_SERVER))
    hub.close()
    wait_until(lambda: not alive(pid), timeout=PROCESS_WAIT)
    caller.join(30)
    assert not caller.is_alive()
    assert box[0].is_error


def test_a_call_on_the_pools_own_loop_runs_in_a_task_of_its_own(
    make_hub: Callable[..., ToolHub],
):
    server = MCPServer("local")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    hub = make_hub(mcp_servers={"s": server})
    ex = executor(hub)
    pool = hub.mcp().pool

    async def on_the_pool_loop() -> Any:
        # The pipeline starts the tool in this task and may resume it in another; the
        # SDK's cancel scopes survive that only because the call runs in a task of its own.
        return await ex.execute("echo", {"text": "here"})

    assert pool.run(on_the_pool_loop(), timeout=30).structured == {"result": "here"}

    async def sync_listing_here() -> None:
        pool.run(asyncio.sleep(0))

    with pytest.raises(RuntimeError, match="deadlock"):
        pool.run(sync_listing_here(), timeout=30)
