"""Stateful HTTP sessions, bounded: per caller and in total, short-lived until used.

Why, and how it reaches into the SDK's session manager: docs/architecture.md.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolpalette.mcp._principal import scope_principal

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = [
    "DEFAULT_HANDSHAKE_IDLE",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSIONS_PER_CLIENT",
    "DEFAULT_SESSION_IDLE",
    "SessionLimits",
]

DEFAULT_MAX_SESSIONS: Final = 1000
"""Open stateful sessions a server keeps at most (the SDK answers 503 past it)."""
DEFAULT_SESSIONS_PER_CLIENT: Final = 16
"""Open sessions one principal (or, with no token, one client address) keeps at most."""
DEFAULT_SESSION_IDLE: Final = 1800.0
"""Seconds a session that has been used may stay idle (the SDK's 30 minutes)."""
DEFAULT_HANDSHAKE_IDLE: Final = 30.0
"""Seconds a session that has done nothing after its handshake may stay idle."""
_HANDSHAKE_REQUESTS: Final = 2
"""The POSTs of a handshake: ``initialize`` and ``notifications/initialized``."""

logger = logging.getLogger("toolpalette.mcp")


class SessionLimits:
    """ASGI middleware: the per-caller cap and the handshake's short idle timeout."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        manager: StreamableHTTPSessionManager,
        path: str,
        sessions_per_client: int,
        session_idle: float,
        handshake_idle: float,
    ) -> None:
        self.app = app
        self._manager = manager
        self._path = path
        self._per_client = sessions_per_client
        self._idle = session_idle
        self._handshake_idle = handshake_idle
        self._owned: dict[Any, set[str]] = {}
        self._posts: dict[str, int] = {}
        """Sessions still in their handshake: the POSTs each has served."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self._path.rstrip("/"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        session = headers.get(b"mcp-session-id")
        if session is not None:
            self._used(session.decode("latin-1"), scope["method"])
            await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        key = self._caller(scope)
        open_now = self._open(key)
        if len(open_now) >= self._per_client:
            logger.info("refused a new session: its caller holds %d already", len(open_now))
            await _too_many(send)
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == b"mcp-session-id":
                        self._opened(key, value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, watch)

    def _caller(self, scope: Scope) -> Any:
        principal = scope_principal(scope)
        if principal is not None:
            return ("principal", principal.identity)
        client = scope.get("client")
        return ("address", client[0] if client else None)

    def _live(self) -> dict[str, Any]:
        table = getattr(self._manager, "_server_instances", None)
        return table if isinstance(table, dict) else {}

    def _open(self, key: Any) -> set[str]:
        """``key``'s sessions still open (ended ones forgotten now)."""
        live = self._live()
        owned = self._owned.get(key)
        if owned is None:
            return set()
        owned.intersection_update(live)
        for gone in [s for s in self._posts if s not in live]:
            del self._posts[gone]
        if not owned:
            del self._owned[key]
            return set()
        return owned

    def _opened(self, key: Any, session: str) -> None:
        self._owned.setdefault(key, set()).add(session)
        self._posts[session] = 1
        self._set_idle(session, self._handshake_idle)

    def _used(self, session: str, method: str) -> None:
        posts = self._posts.get(session)
        if posts is None or method != "POST":
            return
        if posts >= _HANDSHAKE_REQUESTS:  # a request past the handshake: a session in use
            del self._posts[session]
            self._set_idle(session, self._idle)
        else:
            self._posts[session] = posts + 1

    def _set_idle(self, session: str, seconds: float) -> None:
        transport = self._live().get(session)
        if transport is not None and hasattr(transport, "_idle_timeout"):
            transport._idle_timeout = seconds


async def _too_many(send: Send) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": "Too many open sessions for this client."},
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", b"30"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
