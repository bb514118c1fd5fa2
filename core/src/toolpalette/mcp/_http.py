"""The palette server over streamable HTTP, as an ASGI application for any ASGI server."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolpalette import Thinker, ToolHub
from toolpalette.mcp._fast import FastPath
from toolpalette.mcp._limits import (
    DEFAULT_HANDSHAKE_IDLE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE,
    DEFAULT_SESSIONS_PER_CLIENT,
    SessionLimits,
)
from toolpalette.mcp._server import DEFAULT_LIST_TTL_MS, DEFAULT_PAGE_SIZE, server

if TYPE_CHECKING:
    from mcp.server.subscriptions import SubscriptionBus

    from toolpalette.mcp._auth import JWTAuth
    from toolpalette.mcp._principal import ThinkerFor
    from toolpalette.mcp._tasks import TaskSettings

__all__ = ["AccessLog", "PlainErrors", "asgi_app"]

_access = logging.getLogger("toolpalette.mcp.access")

_PLAIN: Final = {
    "Parse error:": "Parse error: the body is not JSON.",
    "Validation error:": "Invalid request: the body is not one JSON-RPC message.",
}
"""The fixed texts of the transport's errors that would quote the body, by prefix."""


def asgi_app(
    hub: ToolHub,
    thinker: type[Thinker] | None = None,
    *,
    read_only: bool = False,
    stateless: bool = False,
    page_size: int = DEFAULT_PAGE_SIZE,
    list_ttl_ms: int = DEFAULT_LIST_TTL_MS,
    path: str = "/mcp",
    host: str = "127.0.0.1",
    json_response: bool = False,
    name: str = "toolpalette",
    state_keys: Sequence[bytes | str] | None = None,
    auth: JWTAuth | None = None,
    thinker_for: ThinkerFor | None = None,
    fast: bool = True,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    sessions_per_client: int = DEFAULT_SESSIONS_PER_CLIENT,
    session_idle: float = DEFAULT_SESSION_IDLE,
    handshake_idle: float = DEFAULT_HANDSHAKE_IDLE,
    tasks: TaskSettings | None = None,
    subscription_bus: SubscriptionBus | None = None,
) -> Starlette:
    """An ASGI application serving ``thinker``'s palette over streamable HTTP at ``path``.

    ``stateless`` answers every request on its own (no ``Mcp-Session-Id``), from any
    worker. ``host`` is the address it is served on: on loopback the SDK refuses
    requests whose ``Host`` or ``Origin`` is not loopback (DNS rebinding protection).
    ``state_keys``: give every worker the same (see
    [`toolpalette.mcp.server()`][toolpalette.mcp.server]). ``auth`` (a
    [`JWTAuth`][toolpalette.mcp.JWTAuth]) makes it an OAuth 2.1 resource
    server: every request needs a valid bearer token (else 401 with
    ``WWW-Authenticate``, or 403 for a missing scope), and the protected resource
    metadata is served at ``/.well-known/oauth-protected-resource{path}``.
    ``thinker_for`` maps each request's verified [`Principal`][toolpalette.mcp.Principal]
    to the thinker class it is served (or a [`PaletteChoice`][toolpalette.mcp.PaletteChoice]).
    ``fast`` answers stateless ``tools/call`` and ``tools/list`` requests without the
    SDK's transport (the same answers, see `toolpalette.mcp._fast`); False leaves
    every request to the SDK. A stateful server keeps at most ``max_sessions``
    sessions (503 past it), ``sessions_per_client`` of them per principal (per client
    address without authorization; 429 past it); a session expires after
    ``session_idle`` idle seconds, or ``handshake_idle`` while it has done nothing
    since its handshake. ``tasks``: give every worker the same store. A resource
    subscription (either era) is held by the worker serving its connection, and hears
    the changes announced in that worker's process, unless every worker is given one
    shared ``subscription_bus``. Other options as
    [`toolpalette.mcp.server()`][toolpalette.mcp.server].

    Raises:
        ValueError: an option is out of range, or ``auth`` cannot be used.
        OSError: ``auth``'s key file cannot be read.
    """
    palette = server(
        hub,
        thinker,
        read_only=read_only,
        page_size=page_size,
        stateless=stateless,
        list_ttl_ms=list_ttl_ms,
        name=name,
        state_keys=state_keys,
        thinker_for=thinker_for,
        tasks=tasks,
        subscription_bus=subscription_bus,
    )
    if min(max_sessions, sessions_per_client) < 1 or min(session_idle, handshake_idle) <= 0:
        raise ValueError("session limits must be positive")
    app: Starlette = palette.streamable_http_app(
        streamable_http_path=path,
        stateless_http=stateless,
        json_response=json_response,
        host=host,
        max_sessions=max_sessions,
        session_idle_timeout=max(session_idle, handshake_idle),
    )
    if fast:
        app.add_middleware(
            FastPath,
            server=palette,
            tools=palette.tools_endpoint,
            manager=palette.session_manager,
            path=path,
        )
    if not stateless:
        app.add_middleware(
            SessionLimits,
            manager=palette.session_manager,
            path=path,
            sessions_per_client=sessions_per_client,
            session_idle=session_idle,
            handshake_idle=handshake_idle,
        )
    app.add_middleware(PlainErrors)
    app.add_middleware(TrimmedHeaders)
    if auth is not None:  # the outermost middleware but one, before anything answers
        from toolpalette.mcp._auth import authorized

        authorized(app, auth)
    app.add_middleware(AccessLog)
    return app


class TrimmedHeaders:
    """ASGI middleware: whitespace around a header's value is not part of it (RFC 9110).

    A client may send ``Mcp-Name:   echo  ``; the SDK's checks of the SEP-2243 headers
    compare the value as it came, and would refuse it. Values are trimmed of spaces and
    tabs at both ends before anything reads them (a scope is copied only when one has
    any).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope.get("headers") or ()
            if any(v[:1] in _OWS or v[-1:] in _OWS for _, v in headers):
                trimmed = [(k, v.strip(b" \t")) for k, v in headers]
                scope = {**scope, "headers": trimmed}
        await self.app(scope, receive, send)


_OWS = (b" ", b"\t")


class AccessLog:
    """ASGI middleware: one INFO line per HTTP request (``toolpalette.mcp.access``).

    The method, the path, the status and the time to the answer's start: nothing of
    the request's headers, body or token.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _access.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []

        async def seen(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                _access.info(
                    "%s %s %d %.1f ms",
                    scope["method"],
                    scope["path"],
                    message["status"],
                    (time.perf_counter() - started) * 1000,
                )
            await send(message)

        await self.app(scope, receive, seen)
        if not status:
            _access.info("%s %s (no answer)", scope["method"], scope["path"])


class PlainErrors:
    """ASGI middleware: a 400 that would quote the request body gets a fixed text.

    Only answers with status 400 are looked at (read whole: they are short); every
    other answer passes untouched.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def plain(message: Message) -> None:
            if message["type"] == "http.response.start" and message.get("status") == 400:
                held.append(message)
                return
            if held and message["type"] == "http.response.body":
                if message.get("more_body", False):
                    held.append(message)
                    return
                body = b"".join(m.get("body", b"") for m in held[1:]) + message.get("body", b"")
                start, held[:] = held[0], []
                await _send_plain(send, start, body)
                return
            await send(message)

        await self.app(scope, receive, plain)


async def _send_plain(send: Send, start: Message, body: bytes) -> None:
    """Send a held 400 answer, its error message replaced if it would quote the body."""
    fixed = _plain_body(body)
    if fixed is not None:
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(fixed)).encode()))
        start = {**start, "headers": headers}
        body = fixed
    await send(start)
    await send({"type": "http.response.body", "body": body})


def _plain_body(body: bytes) -> bytes | None:
    try:
        answer: Any = json.loads(body)
        message = answer["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(message, str):
        return None
    for prefix, text in _PLAIN.items():
        if message.startswith(prefix) and message != text:
            answer["error"]["message"] = text
            return json.dumps(answer, separators=(",", ":")).encode()
    return None
