"""A tool's log lines and questions through ``toolpalette serve``: stdio and HTTP.

The SDK's client in its default mode (2026-07-28) and in the 2025-era mode talks to a
real server process: over stdio, over HTTP with one worker (a 2025-era session), and
over HTTP with two workers, where a 2026-era question's sealed state is made by one
worker and read by whichever answers the retry. A 2025-era request without a session
(two workers serve stateless) has no way to be asked: the tool gets its own error.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from test_serve_http_workers import fresh_connections, serving
from test_stdio_and_http import stdio
from test_tool_context import Peer, text
from toolpalette.testing import leak_check

MODES = ["legacy", "default"]


def client_for(target: Any, mode: str, peer: Peer) -> Client:
    options: dict[str, Any] = {
        "elicitation_callback": peer.elicit,
        "sampling_callback": peer.sample,
        "list_roots_callback": peer.roots,
        "logging_callback": peer.log,
    }
    if mode == "legacy":
        options["mode"] = "legacy"
    else:
        options["log_level"] = "info"
    return Client(target, **options)


async def exercise(client: Client, peer: Peer) -> None:
    """Each thing a tool can ask, answered; the log lines received."""
    assert text(await client.call_tool("greet", {})) == "hello Ada"
    assert text(await client.call_tool("summarize", {"text": "t"})) == "fake-model: SUMMARIZE: T"
    assert text(await client.call_tool("show_roots", {})) == "project=file:///work/project"
    assert text(await client.call_tool("log_steps", {"steps": 1})) == "1 steps"
    assert ("info", {"message": "step 1 of 1", "data": {"step": 1}}) in peer.lines


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio(mode: str):
    peer = Peer()
    async with leak_check(deadline=15):
        async with client_for(stdio("--thinker", "talking_fixture:Talking"), mode, peer) as client:
            await exercise(client, peer)


@pytest.mark.parametrize("mode", MODES)
async def test_over_http_with_one_worker(mode: str):
    peer = Peer()
    with serving("--thinker", "talking_fixture:Talking") as served:
        async with client_for(served.url, mode, peer) as client:
            await exercise(client, peer)


async def test_over_http_with_two_workers_a_retry_any_worker_answers():
    peer = Peer()
    with serving("--thinker", "talking_fixture:Talking", "--workers", "2") as served:
        for _ in range(3):  # fresh connections: the rounds land on either worker
            peer = Peer()
            async with client_for(fresh_connections(served.url), "default", peer) as client:
                result = await client.call_tool("interview", {})
                assert text(result) == "Ada Lovelace / ADA LOVELACE"
                await exercise(client, peer)


async def test_a_2025_request_without_a_session_cannot_be_asked_but_gets_its_log_lines():
    peer = Peer()
    with serving("--thinker", "talking_fixture:Talking", "--workers", "2") as served:
        async with client_for(served.url, "legacy", peer) as client:
            result = await client.call_tool("greet", {})
            logged = await client.call_tool("log_steps", {"steps": 2})
    assert text(result) == "no way to ask: unsupported"
    assert isinstance(result, types.CallToolResult)
    assert text(logged) == "2 steps"
    assert peer.lines == [
        ("info", {"message": "step 1 of 2", "data": {"step": 1}}),
        ("info", {"message": "step 2 of 2", "data": {"step": 2}}),
        ("debug", "all steps done"),
    ]
