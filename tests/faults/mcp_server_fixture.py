"""Shared by the MCP server fault tests: a palette app under uvicorn, and raw requests.

The palettes and the token issuer are the MCP server tests' own (``palette_fixture``,
``auth_fixture`` in ``tests/mcp/server``); everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")

import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from toolpalette.testing import await_until

LEGACY = {"MCP-Protocol-Version": "2025-11-25"}
"""The header of a 2025-era request."""
HELLO = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "faults", "version": "1"},
    },
}
"""A 2025-era ``initialize`` request."""


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` under uvicorn on 127.0.0.1; its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await await_until(lambda: server.started or task.done(), timeout=15)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()
        await _end_sse_watcher()


async def _end_sse_watcher() -> None:
    """End the shutdown watcher ``sse_starlette`` starts once per event loop.

    It polls for the uvicorn server through the SIGTERM handler, which uvicorn has
    put back by now, so it would poll on after the server is gone (and the leak check
    would rightly count it).
    """
    for task in asyncio.all_tasks():
        if getattr(task.get_coro(), "__name__", "") == "_shutdown_watcher":
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@asynccontextmanager
async def client(
    base: str, token: str | None = None, mode: str = "auto", **options: Any
) -> AsyncIterator[Client]:
    """The SDK's client of ``base``'s ``/mcp``, with ``token`` as its bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(transport, mode=mode, **options) as connected:
            yield connected


def post(
    base: str, token: str | None, body: Any, *, content: bytes | None = None, **headers: str
) -> httpx2.Response:
    """One POST to ``/mcp``: ``body`` as JSON, or ``content`` as sent."""
    sent = {"Accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    if content is not None:
        sent.setdefault("Content-Type", "application/json")
        return httpx2.post(f"{base}/mcp", content=content, headers=sent, timeout=30)
    return httpx2.post(f"{base}/mcp", json=body, headers=sent, timeout=30)


def answer_of(response: httpx2.Response) -> Any:
    """The JSON-RPC answer of a response, JSON or one SSE event."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        data = [d for d in data if d]
        return json.loads(data[-1])
    return json.loads(text)
