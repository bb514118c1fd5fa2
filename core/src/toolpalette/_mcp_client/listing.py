"""A server's tool listing: every page of ``tools/list``, bounded, kept until it may change."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Final

from toolpalette._mcp_client.transports import describe
from toolpalette._run import mcp_timing as _mcp_timing
from toolpalette.errors import MCPServerError

__all__ = ["MAX_PAGES", "MAX_TOOLS", "MIN_TTL", "Fetched", "Listing", "fetch"]

MIN_TTL: Final = 1.0
"""A ``ttlMs`` hint shorter than this (seconds) is read as this."""
MAX_PAGES: Final = 100
"""The most ``tools/list`` pages read from one server."""
MAX_TOOLS: Final = 1000
"""The most tools one server may list."""


@dataclass(frozen=True)
class Fetched:
    """What one listing read: the tools (SDK ``Tool`` objects), the hint, a bound passed."""

    tools: list[Any]
    """The tools, in the server's order, at most `MAX_TOOLS`."""
    ttl: float | None
    """The ``ttlMs`` hint in seconds (floored at `MIN_TTL`), None without one."""
    over: str | None = None
    """The bound the server's listing passed (what was read within it is kept), or None."""


class Listing:
    """One server's tools as last listed, and whether they may still be used.

    Written on the pool's event loop; `fresh()`, `check_expiry()` and
    `generation` are read from any thread (a stale read only lists again).
    """

    def __init__(self) -> None:
        self.generation = 0
        """Grows whenever the server's tool listing may have changed (list_changed, ttl,
        a hang-up)."""
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
        self._tools = tools
        self._expires = time.monotonic() + ttl if ttl is not None else None


async def fetch(client: Any, server: str) -> Fetched:
    """Every page of the server's ``tools/list`` within the bounds, and its ``ttlMs`` hint.

    Raises:
        MCPServerError: a page failed, or the server's cursors go round in a loop.
    """
    tools: list[Any] = []
    cursor: str | None = None
    ttl: float | None = None
    seen: set[str] = set()
    over: str | None = None
    try:
        for _ in range(MAX_PAGES):
            sent = client.list_tools(cursor=cursor, cache_mode="bypass")
            page = await _mcp_timing.timed_request("client", sent, "tools/list", None, client)
            if ttl is None and "ttl_ms" in page.model_fields_set:
                ttl = max(MIN_TTL, page.ttl_ms / 1000)
            tools.extend(page.tools)
            if len(tools) > MAX_TOOLS:
                del tools[MAX_TOOLS:]
                over = f"it lists more than {MAX_TOOLS} tools (the bound on one server's tools)"
                break
            cursor = page.next_cursor
            if cursor is None:
                break
            if cursor in seen:
                raise MCPServerError(
                    server=server, reason="its tools/list cursors go round in a loop"
                )
            seen.add(cursor)
        else:
            over = (
                f"its tools/list has more than {MAX_PAGES} pages "
                "(the bound on one server's listing)"
            )
    except MCPServerError:
        raise
    except Exception as exc:
        raise MCPServerError(server=server, reason=f"tools/list failed: {describe(exc)}") from exc
    return Fetched(tools, ttl, over)
