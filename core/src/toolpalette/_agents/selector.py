"""ToolSelector: what a kind of agent declares it can use, resolved against the hub."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, Union

from typing_extensions import Self

from toolpalette._search.bundles import MAX_BUNDLE_DESCRIPTION, Bundle, bundle_name
from toolpalette._tools.provider import ToolProvider, as_provider
from toolpalette.errors import ToolCollisionError, ToolNotFoundError

if TYPE_CHECKING:
    from toolpalette._plugins.listing import Listing
    from toolpalette._tools.registry import ToolRegistry

__all__ = ["Deferral", "ResolvedTools", "ToolSelector", "ToolSource"]

Deferral = Union[bool, Literal["bundle"]]  # noqa: UP007 (evaluated at run time)
"""How a package, distribution or server entry is deferred: not (False), tool by tool
(True), or whole, as one catalog entry (``"bundle"``)."""


class ToolSource(Protocol):
    """What a selector is resolved against: a hub (``toolpalette.ToolHub`` is one).

    Typed here, below the hub, so the agents layer never imports the hub's module.
    """

    def providers_for_package(self, import_name: str) -> list[ToolProvider]:
        """The tools of the packs whose hooks module lies in ``import_name``."""
        ...

    def providers_for_distribution(self, dist_name: str) -> list[ToolProvider]:
        """The tools of the packs shipped by ``dist_name``."""
        ...

    def providers_for_pack(self, pack_name: str) -> list[ToolProvider]:
        """The tools of the pack named ``pack_name``."""
        ...

    def providers_for_server(self, name: str) -> list[ToolProvider]:
        """The tools of the MCP server ``name``."""
        ...

    def known_provider(self, provider: ToolProvider) -> ToolProvider:
        """A loaded pack's own provider of ``provider``'s tool, else ``provider``."""
        ...

    def listing(self) -> Listing:
        """Every available tool's name and pack (cached across processes)."""
        ...

    def catalog(self) -> ToolRegistry:
        """The registry of every available tool."""
        ...

    def collision(self, name: str) -> ToolCollisionError | None:
        """The collision that keeps tool ``name`` out of the catalog, or None."""
        ...


EntryKind = Literal["tool", "package", "distribution", "provider", "server"]


class BundleSource(Protocol):
    """A source that describes bundles (the hub is one); others get their tools' names."""

    def bundle_description(self, kind: str, target: str) -> str | None:
        """The description a bundle of ``kind`` ``target`` declares, or None."""
        ...


@dataclass(frozen=True)
class _Entry:
    kind: EntryKind
    target: object
    deferred: bool
    bundle: bool = False

    @property
    def specific(self) -> bool:
        """Whether the entry names one tool (its deferral beats a package's)."""
        return self.kind in ("tool", "provider")


@dataclass(frozen=True)
class ResolvedTools:
    """A selector's providers: those offered up front and those kept for ``request_tools``."""

    offered: tuple[ToolProvider, ...]
    """Offered from the first turn, in declaration order."""
    deferred: tuple[ToolProvider, ...]
    """Not offered up front: the catalog of ``request_tools``."""
    bundles: tuple[Bundle, ...] = ()
    """The entries deferred whole (``deferred="bundle"``): each names some of
    `deferred`, found and granted together."""

    @property
    def names(self) -> frozenset[str]:
        """Every name the selector resolved to, offered or deferred."""
        return frozenset(p.name for p in (*self.offered, *self.deferred))


class ToolSelector:
    """Accumulates the tools a thinker declares: objects, packages, distributions, servers.

    Each method returns the selector, so declarations chain. ``deferred=True`` keeps an
    entry out of the first offer: the model can ask for it with ``request_tools``.
    Nothing is imported until the hub resolves the selector, and then only the packs
    the entries name.

    Precedence, whatever the order of the calls: an excluded tool is never selected;
    a tool named on its own (``tool``, ``provider``) is offered or deferred as that
    entry says, even when a package or distribution also selects it; among entries
    equally specific, offered beats deferred.
    """

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._excluded: list[object] = []

    def tool(self, obj: object, *, deferred: bool = False) -> Self:
        """Select one ``@tool`` function or ``@tool`` Tool subclass, or one tool by name.

        A name (a ``str``) is the tool's name in the catalog (after the host's renames);
        only the pack that provides it is imported (none, when the listing cache is
        fresh). A name no installed pack provides raises when the selector is resolved.
        """
        return self._add("tool", obj, deferred)

    def exclude(self, name_or_object: object) -> Self:
        """Never select this tool (a name, an ``@tool`` object, or a provider).

        Wins over every other entry, whatever the order; a name nothing selects is
        simply not there, so excluding a tool of an uninstalled pack is harmless.
        """
        if not isinstance(name_or_object, str):
            as_provider(name_or_object)  # refuse a non-tool now, as the other entries do later
        self._excluded.append(name_or_object)
        return self

    def package(self, import_name: str, *, deferred: Deferral = False) -> Self:
        """Select every installed tool whose module lies in the import package ``import_name``.

        ``deferred="bundle"`` defers them whole: the catalog shows one entry (the
        package's name, and the description its pack declares or its distribution's
        summary), and granting it grants its tools.
        """
        return self._add("package", import_name, deferred)

    def distribution(self, dist_name: str, *, deferred: Deferral = False) -> Self:
        """Select every tool of the installed distribution ``dist_name``.

        ``deferred`` is as ``package`` says.
        """
        return self._add("distribution", dist_name, deferred)

    def provider(self, provider: ToolProvider, *, deferred: bool = False) -> Self:
        """Select a provider built by the host (an MCP tool, a custom provider)."""
        return self._add("provider", provider, deferred)

    def mcp_server(self, name: str, *, deferred: Deferral = False) -> Self:
        """Select every tool of the MCP server ``name`` (configured by the host or a pack).

        ``deferred="bundle"`` defers the server whole, as ``package`` says.

        The server is started when the selector is resolved; if it cannot be used, the
        selection is empty and ``hub.problems()`` says why.
        """
        return self._add("server", name, deferred)

    def _add(self, kind: EntryKind, target: object, deferred: Deferral) -> Self:
        bundle = deferred == "bundle" and not isinstance(deferred, bool)
        if not (isinstance(deferred, bool) or bundle):
            raise ValueError('deferred is True, False or "bundle"')
        if bundle and kind in ("tool", "provider"):
            raise ValueError("only a package, a distribution or a server is deferred as a bundle")
        self._entries.append(_Entry(kind, target, bool(deferred), bundle))
        return self

    def __bool__(self) -> bool:
        return bool(self._entries)

    def resolve(self, hub: ToolSource) -> ResolvedTools:
        """Turn the entries into providers, importing only the packs they name.

        The precedence is the class's (exclusions first, then the most specific entry,
        then offered over deferred). The same provider selected twice is one entry.

        Raises:
            ToolCollisionError: two different providers resolve to one name.
            ToolDefinitionError: an entry cannot become a tool.
            ToolCollisionError: a tool selected by name is claimed by two packs (or
                servers): the error names both, with the fix.
            ToolNotFoundError: a tool selected by name is not available.
        """
        found = [(entry, p) for entry in self._entries for p in self._providers(entry, hub)]
        excluded = _Exclusions(hub, self._excluded)
        chosen: dict[str, _Choice] = {}
        for entry, provider in found:
            if not excluded.covers(provider):
                _merge(chosen, provider, entry)
        offered = tuple(c.provider for c in chosen.values() if not c.deferred)
        deferred = tuple(c.provider for c in chosen.values() if c.deferred)
        return ResolvedTools(offered, deferred, _bundles(self._entries, chosen, hub))

    @staticmethod
    def _providers(entry: _Entry, hub: ToolSource) -> Iterable[ToolProvider]:
        if entry.kind == "package":
            return hub.providers_for_package(str(entry.target))
        if entry.kind == "distribution":
            return hub.providers_for_distribution(str(entry.target))
        if entry.kind == "server":
            return hub.providers_for_server(str(entry.target))
        if isinstance(entry.target, str):
            return (_by_name(hub, entry.target),)
        return (hub.known_provider(as_provider(entry.target)),)

    def __repr__(self) -> str:
        parts = [f"{e.kind}={e.target!r}{_flag(e)}" for e in self._entries]
        parts.extend(f"exclude={x!r}" for x in self._excluded)
        return f"ToolSelector({', '.join(parts)})"


def _flag(entry: _Entry) -> str:
    return " (bundle)" if entry.bundle else " (deferred)" if entry.deferred else ""


def _by_name(hub: ToolSource, name: str) -> ToolProvider:
    """The provider of the catalog's tool ``name``, importing only its pack."""
    listing = hub.listing()
    info = next((t for t in listing.tools if t.name == name), None)
    candidates = hub.providers_for_pack(info.pack) if info is not None and info.pack else ()
    for provider in candidates:
        if provider.name == name:
            return provider
    for provider in hub.catalog().providers() if info is not None else ():
        if provider.name == name:  # a tool the listing knows but its pack does not hold
            return provider
    contested = hub.collision(name)
    if contested is not None:
        raise contested
    raise ToolNotFoundError(tool_name=name, available=sorted(t.name for t in listing.tools))


class _Exclusions:
    """What ``exclude`` named, matched against providers by name or by what they wrap."""

    def __init__(self, hub: ToolSource, targets: list[object]) -> None:
        self.names = {t for t in targets if isinstance(t, str)}
        self.providers: list[ToolProvider] = []
        for target in targets:
            if not isinstance(target, str):
                provider = as_provider(target)
                self.providers.append(provider)
                self.names.add(hub.known_provider(provider).name)

    def covers(self, provider: ToolProvider) -> bool:
        if provider.name in self.names:
            return True
        inner = getattr(provider, "inner", None)
        return any(p == provider or (inner is not None and p == inner) for p in self.providers)


@dataclass
class _Choice:
    provider: ToolProvider
    deferred: bool
    specific: bool
    bundle: _Entry | None = None


def _bundles(
    entries: list[_Entry], chosen: dict[str, _Choice], hub: ToolSource
) -> tuple[Bundle, ...]:
    """The bundles of the entries deferred whole, each with the tools it still defers.

    A tool named on its own, or offered by another entry, is not in its bundle; a
    bundle left with no tool is no bundle. Two bundles that would share a name, or a
    bundle named as a tool is, raise ``ToolCollisionError``.
    """
    found: dict[str, Bundle] = {}
    describe = getattr(hub, "bundle_description", None)
    for entry in entries:
        if not entry.bundle:
            continue
        tools = tuple(n for n, c in chosen.items() if c.deferred and c.bundle is entry)
        if not tools:
            continue
        target = str(entry.target)
        name = bundle_name(target)
        declared = describe(entry.kind, target) if callable(describe) else None
        description = _one_line(declared) or f"Tools of {target}: {', '.join(tools)}."
        source = f"{entry.kind}:{target}"
        held = found.get(name)
        if held is not None or name in chosen:
            first = held.source if held is not None else chosen[name].provider.describe()
            raise ToolCollisionError(tool_name=name, first=first, second=f"the bundle {source}")
        found[name] = Bundle(name, description, tools, source)
    return tuple(found.values())


def _one_line(text: object) -> str:
    """A declared description as the catalog shows it: one line, bounded; "" if unusable."""
    if not isinstance(text, str):
        return ""
    return " ".join(text.split())[:MAX_BUNDLE_DESCRIPTION]


def _merge(chosen: dict[str, _Choice], provider: ToolProvider, entry: _Entry) -> None:
    existing = chosen.get(provider.name)
    if existing is None:
        bundle = entry if entry.bundle else None
        chosen[provider.name] = _Choice(provider, entry.deferred, entry.specific, bundle)
        return
    if existing.provider != provider:
        raise ToolCollisionError(
            tool_name=provider.name, first=existing.provider.describe(), second=provider.describe()
        )
    if entry.specific and not existing.specific:
        existing.deferred, existing.specific, existing.bundle = entry.deferred, True, None
    elif entry.specific == existing.specific:
        existing.deferred = existing.deferred and entry.deferred
        if existing.bundle is None and entry.bundle:
            existing.bundle = entry
