"""The palette server over streamable HTTP, as an ASGI application for any ASGI server.

What lives where in a deployment with several workers: a stateful MCP session (and
its thinker, conversation and grants) lives in the worker that opened it, so route
each ``Mcp-Session-Id`` to one worker (sticky sessions) or run one worker. Stateless
mode, and every 2026-07-28 request, keeps nothing between requests: any worker
answers any request, ``tools/list`` cursors included (they carry the palette digest
and a position, nothing a worker must remember).
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette

from toolpalette import Thinker, ToolHub
from toolpalette.mcp._server import DEFAULT_LIST_TTL_MS, DEFAULT_PAGE_SIZE, server

__all__ = ["asgi_app"]


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
) -> Starlette:
    """An ASGI application serving ``thinker``'s palette over streamable HTTP at ``path``.

    ``stateless`` answers every request on its own (no ``Mcp-Session-Id``): the
    up-front palette, without meta-tools, from any worker. ``host`` is the address
    it is served on: on loopback the SDK refuses requests whose ``Host`` or ``Origin``
    is not loopback (DNS rebinding protection). Other options as :func:`server`.
    """
    palette = server(
        hub,
        thinker,
        read_only=read_only,
        page_size=page_size,
        stateless=stateless,
        list_ttl_ms=list_ttl_ms,
        name=name,
    )
    app: Any = palette.streamable_http_app(
        streamable_http_path=path,
        stateless_http=stateless,
        json_response=json_response,
        host=host,
    )
    return app  # type: ignore[no-any-return]
