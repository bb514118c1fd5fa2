"""``asgi_app(auth=...)``: an OAuth 2.1 resource server, and a palette per principal.

The app runs under uvicorn on 127.0.0.1; tokens are signed with keys the tests make
(RSA and EC, with ``cryptography``), and the JWKS is served by a local HTTP server.
The SDK's own client talks to it, in its default mode (2026-07-28) and forced to the
2025 era, with a bearer token in its HTTP client.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import palette_fixture as fx
import pytest
import toolpalette.mcp
import uvicorn
from auth_fixture import AUDIENCE, ISSUER, Issuer, jwks_server
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from toolpalette import ToolHub
from toolpalette.mcp import JWTAuth, PaletteChoice, Principal
from toolpalette.testing import await_until

METADATA = "/.well-known/oauth-protected-resource/mcp"


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


@asynccontextmanager
async def client(base: str, token: str | None, mode: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(transport, mode=mode) as connected:
            yield connected


async def names(connected: Client) -> set[str]:
    return {t.name for t in (await connected.list_tools()).tools}


def by_scope(principal: Principal) -> Any:
    if "clerk" in principal.scopes:
        return fx.Clerk
    if "janitor" in principal.scopes:
        return fx.Janitor
    return PaletteChoice(fx.Janitor, read_only=True)


def app_for(hub: ToolHub, auth: JWTAuth, **options: Any) -> Any:
    return toolpalette.mcp.asgi_app(hub, fx.Clerk, auth=auth, thinker_for=by_scope, **options)


def post(base: str, token: str | None, body: dict[str, Any], **headers: str) -> httpx2.Response:
    sent = {"Accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return httpx2.post(f"{base}/mcp", json=body, headers=sent, timeout=30)


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


# -- the resource server: 401, 403, the metadata document ------------------------------------


async def test_a_request_without_a_valid_token_is_401_with_the_metadata_url(tmp_path: Path):
    issuer, other = Issuer(), Issuer()
    auth = JWTAuth(ISSUER, AUDIENCE, public_key_file=issuer.pem(tmp_path / "key.pem"))
    now = int(time.time())
    bad = {
        "none": None,
        "not a JWT": "not-a-jwt",
        "another key": other.token("alice", "clerk"),
        "expired": issuer.token("alice", "clerk", exp=now - 3600, iat=now - 7200),
        "another audience": issuer.token("alice", "clerk", aud="https://elsewhere.example"),
        "another issuer": issuer.token("alice", "clerk", iss="https://evil.example"),
    }
    async with serving(app_for(ToolHub(), auth, stateless=True)) as base:
        answers = {why: await asyncio.to_thread(post, base, t, LIST) for why, t in bad.items()}
        good = await asyncio.to_thread(post, base, issuer.token("alice", "clerk"), LIST)
    for why, answer in answers.items():
        assert answer.status_code == 401, why
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="https://mcp.example{METADATA}"' in challenge
        assert answer.json()["error"] == "invalid_token"
    assert good.status_code == 200


async def test_the_metadata_document_is_served_without_a_token(tmp_path: Path):
    issuer = Issuer("EC")
    auth = JWTAuth(
        ISSUER,
        AUDIENCE,
        public_key_file=issuer.pem(tmp_path / "key.pem"),
        required_scopes=["mcp"],
    )
    async with serving(app_for(ToolHub(), auth)) as base:
        answer = await asyncio.to_thread(httpx2.get, f"{base}{METADATA}", timeout=30)
    assert answer.status_code == 200
    document = answer.json()
    assert document["resource"] == AUDIENCE
    assert document["authorization_servers"] == [f"{ISSUER}/"] or document[
        "authorization_servers"
    ] == [ISSUER]
    assert document["scopes_supported"] == ["mcp"]
    assert document["bearer_methods_supported"] == ["header"]


async def test_a_missing_required_scope_is_403_insufficient_scope(tmp_path: Path):
    issuer = Issuer()
    auth = JWTAuth(
        ISSUER, AUDIENCE, public_key_file=issuer.pem(tmp_path / "k.pem"), required_scopes=["mcp"]
    )
    async with serving(app_for(ToolHub(), auth, stateless=True)) as base:
        short = await asyncio.to_thread(post, base, issuer.token("alice", "clerk"), LIST)
        enough = await asyncio.to_thread(post, base, issuer.token("alice", "mcp clerk"), LIST)
    assert short.status_code == 403
    assert 'error="insufficient_scope"' in short.headers["www-authenticate"]
    assert enough.status_code == 200


async def test_keys_come_from_a_jwks_url_and_a_token_never_reaches_logs_or_answers(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
):
    issuer, stranger = Issuer(kid="k1"), Issuer(kid="k2")
    with jwks_server(issuer) as url:
        auth = JWTAuth(ISSUER, AUDIENCE, jwks_url=url)
        good = issuer.token("alice", "clerk", canary="CANARY-claim-4b1d")
        tokens = [good, stranger.token("bob", "janitor"), good[:-8] + "AAAAAAAA", "CANARY-opaque"]
        caplog.set_level(logging.DEBUG)
        async with serving(app_for(ToolHub(), auth, stateless=True)) as base:
            answers = [await asyncio.to_thread(post, base, t, LIST) for t in tokens]
            async with client(base, good, "auto") as connected:
                listed = await names(connected)
                with pytest.raises(MCPError):
                    await connected.call_tool("delete_row", {"row": 1})
    assert [a.status_code for a in answers] == [200, 401, 401, 401]
    assert "echo" in listed
    seen = capfd.readouterr()
    texts = [caplog.text, seen.out, seen.err, *(a.text for a in answers)]
    for token in tokens:
        for part in (token, token.split(".")[-1]):
            assert all(part not in text for text in texts)
    assert all("CANARY" not in text for text in texts)


# -- a palette per principal --------------------------------------------------------------


def other_tools(principal: str) -> list[str]:
    """The tools of the other principal's palette: offered, and deferred."""
    if principal == "alice":
        return ["delete_row", "append_note", "sweep"]
    return ["echo", "add", "secret_lookup"]


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["2026-07-28", "2025"])
async def test_two_principals_are_served_their_own_palettes(
    tmp_path: Path, mode: str, stateless: bool
):
    issuer = Issuer()
    hub = ToolHub()
    auth = JWTAuth(ISSUER, AUDIENCE, public_key_file=issuer.pem(tmp_path / "key.pem"))
    tokens = {"alice": issuer.token("alice", "clerk"), "bob": issuer.token("bob", "janitor")}
    seen: dict[str, set[str]] = {}
    refusals: dict[str, list[tuple[int, str]]] = {}
    async with serving(app_for(hub, auth, stateless=stateless)) as base:
        for who, token in tokens.items():
            async with client(base, token, mode) as connected:
                seen[who] = await names(connected)
                answers = []
                for name in [*other_tools(who), "no_such_tool"]:
                    for tool, arguments in ((name, {"row": 1}), ("call_tool", {"name": name})):
                        with pytest.raises(MCPError) as caught:
                            await connected.call_tool(tool, arguments)
                        message = caught.value.message.replace(name, "NAME")
                        answers.append((caught.value.code, message))
                refusals[who] = answers
                own = "secret_lookup" if who == "alice" else "sweep"
                argument = {"key": "k"} if who == "alice" else {"room": "hall"}
                called = await connected.call_tool(own, argument)
                assert not called.is_error
    assert {"echo", "add", "call_tool"} <= seen["alice"]
    assert {"delete_row", "append_note", "call_tool"} <= seen["bob"]
    for who in tokens:
        assert not set(other_tools(who)) & seen[who]
        assert set(refusals[who]) == {(types.INVALID_PARAMS, "Unknown tool: NAME")}
    records = {(r.name, r.principal) for r in hub.grants() if r.decision == "granted"}
    assert ("secret_lookup", "user:alice") in records
    assert ("sweep", "user:bob") in records


async def test_the_same_authorization_sees_the_same_private_listing(tmp_path: Path):
    issuer = Issuer()
    auth = JWTAuth(ISSUER, AUDIENCE, public_key_file=issuer.pem(tmp_path / "key.pem"))
    tokens = [
        issuer.token("alice", "clerk"),
        issuer.token("carol", "clerk"),
        issuer.token("bob", "janitor"),
        issuer.token("dave", ""),
    ]
    pages = []
    async with serving(app_for(ToolHub(), auth)) as base:
        for token in tokens:
            async with client(base, token, "auto") as connected:
                assert connected.protocol_version == "2026-07-28"
                pages.append(await connected.list_tools(cache_mode="refresh"))
    assert all(page.cache_scope == "private" for page in pages)
    alice, carol, bob, dave = ([t.model_dump() for t in page.tools] for page in pages)
    assert alice == carol
    assert alice != bob
    hints = [{t["name"]: t for t in p}["call_tool"]["annotations"] for p in (bob, dave)]
    assert [h["read_only_hint"] for h in hints] == [False, True]
    assert "delete_row" not in {t["name"] for t in alice}


async def test_a_session_refuses_another_principal(tmp_path: Path):
    issuer = Issuer()
    auth = JWTAuth(ISSUER, AUDIENCE, public_key_file=issuer.pem(tmp_path / "key.pem"))
    alice, bob = issuer.token("alice", "clerk"), issuer.token("bob", "janitor")
    legacy = {"MCP-Protocol-Version": "2025-11-25"}
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    async with serving(app_for(ToolHub(), auth)) as base:
        opened = await asyncio.to_thread(post, base, alice, hello, **legacy)
        session = opened.headers["mcp-session-id"]
        headers = {**legacy, "Mcp-Session-Id": session}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await asyncio.to_thread(post, base, alice, done, **headers)
        stolen = await asyncio.to_thread(post, base, bob, LIST, **headers)
        own = await asyncio.to_thread(post, base, alice, LIST, **headers)
    assert stolen.status_code == 404
    assert own.status_code == 200
    assert "echo" in own.text


def test_one_thinker_per_choice_without_a_session_and_a_session_keeps_its_principal():
    palette = toolpalette.mcp.server(ToolHub(), fx.Clerk, thinker_for=by_scope)
    sessions = palette.sessions

    def principal(subject: str, scope: str) -> Principal:
        return Principal(subject, "app", ISSUER, frozenset({scope}), {})

    alice, carol, bob = (
        principal("alice", "clerk"),
        principal("carol", "clerk"),
        principal("bob", "janitor"),
    )
    shared = sessions.for_principal(alice, None)
    assert sessions.for_principal(carol, None) is shared
    assert sessions.for_principal(bob, None) is not shared
    assert type(sessions.for_principal(bob, None).thinker) is fx.Janitor
    state: dict[str, Any] = {}
    opened = sessions.for_principal(alice, state)
    assert opened is not shared
    assert sessions.for_principal(alice, state) is opened
    for other in (carol, bob, None):
        with pytest.raises(MCPError) as caught:
            sessions.for_principal(other, state)
        assert caught.value.code == types.INVALID_REQUEST


def test_a_server_without_authorization_never_imports_the_jwt_library():
    code = (
        "import sys, toolpalette, toolpalette.mcp\n"
        "toolpalette.mcp.asgi_app(toolpalette.ToolHub(autoload=False), stateless=True)\n"
        "names = ('jwt', 'toolpalette.mcp._jwt', 'toolpalette.mcp._auth')\n"
        "print(sorted(m for m in names if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
