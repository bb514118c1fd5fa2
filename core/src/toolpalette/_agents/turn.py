"""What a thinker's turn offers the model, what changed since the last, what it costs."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from toolpalette._agents.meta_search import SearchToolsProvider
from toolpalette._formats.calls import ToolCall, calls_from
from toolpalette._formats.export import (
    NAMESPACES,
    NATIVE_SEARCH,
    Format,
    Namespace,
    export,
    export_deferred,
    export_json,
    strict_report,
)
from toolpalette._tools.channel import ClientChannel
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.registry import Surface, SurfaceDiff

__all__ = [
    "BYTES_PER_TOKEN",
    "Approval",
    "ChangeLog",
    "Guidance",
    "Overhead",
    "Turn",
    "offered_guidance",
    "surface_changes",
]

BYTES_PER_TOKEN: Final = 4
"""The bytes counted as one token in `Overhead`'s estimates.

Measured against three tokenizers (OpenAI's ``o200k_base`` and ``cl100k_base``, and an
older Claude tokenizer) on compact JSON tool definitions in the four formats (the
first-party packs' tools, 400 functions of the Berkeley Function Calling Leaderboard,
400 generated ones) and on skills' preambles, English text took 4.0 to 4.9 bytes a
token: a quarter of the bytes is within 1 to 26 % over the real count, never under.
Text far from English (CJK, base64) takes more tokens a byte.
"""

_NOTHING: Final[frozenset[str]] = frozenset()

Guidance = tuple[tuple[str, str], ...]
"""The offered tools' guidance, as ``(name, text)`` pairs in the palette's order."""


@dataclass(frozen=True)
class Overhead:
    """What a turn's tool definitions and preamble take of a model's context, in one format.

    Two figures: what the model reads (``tools_*``, ``preamble_*``, ``bytes``,
    ``tokens``), and what the request carries (``sent_*``). They differ only in a
    ``native`` turn of a format with its own tool search, whose request carries every
    deferred tool's definition marked ``defer_loading`` (``deferred_*``): the provider
    keeps those out of the model's context until its search loads one. Bytes as sent;
    tokens estimated as a quarter of the bytes, rounded up (`BYTES_PER_TOKEN` says how
    far that is from real tokenizers). A provider renders the definitions its own way
    before the model reads them, so the figures are of what the host sends, not what
    the provider bills.
    """

    format: str
    """The provider format the tool definitions were measured in."""
    tools_bytes: int
    """The bytes of the tool definitions the model reads: ``turn.schemas_json(format)``,
    less the deferred definitions of a native search (``deferred_bytes``)."""
    preamble_bytes: int
    """The bytes of ``turn.preamble``, in UTF-8."""
    deferred_bytes: int = 0
    """The bytes of the definitions a native search keeps out of context until it loads
    them (with the commas between them); 0 outside a native turn."""

    @property
    def deferred_tokens(self) -> int:
        """The estimated tokens of the deferred definitions the request carries."""
        return -(-self.deferred_bytes // BYTES_PER_TOKEN)

    @property
    def sent_bytes(self) -> int:
        """The bytes the request carries: every definition, and the preamble."""
        return self.tools_bytes + self.deferred_bytes + self.preamble_bytes

    @property
    def sent_tokens(self) -> int:
        """The estimated tokens of what the request carries."""
        return -(-self.sent_bytes // BYTES_PER_TOKEN)

    @property
    def tools_tokens(self) -> int:
        """The estimated tokens of the tool definitions."""
        return -(-self.tools_bytes // BYTES_PER_TOKEN)

    @property
    def preamble_tokens(self) -> int:
        """The estimated tokens of the preamble."""
        return -(-self.preamble_bytes // BYTES_PER_TOKEN)

    @property
    def bytes(self) -> int:
        """The bytes of both."""
        return self.tools_bytes + self.preamble_bytes

    @property
    def tokens(self) -> int:
        """The estimated tokens of both."""
        return self.tools_tokens + self.preamble_tokens


@dataclass(frozen=True)
class Turn:
    """What the model is offered in one turn: tools, their schemas, and the preamble."""

    number: int
    """The turn's number, from 1."""
    surface: Surface
    """The palette's providers and version, taken together."""
    preamble: str
    """The instructions to put before the conversation: the conversation's preamble (the
    host's text, the attached skills), then the offered tools' guidance."""
    strict: bool = False
    """Whether schemas are normalized into each provider's strict subset (the thinker's
    ``strict``); the thinker then undoes it on the model's input."""
    native: bool = False
    """Whether the provider's own tool search finds the deferred tools, in the formats
    that have one (the thinker's ``tool_search`` is ``native``); the thinker then
    decides each call of a deferred tool at call time."""
    deferred: tuple[ToolProvider, ...] = ()
    """The thinker's deferred tools, in a ``native`` turn (empty otherwise)."""
    namespaces: tuple[Namespace, ...] = ()
    """The bundles among `deferred` (name, description, tools' names): in a format
    with namespaces they are exported as such (``export_deferred``)."""
    _cache: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    _fragments: dict[tuple[str, bool], dict[int, tuple[ToolProvider, bytes]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """Each provider's serialized schema by format, shared by a thinker's turns."""
    _previous: Surface | None = field(default=None, repr=False, compare=False)
    """The thinker's previous turn's surface (held, not copied), for `changes`."""
    _touched: frozenset[str] | None = field(default=None, repr=False, compare=False)
    """The names changed since the previous turn (`ChangeLog`); None: compare all."""
    _guidance: Guidance = field(default=(), repr=False, compare=False)
    """The offered tools' guidance in `preamble`, for the next turn to keep."""
    _overheads: dict[tuple[str, bool], tuple[int, str, Overhead]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """Each format's overhead, with the version and preamble it was measured at; shared
    by a thinker's turns."""
    _changes: SurfaceDiff | None = field(default=None, repr=False, compare=False)
    """`changes`, once read."""

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

    @property
    def guidance(self) -> Guidance:
        """The offered tools' guidance, as ``(name, text)`` in the palette's order.

        The same text as [`preamble`][toolpalette.Turn.preamble]'s ``<tool name="...">``
        sections (after the skills), apart, for a host that needs it so (a server's
        instructions, say).
        """
        return self._guidance

    @property
    def changes(self) -> SurfaceDiff:
        """The names added, removed and changed since the thinker's previous turn.

        Each sorted by name. A name is changed when another provider holds it that is
        not equal to the previous one or whose record (``info``: description, schemas,
        guidance...) differs. An unchanged turn has none; at the first turn every name
        offered is added. Per-turn tools (``begin_turn(extra=...)``) count like any
        other. Computed when first read, over the names the palette changed since.
        """
        changes = self._changes
        if changes is None:
            changes = surface_changes(self._previous, self.surface, self._touched)
            object.__setattr__(self, "_changes", changes)  # a cache: the turn stays as it was
        return changes

    def overhead(self, fmt: Format = "openai_chat") -> Overhead:
        """What the tool definitions in ``fmt`` and the preamble take of the context.

        What the model reads, and what the request carries (``sent_bytes``): in a
        ``native`` turn the request also carries the deferred definitions, which the
        provider keeps out of context until its search loads them. Measured once per
        palette version and preamble (a thinker's turns share it, so
        an unchanged turn costs a look-up); the definitions are
        [`schemas_json()`][toolpalette.Turn.schemas_json]'s.

        Raises:
            ValueError: ``fmt`` is not a supported format.
        """
        key = (fmt, self.strict)
        held = self._overheads.get(key)
        if held is not None and held[0] == self.version and held[1] == self.preamble:
            return held[2]
        sent = len(self.schemas_json(fmt))
        deferred = 0
        if self._searches_natively(fmt):
            deferred = sum(len(item) + 1 for item in self._items(self.deferred, fmt, True))
        preamble = len(self.preamble.encode("utf-8", "backslashreplace"))
        overhead = Overhead(fmt, sent - deferred, preamble, deferred)
        self._overheads[key] = (self.version, self.preamble, overhead)
        return overhead

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
        deferred = export_deferred(
            self.deferred, fmt, strict=self.strict, namespaces=self.namespaces
        )
        return offered + deferred

    def _searches_natively(self, fmt: str) -> bool:
        return self.native and fmt in NATIVE_SEARCH

    def _offered_natively(self) -> list[ToolProvider]:
        return [p for p in self.surface.providers if not isinstance(p, SearchToolsProvider)]

    def schemas_json(self, fmt: Format = "openai_chat") -> bytes:
        """`schemas()` as canonical JSON bytes, computed once per turn and format.

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
        if self._searches_natively(fmt) and self.namespaces and fmt in NAMESPACES:
            text = json.dumps(self.schemas(fmt), sort_keys=True, separators=(",", ":"))
            return text.encode("utf-8")  # namespaces group tools: no fragment per tool
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
        """The tool calls in a provider's response (see `toolpalette.calls_from()`).

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
    call_id: str | None = None
    """For a call a ``run_code`` script made: that call's id (None otherwise)."""
    parent: str | None = None
    """For a call a ``run_code`` script made: the script's call id (None otherwise)."""
    principal: str | None = None
    """Who the call or the grant was asked for (the call's ``ToolContext.principal``):
    the record of its answer names them."""
    channel: ClientChannel | None = field(default=None, repr=False, compare=False)
    """How a paused call talks to its caller (the call's ``channel``, else the thinker's
    ``client``; None for grants): an approver may ask its person through it."""


class ChangeLog:
    """The names each change of a palette touched, until a turn takes them.

    A thinker subscribes one to its palette (``on_surface_changed``) for the life of the
    palette. Each change is one version of the registry, so a turn knows whether it
    heard every change since the last turn: when it did, it compares its surface with
    the previous one over the names those changes touched; when one has not been heard
    yet (a change in another thread, its diff not yet delivered), over every name.
    """

    def __init__(self, version: int) -> None:
        self._lock = threading.Lock()
        self._heard: list[SurfaceDiff] = []
        self._taken = version

    def __call__(self, diff: SurfaceDiff) -> None:
        with self._lock:
            self._heard.append(diff)

    def take(self, version: int) -> frozenset[str] | None:
        """The names touched since the last take, up to ``version``; None if a change is missing."""
        if version == self._taken and not self._heard:
            return _NOTHING  # the common turn: nothing changed since the last
        with self._lock:
            heard, since = self._heard, self._taken
            self._heard = [d for d in heard if d.version > version]
            self._taken = max(since, version)
        taken = [d for d in heard if since < d.version <= version]
        if len({d.version for d in taken}) != version - since:
            return None
        return frozenset(name for d in taken for name in (*d.added, *d.removed, *d.changed))


def _replaced(held: ToolProvider, new: ToolProvider) -> bool:
    """Whether ``new`` in ``held``'s place is a change (the registry's own rule)."""
    return held is not new and (held != new or held.info != new.info)


def surface_changes(
    before: Surface | None, after: Surface, touched: frozenset[str] | None = None
) -> SurfaceDiff:
    """What changed from ``before`` to ``after``, looking at ``touched`` names only when given.

    ``touched`` must hold every name that changed (a `ChangeLog`'s take); None
    compares every name. No ``before`` (a first turn): everything is added.
    """
    if before is after:
        return SurfaceDiff(after.version)
    if before is None:
        return SurfaceDiff(after.version, added=tuple(sorted(after.name_set)))
    names = touched if touched is not None else before.name_set | after.name_set
    added: list[str] = []
    removed: list[str] = []
    changed: list[str] = []
    for name in names:
        held, new = before.get(name), after.get(name)
        if held is None:
            if new is not None:
                added.append(name)
        elif new is None:
            removed.append(name)
        elif _replaced(held, new):
            changed.append(name)
    return SurfaceDiff(
        after.version, tuple(sorted(added)), tuple(sorted(removed)), tuple(sorted(changed))
    )


def offered_guidance(
    surface: Surface, before: Surface | None, held: Guidance, touched: frozenset[str] | None
) -> Guidance:
    """The guidance of ``surface``'s tools, in its order.

    ``held`` is the guidance of ``before`` (the previous turn's surface); it is kept when
    no name in ``touched`` (every name changed since: `ChangeLog.take()`) had or has
    guidance, so a turn reads the whole palette only when a tool with guidance came,
    went or was replaced (or when what changed is not known).
    """
    if before is surface:
        return held
    if before is not None and touched is not None:
        guided = {name for name, _ in held}
        if not any(name in guided or _guidance(surface.get(name)) for name in touched):
            return held
    return tuple((p.name, text) for p in surface.providers if (text := p.guidance))


def _guidance(provider: ToolProvider | None) -> str | None:
    return provider.guidance if provider is not None else None
