"""A server's tool listing: every page of ``tools/list``, kept until it may have changed.

:func:`fetch` follows ``nextCursor`` to the last page (a cursor seen twice is the
server's fault, not a reason to loop). :class:`Listing` keeps what it fetched until the
server says ``notifications/tools/list_changed`` (or a list-change event on 2026-era
sessions), the connection hangs up, or the server's ``ttlMs`` hint runs out (floored at
:data:`MIN_TTL`; without a hint the listing is kept). Its :attr:`~Listing.generation`
grows each time the listing may have changed, and the hub's palettes key their caches
on it.
"""

from __future__ import annotations

import time
from typing import Any, Final

from toolpalette._mcp_client.transports import describe
from toolpalette._run import mcp_timing as _mcp_timing
from toolpalette.errors import MCPServerError

__all__ = ["MIN_TTL", "Listing", "fetch"]

MIN_TTL: Final = 1.0
"""A ``ttlMs`` hint shorter than this (seconds) is read as this."""
_MAX_PAGES: Final = 1000


class Listing:
    """One server's tools as last listed, and whether they may still be used.

    Written on the pool's event loop; :meth:`fresh`, :meth:`check_expiry` and
    :attr:`generation` are read from any thread (a stale read only lists again).
    """

    def __init__(self) -> None:
        self.generation = 0
        """Grows whenever the server's tool listing may have changed (list_changed, ttl)."""
        self._tools: list[Any] | None = None
        self._expires: float | None = None

    @property
    def tools(self) -> list[Any] | None:
        """The tools (SDK ``Tool`` objects) as last listed, or None before the first."""
        return self._tools

    def changed(self) -> None:
        """Forget the listing: the next look asks the server again."""
        self._expires = 0.0
        self.generation += 1

    def check_expiry(self) -> None:
        """Count a listing whose ``ttlMs`` ran out as changed (once), so caches look again."""
        expires = self._expires
        if expires is not None and expires != 0.0 and time.monotonic() >= expires:
            self.changed()

    def fresh(self) -> bool:
        """Whether the kept listing may be used without asking the server again."""
        return self._tools is not None and (
            self._expires is None or time.monotonic() < self._expires
        )

    def keep(self, tools: list[Any], ttl: float | None) -> None:
        """Keep a new listing, for ``ttl`` seconds (None: until the server says it changed)."""
        changed = self._tools is not None and _names(self._tools) != _names(tools)
        self._tools = tools
        self._expires = time.monotonic() + ttl if ttl is not None else None
        if changed:
            self.generation += 1


async def fetch(client: Any, server: str) -> tuple[list[Any], float | None]:
    """Every page of the server's ``tools/list``, and its ``ttlMs`` hint in seconds.

    Raises:
        MCPServerError: a page failed, or the server's cursors go round in a loop.
    """
    tools: list[Any] = []
    cursor: str | None = None
    ttl: float | None = None
    seen: set[str] = set()
    try:
        for _ in range(_MAX_PAGES):
            sent = client.list_tools(cursor=cursor, cache_mode="bypass")
            page = await _mcp_timing.timed_request("client", sent, "tools/list", None, client)
            if ttl is None and "ttl_ms" in page.model_fields_set:
                ttl = max(MIN_TTL, page.ttl_ms / 1000)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
            if cursor in seen:
                raise MCPServerError(
                    server=server, reason="its tools/list cursors go round in a loop"
                )
            seen.add(cursor)
    except MCPServerError:
        raise
    except Exception as exc:
        raise MCPServerError(server=server, reason=f"tools/list failed: {describe(exc)}") from exc
    return tools, ttl


def _names(tools: list[Any]) -> list[tuple[str, Any, Any]]:
    return [(t.name, t.input_schema, t.description) for t in tools]
