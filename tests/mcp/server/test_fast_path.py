"""The HTTP server's fast path gives the SDK's answers: the same requests, both ways.

``asgi_app`` answers stateless ``tools/call`` and ``tools/list`` without the SDK's
transport unless ``fast=False``. Each request here (valid ones, and malformed ones of
every kind the transport checks: body, envelope, headers, Host and Origin, duplicate
keys) goes to the app built each way, in both protocol eras, stateless and stateful,
JSON and SSE response modes; the status, the media type and the JSON-RPC messages
must be the same. Sealed request state (random per app) is the only thing set aside.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
import palette_fixture as fx
import pytest
import toolpalette.mcp
from toolpalette import ToolHub
from toolpalette.testing import await_until, leak_check

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
CLIENT = {"name": "diff", "version": "1"}
ASKABLE = {"elicitation": {"form": {}}}


@pytest.fixture(scope="module")
def hub() -> ToolHub:
    return ToolHub()


def envelope(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }


def modern(method: str, params: dict[str, Any], *, name: str | None = None, **extra: Any) -> Any:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra.pop("headers", {}))
    meta = extra.pop("meta", envelope())
    body = {"jsonrpc": "2.0", "id": extra.pop("id", 7), "method": method, "params": {**params}}
    if meta is not None:
        body["params"]["_meta"] = meta
    return headers, json.dumps(body)


def legacy(method: str, params: dict[str, Any] | None, **extra: Any) -> Any:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": HANDSHAKE,
    }
    headers.update(extra.pop("headers", {}))
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": extra.pop("id", 7), "method": method}
    if params is not None:
        body["params"] = params
    return headers, json.dumps(body)


def call(name: str, arguments: Any, **extra: Any) -> Any:
    return modern("tools/call", {"name": name, "arguments": arguments}, name=name, **extra)


def raw(headers: dict[str, str], body: str) -> Any:
    return headers, body


def encodings(echo: str) -> dict[str, Any]:
    """``echo`` (a call of ``echo`` with ``"hi"``) in odd encodings and with lone surrogates."""
    accented = echo.replace('"hi"', '"h\\u00e9"')
    return {
        "lone surrogate in the id": echo.replace('"id": 7', '"id": "\\ud800"'),
        "lone low surrogate in the id": echo.replace('"id": 7', '"id": "a\\udfff"'),
        "lone surrogate in the arguments": echo.replace('"hi"', '"\\ud83d"'),
        "a surrogate pair in the arguments": echo.replace('"hi"', '"\\ud83d\\ude00"'),
        "UTF-16 LE with a BOM": accented.encode("utf-16"),
        "UTF-16 BE": accented.encode("utf-16-be"),
        "UTF-32": accented.encode("utf-32"),
        "UTF-8 with a BOM": accented.encode("utf-8-sig"),
        "Latin-1": echo.replace('"hi"', '"h\u00e9"').encode("latin-1"),
    }


MODERN_REQUESTS: dict[str, Any] = {
    "list": modern("tools/list", {}),
    "list, bad cursor": modern("tools/list", {"cursor": "nope"}),
    "list, cursor not a string": modern("tools/list", {"cursor": 3}),
    "call": call("add", {"a": 40, "b": 2}),
    "call, string id": call("echo", {"text": "hi"}, id="abc"),
    "call, tool fails": call("explode", {}),
    "call, invalid input": call("add", {"a": "x"}),
    "call, denied": call("guarded", {}),
    "call, unknown tool": call("nothing_here", {}),
    "call, refused deferred tool": call("vault_lookup", {"key": "k"}),
    "call, a person must approve, nobody to ask": call("wipe_table", {"table": "t"}),
    "call, a person must approve, client can be asked": call(
        "wipe_table", {"table": "t"}, meta=envelope(ASKABLE)
    ),
    "call_tool": call("call_tool", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    "call, name not a string": modern("tools/call", {"name": 5, "arguments": {}}),
    "call, arguments a list": call("add", [1, 2]),
    "call, progress asked": modern(
        "tools/call",
        {"name": "count", "arguments": {"steps": 2}},
        name="count",
        meta={**envelope(), "progressToken": "p"},
    ),
    "call, repeated key in arguments": raw(
        call("add", {})[0],
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add",'
        '"arguments":{"a":1,"a":2,"b":3},"_meta":' + json.dumps(envelope()) + "}}",
    ),
    "call, repeated key outside arguments": raw(
        call("add", {})[0],
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","name":"add",'
        '"arguments":{"a":1,"b":3},"_meta":' + json.dumps(envelope()) + "}}",
    ),
    "no envelope": call("add", {"a": 1, "b": 2}, meta=None),
    "method header mismatch": call("add", {"a": 1, "b": 2}, headers={"mcp-method": "tools/list"}),
    "name header mismatch": call("add", {"a": 1, "b": 2}, headers={"mcp-name": "echo"}),
    "unknown version": call(
        "add", {"a": 1, "b": 2}, headers={"mcp-protocol-version": "2099-01-01"}
    ),
    "param header": call("add", {"a": 1, "b": 2}, headers={"mcp-param-a": "1"}),
    "not JSON": raw(call("add", {})[0], '{"jsonrpc": "2.0", CANARY'),
    "a batch": raw(call("add", {})[0], "[" + call("add", {"a": 1, "b": 2})[1] + "]"),
    "no jsonrpc": raw(call("add", {})[0], '{"id":1,"method":"tools/call","params":{}}'),
    "id a bool": call("add", {"a": 1, "b": 2}, id=True),
    "extra member": raw(call("add", {})[0], call("add", {"a": 1, "b": 2})[1][:-1] + ',"x":1}'),
    "a notification": raw(call("add", {})[0], '{"jsonrpc":"2.0","method":"tools/call"}'),
    "unknown method": modern("tools/nothing", {}),
    "JSON only accepted": call("add", {"a": 1, "b": 2}, headers={"accept": "application/json"}),
    "SSE only accepted": call("add", {"a": 1, "b": 2}, headers={"accept": "text/event-stream"}),
    "wrong content type": call("add", {"a": 1, "b": 2}, headers={"content-type": "text/plain"}),
    "foreign host": call("add", {"a": 1, "b": 2}, headers={"host": "evil.example:80"}),
    "foreign origin": call("add", {"a": 1, "b": 2}, headers={"origin": "http://evil.example"}),
    "loopback origin": call("add", {"a": 1, "b": 2}, headers={"origin": "http://localhost:9"}),
    **{
        label: raw(call("echo", {})[0], text)
        for label, text in encodings(call("echo", {"text": "hi"})[1]).items()
    },
}

LEGACY_REQUESTS: dict[str, Any] = {
    "list": legacy("tools/list", {}),
    "list, no params": legacy("tools/list", None),
    "list, bad cursor": legacy("tools/list", {"cursor": "nope"}),
    "call": legacy("tools/call", {"name": "add", "arguments": {"a": 40, "b": 2}}),
    "call, no arguments": legacy("tools/call", {"name": "explode"}),
    "call, unknown tool": legacy("tools/call", {"name": "nothing_here", "arguments": {}}),
    "call, a person must approve": legacy(
        "tools/call", {"name": "wipe_table", "arguments": {"table": "t"}}
    ),
    "call, arguments a list": legacy("tools/call", {"name": "add", "arguments": [1]}),
    "call, name missing": legacy("tools/call", {"arguments": {}}),
    "call, progress asked": legacy(
        "tools/call",
        {"name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": 1}},
    ),
    "call, repeated key in arguments": raw(
        legacy("tools/list", {})[0],
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add",'
        '"arguments":{"a":1,"a":2,"b":3}}}',
    ),
    "initialize": legacy(
        "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": CLIENT}
    ),
    "not JSON": raw(legacy("tools/list", {})[0], "{CANARY"),
    "a batch": raw(legacy("tools/list", {})[0], "[" + legacy("tools/list", {})[1] + "]"),
    "id a bool": legacy("tools/list", {}, id=False),
    "wrong content type": legacy("tools/list", {}, headers={"content-type": "text/plain"}),
    "JSON only accepted": legacy("tools/list", {}, headers={"accept": "application/json"}),
    "foreign host": legacy("tools/list", {}, headers={"host": "evil.example"}),
    "an older version": legacy("tools/list", {}, headers={"mcp-protocol-version": "2025-06-18"}),
    **{
        label: raw(legacy("tools/list", {})[0], text)
        for label, text in encodings(
            legacy("tools/call", {"name": "echo", "arguments": {"text": "hi"}})[1]
        ).items()
    },
}


@asynccontextmanager
async def clients(hub: ToolHub, **options: Any) -> AsyncIterator[tuple[httpx.AsyncClient, ...]]:
    """A client of the app with the fast path and one of the app without it."""
    async with AsyncExitStack() as stack:
        made = []
        for fast in (True, False):
            app = toolpalette.mcp.asgi_app(hub, fx.Palette, fast=fast, **options)
            await stack.enter_async_context(app.router.lifespan_context(app))
            transport = httpx.ASGITransport(app=app)
            client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000")
            made.append(await stack.enter_async_context(client))
        yield tuple(made)


def messages(response: httpx.Response) -> list[Any]:
    """The JSON-RPC messages of a response (its JSON, or each SSE event's data)."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        found = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        return [m for m in found if m]  # the SDK may open with an empty priming event
    try:
        return [json.loads(text)] if text else []
    except ValueError:  # a plain HTTP refusal's text
        return [text]


def seen(response: httpx.Response) -> dict[str, Any]:
    found = messages(response)
    for message in found:
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and "requestState" in result:
            result["requestState"] = "<sealed>"  # sealed with each app's own key
    return {
        "status": response.status_code,
        "type": response.headers.get("content-type"),
        "session": response.headers.get("mcp-session-id") is not None,
        "messages": found,
    }


async def same_answers(fast: httpx.AsyncClient, sdk: httpx.AsyncClient, requests: dict[str, Any]):
    for label, (headers, body) in requests.items():
        ours = await fast.post("/mcp", headers=headers, content=body)
        theirs = await sdk.post("/mcp", headers=headers, content=body)
        assert seen(ours) == seen(theirs), label
        assert "CANARY" not in ours.text, label


@pytest.mark.parametrize("json_response", [False, True])
async def test_stateless_requests_get_the_sdks_answers_in_both_eras(hub, json_response):
    async with clients(hub, stateless=True, json_response=json_response) as (fast, sdk):
        await same_answers(fast, sdk, MODERN_REQUESTS)
        await same_answers(fast, sdk, LEGACY_REQUESTS)


async def test_a_stateful_server_leaves_handshake_requests_to_the_sdk(hub):
    async with clients(hub) as (fast, sdk):
        await same_answers(fast, sdk, MODERN_REQUESTS)
        await same_answers(fast, sdk, LEGACY_REQUESTS)


async def test_the_fast_path_answers_what_the_sdk_answers_and_no_more(hub):
    # A served call and listing really do come back, in JSON for the 2026 era and as
    # one SSE event for the handshake era (the SDK's SSE mode), with no session.
    async with clients(hub, stateless=True) as (fast, _):
        answer = await fast.post(
            "/mcp", headers=MODERN_REQUESTS["call"][0], content=MODERN_REQUESTS["call"][1]
        )
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["result"]["structuredContent"] == {"total": 42}
        headers, body = LEGACY_REQUESTS["call"]
        answer = await fast.post("/mcp", headers=headers, content=body)
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert messages(answer)[0]["result"]["structuredContent"] == {"total": 42}


@pytest.mark.parametrize("era", [MODERN, HANDSHAKE])
async def test_a_client_that_hangs_up_aborts_the_call_it_made(hub, era):
    # In SSE mode, as the SDK's transports do, a disconnect cancels the call: the
    # tool is told to stop, and nothing is written for a client that is gone.
    if era == MODERN:
        headers, body = call("wait_for_abort", {})
    else:
        headers, body = legacy("tools/call", {"name": "wait_for_abort", "arguments": {}})
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
        "headers": [(b"host", b"127.0.0.1:8000")]
        + [(k.encode(), v.encode()) for k, v in headers.items()],
    }  # fmt: skip
    messages = [{"type": "http.request", "body": body.encode(), "more_body": False}]
    sent: list[Any] = []

    async def receive() -> Any:
        if messages:
            return messages.pop(0)
        await await_until(fx.STARTED.is_set)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    fx.STARTED.clear()
    fx.ABORTED.clear()
    app = toolpalette.mcp.asgi_app(hub, fx.Palette, stateless=True)
    async with leak_check(deadline=10), app.router.lifespan_context(app):
        await app(scope, receive, send)
        await await_until(fx.ABORTED.is_set, timeout=10)
    assert sent == []
