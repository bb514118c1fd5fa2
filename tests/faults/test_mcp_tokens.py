"""A bearer token gets exactly what it says: its scopes, its principal, its palette.

A palette under uvicorn with JWT authorization (keys made per test, the SDK's client
or raw requests); each test tries a token shaped to get more than it grants.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import palette_fixture as fx
import pytest
import toolpalette.mcp
from auth_fixture import AUDIENCE, ISSUER, Issuer
from mcp.shared.exceptions import MCPError
from mcp_server_fixture import HELLO, LEGACY, answer_of, client, post, serving
from toolpalette import ToolHub
from toolpalette.mcp import JWTAuth, PaletteChoice, Principal

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def by_scope(principal: Principal) -> Any:
    """``janitor`` is served the mutating palette; anything else reads only."""
    if "janitor" in principal.scopes:
        return fx.Janitor
    return PaletteChoice(fx.Janitor, read_only=True)


def app_for(hub: ToolHub, issuer: Issuer, folder: Path, **options: Any) -> Any:
    auth = JWTAuth(ISSUER, AUDIENCE, public_key_file=issuer.pem(folder / "key.pem"))
    return toolpalette.mcp.asgi_app(hub, fx.Clerk, auth=auth, thinker_for=by_scope, **options)


@pytest.mark.parametrize("separator", ["\u00a0", "\x1f", "\u2028", "\x0b", "\t"])
async def test_scopes_split_on_the_space_character_only(tmp_path: Path, separator: str) -> None:
    issuer = Issuer()
    token = issuer.token("alice", f"read{separator}janitor")  # one scope, not two
    async with serving(app_for(ToolHub(), issuer, tmp_path, stateless=True)) as base:
        async with client(base, token) as connected:
            listed = {t.name: t for t in (await connected.list_tools()).tools}
            with pytest.raises(MCPError, match="Unknown tool: delete_row"):
                await connected.call_tool("delete_row", {"row": 1})
        async with client(base, issuer.token("bob", "read janitor")) as connected:
            granted = await connected.call_tool("delete_row", {"row": 1})
    assert "delete_row" not in listed  # the read-only palette
    assert not granted.is_error


async def test_a_user_and_a_client_of_the_same_id_are_two_principals(tmp_path: Path) -> None:
    issuer = Issuer()
    hub = ToolHub()
    user = issuer.token("alice", "janitor", client_id="mobile-app")
    machine = issuer.token("alice", "janitor", client_id="alice")  # client credentials
    async with serving(app_for(hub, issuer, tmp_path, stateless=True)) as base:
        for token in (user, machine):
            async with client(base, token) as connected:
                called = await connected.call_tool("sweep", {"room": "hall"})
                assert not called.is_error
    principals = {r.principal for r in hub.grants() if r.name == "sweep"}
    assert principals == {"user:alice", "client:alice"}


async def test_a_narrower_token_in_a_session_never_gets_the_sessions_wider_palette(
    tmp_path: Path,
) -> None:
    issuer = Issuer()
    wide, narrow = issuer.token("alice", "janitor"), issuer.token("alice", "read")
    delete = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "delete_row", "arguments": {"row": 1}},
    }
    async with serving(app_for(ToolHub(), issuer, tmp_path)) as base:
        opened = await asyncio.to_thread(post, base, wide, HELLO, **LEGACY)
        headers = {**LEGACY, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await asyncio.to_thread(post, base, wide, done, **headers)
        listed = await asyncio.to_thread(post, base, wide, LIST, **headers)
        narrowed = await asyncio.to_thread(post, base, narrow, delete, **headers)
        listed_narrow = await asyncio.to_thread(post, base, narrow, LIST, **headers)
        own = await asyncio.to_thread(post, base, wide, delete, **headers)
    assert "delete_row" in listed.text
    for refused in (answer_of(narrowed), answer_of(listed_narrow)):
        assert refused["error"]["code"] == -32600, refused
        assert "another palette" in refused["error"]["message"]
    assert answer_of(own)["result"]["content"][0]["text"] == "deleted 1"
