"""A palette's ``tools/list`` answer: serialized once, paged, shared by every session."""

from __future__ import annotations

import collections
import hashlib
import json
import threading
from typing import Any, Final

from toolpalette import SearchSkillsProvider, SearchToolsProvider, ToolProvider
from toolpalette._agents.meta_search import DEFAULT_LIMIT, MAX_LIMIT
from toolpalette._formats.export import export
from toolpalette.mcp._cursor import decode, encode

__all__ = ["KEPT", "Listing", "listing_of"]

KEPT: Final = 64
"""How many listings are kept for sessions to share (least recently used first out)."""
_LISTINGS: collections.OrderedDict[tuple[int, ...], Listing] = collections.OrderedDict()
_LOCK = threading.Lock()


class Listing:
    """One palette's ``tools/list`` answer, serialized once: its pages and its digest."""

    __slots__ = ("by_name", "digest", "providers", "schemas", "tools")

    def __init__(self, providers: tuple[ToolProvider, ...]) -> None:
        self.providers = providers
        self.by_name = {p.name: p for p in providers}
        self.tools = [
            _for_mcp(p, t) for p, t in zip(providers, export(providers, "mcp"), strict=True)
        ]
        self.schemas: dict[str, Any] = {t["name"]: t.get("inputSchema") for t in self.tools}
        """Each listed tool's ``inputSchema`` as served, by name."""
        blob = json.dumps(self.tools, sort_keys=True, separators=(",", ":")).encode()
        self.digest = hashlib.sha256(blob).hexdigest()[:32]

    def page(self, cursor: str | None, size: int) -> tuple[list[dict[str, Any]], str | None]:
        """The tools from ``cursor`` on (the first page for None), and the next cursor.

        Raises:
            BadCursor: ``cursor`` does not decode, or was cut from another listing.
        """
        position = 0 if cursor is None else decode(cursor, self.digest, len(self.tools))
        end = position + size
        following = encode(self.digest, end) if end < len(self.tools) else None
        return self.tools[position:end], following


def _for_mcp(provider: ToolProvider, tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` as MCP clients list it: a search's ``limit`` an optional integer.

    The searches publish ``limit`` required and nullable, for OpenAI's strict mode;
    MCP clients stumble on that (the Inspector sends ``"2"``, pydantic-ai's test model
    cannot build it, openai-agents refuses a call without it). Over MCP it is an
    optional integer with its default and bounds, which the search's own check takes.
    """
    if not isinstance(provider, SearchToolsProvider | SearchSkillsProvider):
        return tool
    schema = dict(tool["inputSchema"])
    properties = dict(schema["properties"])
    limit = dict(properties["limit"])
    limit.update(type="integer", minimum=1, maximum=MAX_LIMIT, default=DEFAULT_LIMIT)
    limit["description"] = str(limit.get("description", "")).split(";")[0] + "."
    properties["limit"] = limit
    schema["properties"] = properties
    schema["required"] = [r for r in schema.get("required", ()) if r != "limit"]
    return {**tool, "inputSchema": schema}


def listing_of(providers: tuple[ToolProvider, ...]) -> Listing:
    """The listing of exactly these providers, shared by every session that offers them."""
    key = tuple(map(id, providers))
    with _LOCK:
        found = _LISTINGS.get(key)
        same = found is not None and all(
            a is b for a, b in zip(found.providers, providers, strict=True)
        )
        if found is not None and same:
            _LISTINGS.move_to_end(key)
            return found
    built = Listing(providers)
    with _LOCK:
        _LISTINGS[key] = built
        while len(_LISTINGS) > KEPT:
            _LISTINGS.popitem(last=False)
    return built
