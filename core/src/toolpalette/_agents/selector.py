"""ToolSelector: what a kind of agent declares it can use, resolved against the hub."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from typing_extensions import Self

from toolpalette._tools.provider import ToolProvider, as_provider
from toolpalette.errors import ToolCollisionError

if TYPE_CHECKING:
    from toolpalette._hub import ToolHub

__all__ = ["ResolvedTools", "ToolSelector"]

EntryKind = Literal["tool", "package", "distribution", "provider"]


@dataclass(frozen=True)
class _Entry:
    kind: EntryKind
    target: object
    deferred: bool


@dataclass(frozen=True)
class ResolvedTools:
    """A selector's providers: those offered up front and those kept for ``request_tools``."""

    offered: tuple[ToolProvider, ...]
    """Offered from the first turn, in declaration order."""
    deferred: tuple[ToolProvider, ...]
    """Not offered up front: the catalog of ``request_tools``."""

    @property
    def names(self) -> frozenset[str]:
        """Every name the selector resolved to, offered or deferred."""
        return frozenset(p.name for p in (*self.offered, *self.deferred))


class ToolSelector:
    """Accumulates the tools a thinker declares: objects, packages, distributions, providers.

    Each method returns the selector, so declarations chain. ``deferred=True`` keeps an
    entry out of the first offer: the model can ask for it with ``request_tools``.
    Nothing is imported until the hub resolves the selector, and then only the packs
    the entries name.
    """

    def __init__(self) -> None:
        self._entries: list[_Entry] = []

    def tool(self, obj: object, *, deferred: bool = False) -> Self:
        """Select one ``@tool`` function or ``@tool`` Tool subclass."""
        return self._add("tool", obj, deferred)

    def package(self, import_name: str, *, deferred: bool = False) -> Self:
        """Select every installed tool whose module lies in the import package ``import_name``."""
        return self._add("package", import_name, deferred)

    def distribution(self, dist_name: str, *, deferred: bool = False) -> Self:
        """Select every tool of the installed distribution ``dist_name``."""
        return self._add("distribution", dist_name, deferred)

    def provider(self, provider: ToolProvider, *, deferred: bool = False) -> Self:
        """Select a provider built by the host (an MCP tool, a custom provider)."""
        return self._add("provider", provider, deferred)

    def _add(self, kind: EntryKind, target: object, deferred: bool) -> Self:
        self._entries.append(_Entry(kind, target, deferred))
        return self

    def __bool__(self) -> bool:
        return bool(self._entries)

    def resolve(self, hub: ToolHub) -> ResolvedTools:
        """Turn the entries into providers, importing only the packs they name.

        A name selected both offered and deferred is offered. The same provider selected
        twice is one entry.

        Raises:
            ToolCollisionError: two different providers resolve to one name.
            ToolDefinitionError: an entry cannot become a tool.
        """
        chosen: dict[str, tuple[ToolProvider, bool]] = {}
        for entry in self._entries:
            for provider in self._providers(entry, hub):
                _merge(chosen, provider, entry.deferred)
        offered = tuple(p for p, deferred in chosen.values() if not deferred)
        deferred = tuple(p for p, deferred in chosen.values() if deferred)
        return ResolvedTools(offered, deferred)

    @staticmethod
    def _providers(entry: _Entry, hub: ToolHub) -> Iterable[ToolProvider]:
        if entry.kind == "package":
            return hub.providers_for_package(str(entry.target))
        if entry.kind == "distribution":
            return hub.providers_for_distribution(str(entry.target))
        return (hub.known_provider(as_provider(entry.target)),)

    def __repr__(self) -> str:
        parts = [
            f"{e.kind}={e.target!r}{' (deferred)' if e.deferred else ''}" for e in self._entries
        ]
        return f"ToolSelector({', '.join(parts)})"


def _merge(
    chosen: dict[str, tuple[ToolProvider, bool]], provider: ToolProvider, deferred: bool
) -> None:
    existing = chosen.get(provider.name)
    if existing is None:
        chosen[provider.name] = (provider, deferred)
        return
    if existing[0] != provider:
        raise ToolCollisionError(
            tool_name=provider.name, first=existing[0].describe(), second=provider.describe()
        )
    if existing[1] and not deferred:
        chosen[provider.name] = (existing[0], False)
