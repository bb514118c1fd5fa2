"""The HTTP server's hot path: stateless ``tools/call`` and ``tools/list`` answered directly.

Anything it does not answer exactly as the SDK would goes to the SDK untouched.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeGuard, cast

import mcp_types as types
from mcp.server.runner import modern_error_data
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    X_MCP_HEADER_KEY,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import methods as _methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolpalette.mcp._raw import NO_REPEATS, parse_keeping_pairs

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from toolpalette.mcp._server import PaletteServer
    from toolpalette.mcp._tools import ToolsEndpoint

__all__ = ["FastPath"]

_METHODS: Final = frozenset({"tools/call", "tools/list"})
_VERSION_HEADER: Final = b"mcp-protocol-version"
_PING: Final = 15.0
"""Seconds between SSE keep-alive comments, as the SDK's transports send them."""
_SSE_HEADERS_MODERN: Final[list[tuple[bytes, bytes]]] = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
"""The 2026-era entry's SSE headers (its module keeps them private)."""
_MODERN_PING: Final = b": ping\r\n\r\n"
_HEADED_KEPT: Final = 4096
"""The most input schemas `FastPath._declares_headers()` remembers."""
_ESCAPED_SURROGATE: Final = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\uD800``-``\\uDFFF`` escape: half of a pair, or a lone surrogate."""
_INTERNAL: Final = types.ErrorData(code=types.INTERNAL_ERROR, message="Internal server error")


class _Fallback(Exception):
    """The request is the SDK's to answer (raised before any tool runs)."""


class FastPath:
    """ASGI middleware answering clean stateless ``tools/call`` and ``tools/list`` itself.

    Args:
        app: the SDK's application, which answers everything else.
        server: the palette server (its tools endpoint and registered handlers).
        tools: the endpoint the SDK's middleware asks.
        manager: the SDK's session manager (its security settings, response mode,
            body limit and statelessness are followed).
        path: the endpoint's path.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        server: PaletteServer,
        tools: ToolsEndpoint,
        manager: StreamableHTTPSessionManager,
        path: str,
    ) -> None:
        self.app = app
        self._server = server
        self._tools = tools
        self._security = TransportSecurityMiddleware(manager.security_settings)
        self._json = manager.json_response
        self._stateless = manager.stateless
        self._limit = manager.max_request_body_size
        self._path = path
        self._headed: dict[int, tuple[Any, bool]] = {}
        probe = EventSourceResponse(content=iter(()), headers=_LEGACY_SSE_HEADERS)
        self._legacy_sse_headers = list(probe.raw_headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or _route(scope) != self._path:
            await self.app(scope, receive, send)
            return
        version = None
        for key, value in scope["headers"]:
            if key == _VERSION_HEADER:
                version = value.decode("latin-1")
                break
        modern = version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS
        if not modern and not (self._stateless and version is not None):
            await self.app(scope, receive, send)
            return
        held, body = await self._read(receive)
        if body is None:
            await self.app(scope, _replay(held, receive), send)
            return
        request = Request(scope, _replay(held, receive))
        try:
            exchange = await self._check(request, body, held, modern=modern)
        except _Fallback:
            exchange = None
        if exchange is None:
            await self.app(scope, _replay(held, receive), send)
            return
        await self._serve(exchange, scope, receive, send)

    async def _read(self, receive: Receive) -> tuple[list[Message], bytes | None]:
        """The messages read and the body; None for a body to leave to the SDK (too long)."""
        held: list[Message] = []
        size = 0
        while True:
            message = await receive()
            held.append(message)
            if message["type"] != "http.request":
                return held, None
            size += len(message.get("body", b""))
            if size > self._limit:
                return held, None
            if not message.get("more_body", False):
                break
        if len(held) == 1:
            return held, held[0].get("body", b"")
        return held, b"".join(m.get("body", b"") for m in held)

    async def _check(
        self, request: Request, body: bytes, held: list[Message], *, modern: bool
    ) -> _Exchange | None:
        """The exchange to answer here, or None when the SDK answers (every error its own)."""
        if await self._security.validate_request(request, is_post=True) is not None:
            return None
        has_json, has_sse = check_accept_headers(request)
        if not has_json or (not self._json and not has_sse):
            return None
        if not modern and not _json_content(request):
            return None
        try:
            text = body.decode("utf-8")  # as the SDK reads it: UTF-8, nothing detected
        except UnicodeDecodeError:
            return None
        if _ESCAPED_SURROGATE.search(text) is not None:
            return None  # the SDK decides on text that may hold a lone surrogate
        try:  # one read of the body: the repeated-key check of tools/call is made here too
            message, repeated = parse_keeping_pairs(text)
            if repeated:  # rare: read as the SDK would; the endpoint finds where it repeats
                message = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, key, params = message.get("method"), message.get("id"), message.get("params")
        if method not in _METHODS or not _plain_id(key):
            return None
        if params is not None and not isinstance(params, dict):
            return None
        params = params or {}
        if "requestState" in params or "inputResponses" in params:
            return None
        meta = params.get("_meta")
        if meta is not None and (not isinstance(meta, dict) or "progressToken" in meta):
            return None
        if not set(message) <= {"jsonrpc", "id", "method", "params"}:
            return None  # let the SDK's envelope model decide on anything more
        if modern:
            version = self._modern_version(request, message, method, params)
        else:
            version = request.headers.get("mcp-protocol-version", "")
        if version is None or not self._valid(method, params, version, modern=modern):
            return None
        session = _SESSION if modern or self._json else _LoggedSession()
        if not repeated:
            request.scope.setdefault("state", {})[NO_REPEATS] = True
        return _Exchange(
            request, held, key, method, params, version, modern=modern, session=session
        )

    def _valid(self, method: str, params: dict[str, Any], version: str, *, modern: bool) -> bool:
        """Whether the request's params pass the SDK's own validation as they are.

        Checked before the middleware chain runs, so that a request the SDK must answer
        goes to it before anything (a span, a timing) has seen it here.
        """
        if method == "tools/call":
            plain = isinstance(params.get("name"), str) and isinstance(
                params.get("arguments"), (dict, type(None))
            )
        else:
            plain = isinstance(params.get("cursor"), (str, type(None)))
        if not plain:
            return False
        try:
            _methods.validate_client_request(method, version, params)
            if not modern:
                entry = self._server.get_request_handler(method)
                if entry is None:
                    return False
                entry.params_type.model_validate(params, by_name=False)
        except (KeyError, ValueError, ValidationError):
            return False
        return True

    def _modern_version(
        self, request: Request, message: dict[str, Any], method: str, params: dict[str, Any]
    ) -> str | None:
        """The SDK's checks of a 2026-era request: its version when they all pass."""
        if find_duplicated_routing_header(request.headers.items()) is not None:
            return None
        # The request's own headers: a copy into a dict would look each name up again.
        verdict = classify_inbound_request(message, headers=request.headers)
        if isinstance(verdict, InboundLadderRejection):
            return None
        capabilities = verdict.client_capabilities
        if isinstance(capabilities, Mapping) and not _ASKABLE.isdisjoint(capabilities):
            return None  # a call may pause to ask this client: the SDK's boundary seals it
        meta = params.get("_meta")
        if isinstance(meta, Mapping) and types.LOG_LEVEL_META_KEY in meta:
            return None  # the client asked for the call's log lines: the SDK streams them
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if isinstance(name, str) and isinstance(arguments, (dict, type(None))):
                schema = self._server.get_tool_input_schema
                input_schema = schema(name) if schema is not None else None
                if self._declares_headers(input_schema) and (arguments or _param_headers(request)):
                    rejected = validate_mcp_param_headers(
                        input_schema, arguments or {}, request.headers
                    )
                    if rejected is not None:
                        return None
        return verdict.protocol_version

    def _declares_headers(self, schema: Any) -> bool:
        """Whether ``schema`` may declare an ``Mcp-Param-*`` header (else none is checked).

        Without an ``x-mcp-header`` key anywhere in it, the SDK's check finds no
        declared header and passes every request; a listing's schemas are the same
        objects from call to call, so each is looked at once.
        """
        if schema is None:
            return False
        found = self._headed.get(id(schema))
        if found is None or found[0] is not schema:
            if len(self._headed) >= _HEADED_KEPT:
                self._headed.clear()
            found = self._headed[id(schema)] = (
                schema,
                f'"{X_MCP_HEADER_KEY}"' in json.dumps(schema),
            )
        return found[1]

    async def _serve(self, exchange: _Exchange, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer ``exchange`` in the response mode the SDK's transport would use."""
        if self._json:  # the SDK answers JSON mode in the request's task, unwatched
            try:
                reply = await self._answer(exchange)
            except _Fallback:
                await self.app(scope, _replay(exchange.held, receive), send)
                return
            await self._send_json(exchange, reply, send)
            return
        # SSE mode: a disconnect cancels the call, and a long call is kept alive.
        call = asyncio.ensure_future(self._answer(exchange))
        watch = asyncio.ensure_future(_disconnected(receive))
        try:
            done, _ = await asyncio.wait(
                {call, watch}, timeout=_PING, return_when="FIRST_COMPLETED"
            )
            if call in done:
                try:
                    reply = call.result()
                except _Fallback:
                    watch.cancel()
                    await asyncio.gather(watch, return_exceptions=True)
                    await self.app(scope, _replay(exchange.held, receive), send)
                    return
                if exchange.modern:
                    await self._send_json(exchange, reply, send)
                    return
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": self._legacy_sse_headers,
                    }
                )
                body = (
                    exchange.session.take() if isinstance(exchange.session, _LoggedSession) else b""
                )
                await send(
                    {
                        "type": "http.response.body",
                        "body": body + _legacy_event(reply),
                        "more_body": True,
                    }
                )
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            if watch in done:
                call.cancel()
                return
            await self._stream(exchange, call, watch, send)
        finally:
            watch.cancel()
            if not call.done():
                call.cancel()

    async def _stream(
        self,
        exchange: _Exchange,
        call: asyncio.Future[Any],
        watch: asyncio.Future[None],
        send: Send,
    ) -> None:
        """A call still running after the first keep-alive interval: SSE, pinged, as the SDK."""
        headers = _SSE_HEADERS_MODERN if exchange.modern else self._legacy_sse_headers
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        logged = exchange.session if isinstance(exchange.session, _LoggedSession) else None
        while True:
            ping = _MODERN_PING if exchange.modern else _legacy_ping()
            if logged is not None:
                ping = logged.take() + ping
            await send({"type": "http.response.body", "body": ping, "more_body": True})
            done, _ = await asyncio.wait(
                {call, watch}, timeout=_PING, return_when="FIRST_COMPLETED"
            )
            if call in done:
                break
            if watch in done:
                call.cancel()
                return
        try:
            reply = call.result()
        except _Fallback:  # pragma: no cover - raised before any await, so never this late
            reply = _error_reply(exchange, _INTERNAL)
        event = _modern_event(reply) if exchange.modern else _legacy_event(reply)
        if logged is not None:
            event = logged.take() + event
        await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _answer(self, exchange: _Exchange) -> dict[str, Any]:
        """The JSON-RPC reply (a dict), asked of the tools endpoint as the SDK's chain would."""
        ctx = _Context(
            method=exchange.method,
            params=exchange.params,
            protocol_version=exchange.version,
            request_id=exchange.key,
            request=exchange.request,
            meta=exchange.params.get("_meta"),
            session=exchange.session,
        )
        call: Callable[[Any], Awaitable[Any]] = self._inner
        for middleware in reversed(self._server.middleware):  # the SDK's chain, as it runs it
            call = _link(middleware, call)
        try:
            result = cast("dict[str, Any]", await call(ctx))  # the endpoint answers in wire form
            if not exchange.modern:
                result = _methods.serialize_server_result(exchange.method, exchange.version, result)
        except _Fallback:
            raise
        except Exception as exc:  # the mapping the SDK's entries apply
            return _error_reply(exchange, modern_error_data(exc))
        return {"jsonrpc": "2.0", "id": exchange.key, "result": result}

    async def _inner(self, ctx: _Context) -> dict[str, Any]:
        """The SDK's handler step, for a request the endpoint leaves to it.

        A handshake-era request (which `_valid()` checked as the SDK's runner
        checks it) is answered by the endpoint's registered handler; a 2026-era one the
        endpoint would not answer as it is cannot have passed `_valid()`, and would
        go to the SDK whole (no tool has run).
        """
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise _Fallback
        return await self._tools.checked(ctx, None)  # type: ignore[arg-type]

    async def _send_json(self, exchange: _Exchange, reply: dict[str, Any], send: Send) -> None:
        error = reply.get("error")
        status = 200
        if exchange.modern and isinstance(error, dict):
            status = ERROR_CODE_HTTP_STATUS.get(error.get("code"), 200)  # type: ignore[arg-type]
        body = json.dumps(reply, separators=(",", ":"), ensure_ascii=False).encode()
        headers = [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", b"application/json"),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@dataclass(frozen=True)
class _Exchange:
    """One request the fast path answers."""

    request: Request
    held: list[Message]
    """The request's messages as read (replayed to the SDK if it answers after all)."""
    key: str | int
    method: str
    params: dict[str, Any]
    version: str
    modern: bool
    session: _Session = field(default_factory=lambda: _Session())
    """What the endpoint sends through (a handshake-era SSE call's log lines)."""


class _Session:
    """What the tools endpoint asks of a request's session, for a request with none.

    No progress was asked for and the client cannot be asked anything (the fast path
    takes no other request), and a shared thinker keeps no grants, so nothing is sent.
    """

    client_params = None
    client_capabilities = None
    can_send_request = False

    async def report_progress(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def send_tool_list_changed(self) -> None:
        return None

    async def send_log_message(self, *args: Any, **kwargs: Any) -> None:
        return None


class _LoggedSession(_Session):
    """A handshake-era SSE exchange's session: a tool's log lines go out before its result.

    (A 2026-era request that asks for log lines goes to the SDK; a JSON answer has
    nowhere to put them.)
    """

    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []

    async def send_log_message(
        self, level: str, data: Any, logger: str | None = None, **_: Any
    ) -> None:
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notes.append({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

    def take(self) -> bytes:
        """The log lines so far, as SSE events."""
        notes, self.notes = self.notes, []
        return b"".join(_legacy_event(note) for note in notes)


_SESSION: Final = _Session()
_ASKABLE: Final = frozenset({"elicitation", "sampling", "roots"})
"""The client capabilities a tool may ask through (``ToolContext``): the SDK's path then."""


@dataclass
class _Context:
    """The request context the tools endpoint reads (the SDK's ``ServerRequestContext``'s)."""

    method: str
    params: dict[str, Any]
    protocol_version: str
    request_id: str | int
    request: Request
    meta: Any
    session: _Session = field(default=_SESSION)
    lifespan_context: Any = None


_LEGACY_SSE_HEADERS: Final = {
    "Cache-Control": "no-cache, no-transform",
    "Connection": "keep-alive",
    "Content-Type": "text/event-stream",
}
"""The handshake-era transport's SSE headers (``EventSourceResponse`` adds its own)."""


def _link(middleware: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """``call_next`` behind one server middleware, as the SDK's runner links them."""

    async def linked(ctx: Any) -> Any:
        return await middleware(ctx, call_next)

    return linked


def _route(scope: Scope) -> str:
    """The path routing sees: the request's, less the prefix the app is mounted under."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _json_content(request: Request) -> bool:
    """The handshake-era transport's ``Content-Type`` test."""
    content_type = request.headers.get("content-type", "")
    return any(part.strip() == "application/json" for part in content_type.split(";")[0].split(","))


def _plain_id(key: Any) -> TypeGuard[str | int]:
    return isinstance(key, (str, int)) and not isinstance(key, bool)


def _param_headers(request: Request) -> bool:
    return any(k.startswith(b"mcp-param-") for k, _ in request.scope["headers"])


def _error_reply(exchange: _Exchange, error: types.ErrorData) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": exchange.key,
        "error": error.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def _legacy_event(reply: dict[str, Any]) -> bytes:
    data = json.dumps(reply, separators=(",", ":"), ensure_ascii=False)
    return ServerSentEvent(data=data, event="message").encode()


def _modern_event(reply: dict[str, Any]) -> bytes:
    data = json.dumps(reply, separators=(",", ":"))
    return f"event: message\r\ndata: {data}\r\n\r\n".encode()


def _legacy_ping() -> bytes:
    from datetime import datetime, timezone

    return ServerSentEvent(comment=f"ping - {datetime.now(timezone.utc)}").encode()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _replay(held: list[Message], receive: Receive) -> Receive:
    """``receive`` with the messages already read given first, in order."""
    pending = list(held)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
