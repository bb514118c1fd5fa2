"""What a thinker's turn offers the model, and what waits for a person's approval.

A turn of a thinker whose ``tool_search`` is ``native`` also carries its deferred
tools: in a format with a search of its own (``_formats/export.py``, ``NATIVE_SEARCH``)
its schemas are the offered tools without ``search_tools``, then the provider's search
tool and the deferred tools marked ``defer_loading``; in the other formats they are
the offered tools, ``search_tools`` included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolpalette._agents.meta_search import SearchToolsProvider
from toolpalette._formats.calls import ToolCall, calls_from
from toolpalette._formats.export import (
    NATIVE_SEARCH,
    Format,
    export,
    export_deferred,
    export_json,
    strict_report,
)
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.registry import Surface

__all__ = ["Approval", "Turn"]


@dataclass(frozen=True)
class Turn:
    """What the model is offered in one turn: tools, their schemas, and the preamble."""

    number: int
    """The turn's number, from 1."""
    surface: Surface
    """The palette's providers and version, taken together."""
    preamble: str
    """The instructions to put before the conversation (attached skills)."""
    strict: bool = False
    """Whether schemas are normalized into each provider's strict subset (the thinker's
    ``strict``); the thinker then undoes it on the model's input."""
    native: bool = False
    """Whether the provider's own tool search finds the deferred tools, in the formats
    that have one (the thinker's ``tool_search`` is ``native``); the thinker then
    decides each call of a deferred tool at call time."""
    deferred: tuple[ToolProvider, ...] = ()
    """The thinker's deferred tools, in a ``native`` turn (empty otherwise)."""
    _cache: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    _fragments: dict[tuple[str, bool], dict[int, tuple[ToolProvider, bytes]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """Each provider's serialized schema by format, shared by a thinker's turns."""

    @property
    def tools(self) -> tuple[ToolProvider, ...]:
        """The providers offered, in registration order."""
        return self.surface.providers

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names offered, in registration order."""
        return self.surface.names

    @property
    def version(self) -> int:
        """The palette version this turn was taken at."""
        return self.surface.version

    def schemas(self, fmt: Format = "openai_chat") -> list[dict[str, Any]]:
        """The offered tools' schemas in a provider's format (see ``_tools/formats.py``).

        In a ``native`` turn and a format with a search of its own, the deferred tools
        follow, marked ``defer_loading``, after the provider's search tool (which
        replaces ``search_tools``).

        Raises:
            ValueError: ``fmt`` is not a supported format.
        """
        if not self._searches_natively(fmt):
            return export(self.surface.providers, fmt, strict=self.strict)
        offered = export(self._offered_natively(), fmt, strict=self.strict)
        return offered + export_deferred(self.deferred, fmt, strict=self.strict)

    def _searches_natively(self, fmt: str) -> bool:
        return self.native and fmt in NATIVE_SEARCH

    def _offered_natively(self) -> list[ToolProvider]:
        return [p for p in self.surface.providers if not isinstance(p, SearchToolsProvider)]

    def schemas_json(self, fmt: Format = "openai_chat") -> bytes:
        """:meth:`schemas` as canonical JSON bytes, computed once per turn and format.

        Raises:
            ValueError: ``fmt`` is not a supported format.
        """
        if fmt not in self._cache:
            self._cache[fmt] = self._serialize(fmt)
        return self._cache[fmt]

    def _serialize(self, fmt: Format) -> bytes:
        """The canonical JSON of the offered schemas, one provider at a time.

        A JSON array is its items joined by commas, so each provider's item is kept
        (in ``_fragments``, which a thinker hands every turn) and only the providers new
        since the last turn are serialized: after a grant, one tool, not the palette.
        """
        export([], fmt)  # an unknown format raises ValueError before anything is kept
        if not self._searches_natively(fmt):
            return b"[" + b",".join(self._items(self.surface.providers, fmt, False)) + b"]"
        search = json.dumps(dict(NATIVE_SEARCH[fmt]), sort_keys=True, separators=(",", ":"))
        items = [
            *self._items(self._offered_natively(), fmt, False),
            search.encode("utf-8"),
            *self._items(self.deferred, fmt, True),
        ]
        return b"[" + b",".join(items) + b"]"

    def _items(self, providers: Any, fmt: Format, deferred: bool) -> list[bytes]:
        """Each provider's serialized item, kept from earlier turns or made now."""
        key = (f"{fmt}/deferred" if deferred else fmt, self.strict)
        known = self._fragments.get(key, {})
        kept: dict[int, tuple[ToolProvider, bytes]] = {}
        for provider in providers:
            held = known.get(id(provider))
            if held is None or held[0] is not provider:
                if deferred:
                    [item] = export_deferred([provider], fmt, strict=self.strict)[1:]
                    text = json.dumps(item, sort_keys=True, separators=(",", ":"))
                    held = (provider, text.encode("utf-8"))
                else:
                    held = (provider, export_json([provider], fmt, strict=self.strict)[1:-1])
            kept[id(provider)] = held
        self._fragments[key] = kept  # what left the palette is dropped
        return [item for _, item in kept.values()]

    def strict_report(self, fmt: Format = "openai_chat") -> dict[str, tuple[str, ...]]:
        """The offered tools that are not sent as ``strict`` in ``fmt``, with why.

        Raises:
            ValueError: ``fmt`` is not a supported format.
        """
        return strict_report(self.surface.providers, fmt, strict=self.strict)

    def calls_from(self, fmt: Format, payload: Any) -> list[ToolCall]:
        """The tool calls in a provider's response (see :func:`toolpalette.calls_from`).

        Raises:
            ValueError: ``fmt`` is unknown, or ``payload`` is not that format's response.
        """
        return calls_from(fmt, payload)


@dataclass(frozen=True)
class Approval:
    """A call or a grant waiting for a human: resolve it with ``thinker.resolve_approval``."""

    token: str
    """Opaque; pass it back to ``resolve_approval``."""
    kind: Literal["call", "tool", "skill"]
    """A paused call, or a pending tool or skill grant."""
    name: str
    """The tool name or skill id."""
    input: Mapping[str, Any] | None
    """The validated input of a paused call (None for grants)."""
    turn: int
    """The turn it was asked in."""
