"""``toolpalette serve`` as a real process: over stdio, and over HTTP under uvicorn.

The SDK's stdio client launches ``toolpalette serve`` as a subprocess; the SDK's
streamable HTTP client talks to it on 127.0.0.1, including through two uvicorn workers,
where a client pages through a listing on fresh connections (any worker may answer).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from toolpalette.testing import leak_check, wait_until

HERE = Path(__file__).parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}


def serve_command(*args: str) -> list[str]:
    code = "import sys; from toolpalette._cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, "serve", *args]


def stdio(*args: str) -> StdioServerParameters:
    command = serve_command(*args)
    return StdioServerParameters(command=command[0], args=command[1:], env=ENV)


async def all_names(client: Client) -> list[str]:
    names: list[str] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return names


# -- stdio --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_serves_pages_calls_and_refusals_with_only_protocol_on_stdout(mode: str):
    # A stray print at import (see palette_fixture) would break the very first message.
    params = stdio("--thinker", "palette_fixture:Palette", "--page-size", "3")
    async with leak_check(deadline=10):
        async with Client(params, mode=mode) as client:
            names = await all_names(client)
            assert names[:3] == ["echo", "add", "delete_row"]
            assert names[-2:] == ["request_skill", "call_tool"]
            added = await client.call_tool("add", {"a": 40, "b": 2})
            assert added.structured_content == {"total": 42}
            failed = await client.call_tool("explode", {})
            assert failed.is_error
            assert "CANARY" not in failed.content[0].text
            with pytest.raises(MCPError) as caught:
                await client.session.call_tool("vault_lookup", {"key": "k"})
            assert caught.value.code == types.INVALID_PARAMS
            assert caught.value.message == "Unknown tool: vault_lookup"


async def test_a_default_client_searches_calls_and_approves_a_deferred_tool_over_stdio():
    asked: list[str] = []

    async def approve(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    params = stdio("--thinker", "palette_fixture:Searching")
    async with leak_check(deadline=10):
        async with Client(params, elicitation_callback=approve) as client:
            assert client.protocol_version == "2026-07-28"
            found = await client.call_tool("search_tools", {"query": "secret key lookup"})
            assert found.structured_content is not None
            assert found.structured_content["tools"][0]["name"] == "secret_lookup"
            direct = await client.call_tool("secret_lookup", {"key": "a"})
            wrapped = await client.call_tool(
                "call_tool", {"name": "secret_lookup", "arguments": {"key": "b"}}
            )
            wiped = await client.call_tool("wipe_table", {"table": "t"})
    assert (direct.content[0].text, wrapped.content[0].text) == ("value of a", "value of b")
    assert wiped.content[0].text == "wiped t"
    assert asked == ["Approve this call of the tool 'wipe_table'?\nInput:\n  table: \"t\""]


async def test_stdio_session_grants_and_announces_the_change():
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = stdio("--thinker", "palette_fixture:Palette")
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        granted = await client.call_tool("request_tools", {"names": ["secret_lookup"]})
        assert not granted.is_error
        with anyio.fail_after(10):
            await changed.wait()
        assert "secret_lookup" in await all_names(client)
        assert (await client.call_tool("secret_lookup", {"key": "a"})).content[0].text == (
            "value of a"
        )


async def test_stdio_select_serves_the_named_distribution_read_only():
    params = stdio("--select", "toolpalette-files", "--read-only")
    async with Client(params, mode="legacy") as client:
        tools = (await client.list_tools()).tools
    assert tools
    assert all(t.annotations is not None and t.annotations.read_only_hint for t in tools)
    assert "read_file" in {t.name for t in tools}
    assert "edit_file" not in {t.name for t in tools}


def test_serve_help_says_every_client_gets_the_meta_tools_and_call_tool():
    out = subprocess.run(
        serve_command("--help"), capture_output=True, text=True, env=ENV, timeout=60, check=True
    ).stdout
    assert (
        "its meta-tools (request_tools or\nsearch_tools, and the skills' ones) and call_tool" in out
    )
    assert "WITHOUT" not in out
    assert "--stateless" in out
    assert "--state-key-file" in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--thinker", "palette_fixture"], "package.module:Class"),
        (["--thinker", "no_such_module_here:X"], "no module named 'no_such_module_here'"),
        (["--thinker", "palette_fixture:CANARY"], "not a toolpalette.Thinker subclass"),
        (["--select", "no-such-distribution"], "neither an installed distribution"),
    ],
)
def test_serve_refuses_what_it_cannot_serve_clearly(args: list[str], expected: str):
    done = subprocess.run(
        serve_command(*args), capture_output=True, text=True, env=ENV, timeout=60, check=False
    )
    assert done.returncode == 2
    assert expected in done.stderr
    assert done.stdout == ""


# -- streamable HTTP ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def accepting(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@pytest.fixture
def http_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """``toolpalette serve --http`` with the test's arguments; yields its URL."""
    port = free_port()
    args = [*request.param, "--http", "--port", str(port)]
    process = subprocess.Popen(
        serve_command(*args),
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: accepting(port) or process.poll() is not None, timeout=30, message="listening"
        )
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
        if process.stderr is not None:
            process.stderr.close()
        wait_until(lambda: group_gone(process.pid), timeout=15, message="no worker is left")
        wait_until(lambda: not accepting(port), timeout=15, message="the port is released")


def group_gone(pgid: int) -> bool:
    """Whether every process of the server's group (its workers too) has exited."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(
    "http_server",
    [["--thinker", "palette_fixture:Many", "--stateless", "--workers", "2", "--page-size", "40"]],
    indirect=True,
)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_workers_serve_one_listing_page_by_page(http_server: str, mode: str):
    names: list[str] = []
    cursor: str | None = None
    pages = 0
    started = time.monotonic()
    while True:
        # A fresh client (a fresh connection) per page: either worker may answer it.
        async with Client(http_server, mode=mode) as client:
            page = await client.list_tools(cursor=cursor)
        names.extend(t.name for t in page.tools)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
        assert time.monotonic() - started < 60
    assert pages == 7
    assert names == [*(f"t{i:04d}" for i in range(250)), "call_tool"]
    async with Client(http_server, mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.list_tools(cursor=cursor or "tp1.bm9wZQ", cache_mode="refresh")
        await client.list_tools()
        called = await client.call_tool("t0007", {"x": 7})
    assert caught.value.code == types.INVALID_PARAMS
    assert called.content[0].text == "7"


@pytest.mark.parametrize("http_server", [["--thinker", "palette_fixture:Palette"]], indirect=True)
async def test_an_http_session_keeps_its_thinker_across_requests(http_server: str):
    async with Client(http_server, mode="legacy") as client:
        assert "secret_lookup" not in await all_names(client)
        granted = await client.call_tool("request_tools", {"names": ["secret_lookup"]})
        assert not granted.is_error
        assert "secret_lookup" in await all_names(client)
        result = await client.call_tool("secret_lookup", {"key": "b"})
        assert result.content[0].text == "value of b"
        seen: list[float] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            seen.append(done)

        counted = await client.call_tool("count", {"steps": 2}, progress_callback=on_progress)
        assert counted.content[0].text == "counted 2"
        assert seen == [1, 2]
    async with Client(http_server, mode="legacy") as other:
        assert "secret_lookup" not in await all_names(other)
