"""One client cannot take every session: per-caller caps, and handshakes that expire soon.

A stateful palette under uvicorn; a flood of abandoned ``initialize`` requests (no
``DELETE``) comes from 127.0.0.1 while another client, from 127.0.0.2, opens a session
with the SDK's client in its 2025-era mode.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx2
import palette_fixture as fx
import pytest
import toolpalette.mcp
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_server_fixture import HELLO, LEGACY, post, serving
from toolpalette import ToolHub
from toolpalette.testing import await_until

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
DONE = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def opened(base: str) -> Any:
    """Open a session from 127.0.0.1 and abandon it: its status and session id."""
    answer = post(base, None, HELLO, **LEGACY)
    return answer.status_code, answer.headers.get("mcp-session-id")


async def test_a_flood_of_abandoned_sessions_leaves_another_client_able_to_open_one() -> None:
    app = toolpalette.mcp.asgi_app(ToolHub(), fx.Palette, sessions_per_client=8, max_sessions=20)
    async with serving(app) as base:
        flood = [await asyncio.to_thread(opened, base) for _ in range(40)]
        transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
            connection = streamable_http_client(f"{base}/mcp", http_client=http)
            async with Client(connection, mode="legacy") as other:
                listed = await other.list_tools()
    statuses = [status for status, _ in flood]
    assert statuses[:8] == [200] * 8
    assert set(statuses[8:]) == {429}  # refused at the caller's cap, not the server's
    assert "echo" in {t.name for t in listed.tools}


async def test_a_session_that_did_nothing_after_its_handshake_expires_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcp.server.streamable_http_manager")
    app = toolpalette.mcp.asgi_app(ToolHub(), fx.Palette, handshake_idle=0.5, session_idle=120)
    async with serving(app) as base:
        sessions = []
        for _ in range(2):
            hello = await asyncio.to_thread(post, base, None, HELLO, **LEGACY)
            headers = {**LEGACY, "Mcp-Session-Id": hello.headers["mcp-session-id"]}
            await asyncio.to_thread(post, base, None, DONE, **headers)
            sessions.append(headers)
        idle, used = sessions
        first = await asyncio.to_thread(post, base, None, LIST, **used)
        await await_until(lambda: "idle timeout" in caplog.text, timeout=30)
        gone = await asyncio.to_thread(post, base, None, LIST, **idle)
        kept = await asyncio.to_thread(post, base, None, LIST, **used)
    assert first.status_code == 200
    assert gone.status_code == 404  # expired: it had done nothing
    assert kept.status_code == 200
    assert "echo" in kept.text
