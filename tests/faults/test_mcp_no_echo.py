"""Nothing a client sends is echoed by the palette server, and a repeated key is refused.

Before the fix: a ``resources/read`` error quoted the requested path (its exception's
message), an unknown prompt its name, a tool name that is not a string came back in
``Unknown tool: {...}``, the HTTP transport answered a batch with pydantic's text
(``input_value=...``, the body itself), and a key repeated in a call's ``arguments``
was accepted over MCP (the last value won), although the input policy refuses
duplicate keys. Each case below sends a canary and looks for it in the answer.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra: pip install 'toolpalette[mcp]'")

import httpx2
import mcp_types as types
import toolpalette.mcp
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from toolpalette import SkillSelector, Thinker, ToolHub, ToolSelector
from toolpalette.testing import wait_until

CANARY = "CANARY-3e8d1f-sent-by-the-client"
SERVE = [sys.executable, "-c", "import sys; from toolpalette._cli import main; sys.exit(main())"]
START = re.compile(r"^serving (http://127\.0\.0\.1:(\d+)/mcp) ")
DUPLICATE = (
    "Invalid input for tool 'file_info': at (input): expected an object without duplicate keys"
)


class Sql(Thinker):
    """The files pack's tools and the SQL skills."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().distribution("toolpalette-files")

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().prefix("io.toolpalette.sql")


# -- in-process --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        f"skill://io.toolpalette.sql/explore-sqlite-schema/../{CANARY}",
        f"skill://io.toolpalette.sql/explore-sqlite-schema/references/{CANARY}.md",
        f"skill://io.toolpalette.sql/explore-sqlite-schema/a\\{CANARY}",
        f"skill://{CANARY}/skill/file.md",
        f"file:///{CANARY}",
    ],
)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_resource_errors_do_not_quote_the_uri(uri: str, mode: str):
    async with Client(toolpalette.mcp.server(ToolHub(), Sql), mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert CANARY not in caught.value.message
    assert CANARY not in json.dumps(caught.value.error.model_dump(mode="json"))


async def test_an_unknown_prompt_is_not_quoted():
    async with Client(toolpalette.mcp.server(ToolHub(), Sql), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt(f"io.toolpalette.sql/{CANARY}")
    assert caught.value.message == "Unknown prompt."


@pytest.mark.parametrize("name", [{"canary": CANARY}, [CANARY], 42, None])
async def test_a_tool_name_that_is_not_a_string_is_not_echoed(name: Any):
    request = types.CallToolRequest.model_construct(
        method="tools/call",
        params=types.CallToolRequestParams.model_construct(name=name, arguments={}),
    )
    async with Client(toolpalette.mcp.server(ToolHub(), Sql), mode="legacy") as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the client's own serializer objects
            with pytest.raises(MCPError) as caught:
                await client.session.send_request(request, types.CallToolResult)
    assert (caught.value.code, caught.value.message) == (types.INVALID_PARAMS, "Unknown tool")


# -- over HTTP and stdio: the text the client wrote ------------------------------------------


@contextmanager
def serving(*args: str) -> Iterator[tuple[str, int]]:
    """``toolpalette serve --http --port 0 ARGS``: its URL and port; stopped after."""
    process = subprocess.Popen(
        [*SERVE, "serve", *args, "--http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    assert process.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(process.stderr or ()), daemon=True)
    reader.start()
    try:
        wait_until(
            lambda: any(START.match(line) for line in lines) or process.poll() is not None,
            timeout=60,
            message="the start line",
        )
        found = next(m for m in map(START.match, list(lines)) if m)
        yield found.group(1), int(found.group(2))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
        reader.join(timeout=15)
        process.stderr.close()


def post(port: int, body: bytes, version: str | None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/mcp", body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.read().decode("utf-8", "replace")
    finally:
        connection.close()


@pytest.mark.parametrize(
    "body",
    [
        json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": CANARY}}]),
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": 7, "canary": CANARY}),
        '{"jsonrpc": "2.0", "id": 1, "method": "' + CANARY,
    ],
    ids=["batch", "no known shape", "not JSON"],
)
def test_a_body_the_transport_cannot_read_is_not_quoted(body: str):
    with serving("--select", "toolpalette-files", "--stateless") as (_, port):
        answers = [post(port, body.encode(), v) for v in (None, "2025-11-25", "2026-07-28")]
    for status, text in answers:
        assert status == 400
        assert CANARY not in text
        assert "input_value" not in text
        assert json.loads(text)["error"]["code"] in (
            types.PARSE_ERROR,
            types.INVALID_REQUEST,
            types.INVALID_PARAMS,
        )


class Repeating(httpx2.AsyncBaseTransport):
    """Sends the SDK's requests, with a key of each ``tools/call`` written twice."""

    def __init__(self, old: bytes, new: bytes) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._old, self._new = old, new

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.content
        if b'"tools/call"' in body:
            body = body.replace(self._old, self._new, 1)
            headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
            request = httpx2.Request(request.method, request.url, headers=headers, content=body)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_key_repeated_over_http_is_refused_as_the_pipeline_refuses_it(mode: str):
    repeat_path = Repeating(b'"path":"', b'"path":"' + CANARY.encode() + b'","path":"')
    repeat_name = Repeating(b'"name":"file_info"', b'"name":"file_info","name":"file_info"')
    with serving("--select", "toolpalette-files") as (url, _):
        async with httpx2.AsyncClient(transport=repeat_path) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode) as client:
                await client.list_tools()
                result = await client.call_tool("file_info", {"path": "README.md"})
        async with httpx2.AsyncClient(transport=repeat_name) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode) as client:
                await client.list_tools()
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("file_info", {"path": "README.md"})
    assert result.is_error
    assert result.content[0].text == DUPLICATE
    assert CANARY not in result.content[0].text
    assert (caught.value.code, caught.value.message) == (
        types.INVALID_REQUEST,
        "Invalid request: an object repeats a key.",
    )


def test_a_key_repeated_over_stdio_is_refused_as_the_pipeline_refuses_it():
    process = subprocess.Popen(
        [*SERVE, "serve", "--select", "toolpalette-files"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"file_info",'
        f'"arguments":{{"path":"{CANARY}","path":"README.md"}}}}}}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"file_info",'
        '"name":"file_info","arguments":{"path":"README.md"}}}',
    ]
    try:
        process.stdin.write("\n".join(lines) + "\n")
        process.stdin.flush()
        answers = {}
        while len(answers) < 3:
            message = json.loads(process.stdout.readline())
            answers[message["id"]] = message
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()
    refused = answers[2]["result"]
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == DUPLICATE
    assert answers[3]["error"] == {
        "code": types.INVALID_REQUEST,
        "message": "Invalid request: an object repeats a key.",
    }
    assert CANARY not in json.dumps(answers)
