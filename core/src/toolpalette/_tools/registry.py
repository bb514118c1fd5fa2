"""The tool registry: names to providers, thread-safe and mutable at run time."""

from __future__ import annotations

import json
import logging
import threading
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, final

from toolpalette._tools.provider import BoundTool, ToolProvider, as_provider
from toolpalette._tools.tool import Tool, get_spec
from toolpalette.errors import PluginWarning, ToolCollisionError, ToolNotFoundError

__all__ = ["Surface", "SurfaceDiff", "ToolRegistry", "lookup", "sync", "tool_schema"]

logger = logging.getLogger("toolpalette.registry")


def tool_schema(provider: ToolProvider) -> dict[str, Any]:
    """The provider-neutral schema of one tool: name, description, input and output schema."""
    info = provider.info
    schema: dict[str, Any] = {
        "name": info.name,
        "description": info.description,
        "input_schema": info.input_schema,
    }
    if info.output_schema is not None:
        schema["output_schema"] = info.output_schema
    return schema


@dataclass(frozen=True)
class SurfaceDiff:
    """What changed between two versions of a surface, each tuple sorted by name.

    One mutation's (``on_surface_changed``), or a thinker's turn's since its previous
    turn (``turn.changes``).
    """

    version: int
    """The registry version after the change."""
    added: tuple[str, ...] = ()
    """Names that appeared."""
    removed: tuple[str, ...] = ()
    """Names that disappeared."""
    changed: tuple[str, ...] = ()
    """Names whose provider was replaced: for one mutation, by ``replace`` or a
    re-registration in place; for a turn, by a provider that is not equal to it or whose
    record (``info``) differs."""


@final
@dataclass(frozen=True)
class Surface:
    """The tools a registry offers at one version: providers and schemas, as one pair."""

    version: int
    """The registry version these schemas belong to."""
    providers: tuple[ToolProvider, ...]
    """The providers, in registration order."""
    _json: list[bytes] = field(default_factory=list, repr=False, compare=False)
    _index: Mapping[str, ToolProvider] | None = field(default=None, repr=False, compare=False)

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """The provider-neutral schemas, in registration order."""
        return [tool_schema(p) for p in self.providers]

    def serialized(self) -> bytes:
        """The schemas as canonical JSON bytes: computed once per version, byte-reproducible."""
        if not self._json:
            text = json.dumps(
                self.schemas, sort_keys=True, separators=(",", ":"), ensure_ascii=False
            )
            # A lone surrogate (in a description, say) becomes its JSON escape instead of
            # making the whole surface unencodable.
            self._json.append(text.encode("utf-8", "backslashreplace"))
        return self._json[0]

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in registration order."""
        return tuple(self._by_name())

    @property
    def name_set(self) -> AbstractSet[str]:
        """The tool names as a set, for membership tests (what a turn offers)."""
        return self._by_name().keys()

    def get(self, name: str) -> ToolProvider | None:
        """The provider offered under ``name`` at this version, or None."""
        return self._by_name().get(name)

    def _by_name(self) -> Mapping[str, ToolProvider]:
        # A registry hands its own snapshot in; a surface built by hand indexes once.
        if self._index is None:
            object.__setattr__(self, "_index", {p.name: p for p in self.providers})
        assert self._index is not None
        return self._index


SurfaceCallback = Callable[[SurfaceDiff], None]


class ToolRegistry:
    """Tool names to providers, for one palette (or the hub's whole catalog).

    - Registering under a taken name (see
    [`register()`][toolpalette.ToolRegistry.register]) is an upsert that keeps
      the name's position when it is the same tool again (an equal provider) or the same
      tool rebuilt (the same type from the same pack); anything else raises
      [`ToolCollisionError`][toolpalette.ToolCollisionError] naming both. Nothing is
      renamed or overridden silently.
    - ``register`` and ``unregister`` are state-idempotent;
    [`version`][toolpalette.ToolRegistry.version] grows by one
      with every real change and never otherwise.
    - Removal drains: a call that already holds a provider finishes with it; the next
      lookup of the name fails as unknown.
    - All methods are safe to call from several threads.
    """

    def __init__(self, providers: Iterable[object] = ()) -> None:
        self._lock = threading.RLock()
        self._providers: dict[str, ToolProvider] = {}
        self._version = 0
        self._surface: Surface | None = None
        self._callbacks: list[SurfaceCallback] = []
        self.register_all(*providers)

    # -- reading -------------------------------------------------------------------

    @property
    def version(self) -> int:
        """A counter that every real mutation bumps."""
        return self._version

    def versioned_surface(self) -> Surface:
        """The current providers and version, taken atomically."""
        with self._lock:
            if self._surface is None or self._surface.version != self._version:
                # One copy of the table (a memory copy, no rehashing) is both the
                # snapshot of the names and the source of the providers' tuple.
                index = self._providers.copy()
                self._surface = Surface(self._version, tuple(index.values()), _index=index)
            return self._surface

    def providers(self) -> list[ToolProvider]:
        """The providers, in registration order."""
        return list(self.versioned_surface().providers)

    def tool_names(self) -> list[str]:
        """The registered names, sorted."""
        with self._lock:
            return sorted(self._providers)

    def concurrent_safe_tools(self) -> list[ToolProvider]:
        """The providers whose calls may overlap, in registration order."""
        return [p for p in self.providers() if p.concurrency_safe]

    def get_provider(self, name: object) -> ToolProvider:
        """The provider under ``name`` (the one lookup; ``has_tool`` asks without raising).

        Raises:
            ToolNotFoundError: no such tool, or ``name`` is not a string; the message
                lists the available names.
        """
        provider = lookup(self, name)
        if provider is None:
            raise ToolNotFoundError(tool_name=name, available=self.tool_names())
        return provider

    def create_tool(self, name: object, parent: Any = None) -> BoundTool:
        """Build the tool registered under ``name`` for ``parent``.

        Raises:
            ToolNotFoundError: no such tool.
        """
        return self.get_provider(name).create(parent)

    def matches(self, name: object, schema: Mapping[str, Any]) -> bool:
        """Whether the tool registered under ``name`` has exactly this input schema.

        False for an unknown name (or one that is not a string). For a host that keeps
        a tool's schema (a conversation's history, a cached prompt) and asks whether
        it still holds before reusing it.
        """
        provider = lookup(self, name)
        return provider is not None and provider.input_schema == schema

    def has_tool(self, name: str) -> bool:
        """Whether ``name`` is registered.

        Raises:
            TypeError: ``name`` is not a string (asking whether ``None`` exists is a bug).
        """
        if not isinstance(name, str):
            raise TypeError(f"tool names are strings, not {type(name).__name__}")
        with self._lock:
            return name in self._providers

    def __contains__(self, name: object) -> bool:
        # One spelling: `name in registry` would read like has_tool but fall back to
        # comparing names with providers; say so instead of answering False.
        raise TypeError("use registry.has_tool(name) to ask whether a tool is registered")

    def __len__(self) -> int:
        return len(self._providers)

    def __iter__(self) -> Any:
        return iter(self.providers())

    # -- changing ------------------------------------------------------------------

    def register(self, obj: object) -> ToolProvider | None:
        """Register a provider, an ``@tool`` function, or an ``@tool`` Tool subclass.

        Under a taken name:

        - the same provider, or one equal to it with the same record (``info``),
          changes nothing;
        - one equal to it with another record (a meta-tool rebuilt with a new catalog),
          or of the same type from the same pack (both with an origin naming the same
          pack, distribution and MCP server: a pack's tool rebuilt), replaces it in
          place, keeping the name's position, and is logged at DEBUG;
        - anything else (another type, another pack, a provider of unknown origin)
          raises [`ToolCollisionError`][toolpalette.ToolCollisionError] naming both.

        Returns the provider now under that name (the existing one when nothing
        changed), or None when ``obj`` is a Tool subclass without ``@tool`` (skipped
        with a warning).

        Raises:
            ToolCollisionError: a different tool already holds the name.
            ToolDefinitionError: ``obj`` cannot become a tool.
        """
        if isinstance(obj, type) and issubclass(obj, Tool) and get_spec(obj) is None:
            warnings.warn(
                f"{obj.__module__}.{obj.__qualname__} is a Tool subclass without @tool; skipped",
                PluginWarning,
                stacklevel=2,
            )
            return None
        provider = as_provider(obj)
        name = provider.name
        with self._lock:
            existing = self._providers.get(name)
            if existing is None:
                self._providers[name] = provider
                diff = self._bump(added=(name,))
            elif existing is provider:
                return existing
            elif existing == provider:
                if existing.info == provider.info:
                    return existing
                diff = self._upsert(provider, "an equal provider with another description")
            elif _rebuilt(existing, provider):
                diff = self._upsert(provider, "the same type from the same pack")
            else:
                raise ToolCollisionError(
                    tool_name=name, first=existing.describe(), second=provider.describe()
                )
        self._notify(diff)
        return provider

    def _upsert(self, provider: ToolProvider, why: str) -> SurfaceDiff:
        """Put ``provider`` in its name's place (under the lock); the diff to notify."""
        self._providers[provider.name] = provider
        logger.debug("re-registered %r (%s): replaced in place", provider.name, why)
        return self._bump(changed=(provider.name,))

    def register_all(self, *objs: object) -> list[ToolProvider]:
        """Register each object in turn; returns the providers registered (skips omitted)."""
        registered = (self.register(obj) for obj in objs)
        return [p for p in registered if p is not None]

    def replace(self, provider: ToolProvider) -> None:
        """Put ``provider`` under its name whatever held it, keeping the position.

        For hosts and reconcile hooks that rebuild a provider on purpose (e.g. a
        meta-tool whose catalog changed); packs never replace each other's tools.
        """
        with self._lock:
            existing = self._providers.get(provider.name)
            if existing is provider:
                return
            self._providers[provider.name] = provider
            diff = (
                self._bump(changed=(provider.name,))
                if existing is not None
                else self._bump(added=(provider.name,))
            )
        self._notify(diff)

    def unregister(self, obj: object) -> bool:
        """Remove a tool by name, provider, ``@tool`` function or class.

        Returns whether anything was removed; removing an absent tool changes nothing.

        Raises:
            TypeError: ``obj`` is None.
        """
        if obj is None:
            raise TypeError("unregister(None): name the tool to remove")
        if isinstance(obj, type) and issubclass(obj, Tool) and get_spec(obj) is None:
            warnings.warn(
                f"{obj.__module__}.{obj.__qualname__} is a Tool subclass without @tool; skipped",
                PluginWarning,
                stacklevel=2,
            )
            return False
        name = obj if isinstance(obj, str) else as_provider(obj).name
        with self._lock:
            existing = self._providers.get(name)
            if existing is None or (not isinstance(obj, str) and existing != as_provider(obj)):
                return False
            del self._providers[name]
            diff = self._bump(removed=(name,))
        self._notify(diff)
        return True

    def retain(self, names: Iterable[str]) -> list[str]:
        """Remove every tool whose name is not in ``names``; returns the removed names."""
        keep = set(names)
        with self._lock:
            gone = sorted(n for n in self._providers if n not in keep)
            if not gone:
                return []
            for name in gone:
                del self._providers[name]
            diff = self._bump(removed=tuple(gone))
        self._notify(diff)
        return gone

    def on_surface_changed(self, callback: SurfaceCallback) -> Callable[[], None]:
        """Call ``callback`` with a name-sorted `SurfaceDiff` after every change.

        Returns a function that removes the callback. A callback that raises is logged.
        """
        with self._lock:
            self._callbacks.append(callback)

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    def _bump(self, **names: tuple[str, ...]) -> SurfaceDiff:
        self._version += 1
        return SurfaceDiff(self._version, **{k: tuple(sorted(v)) for k, v in names.items()})

    def _notify(self, diff: SurfaceDiff) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(diff)
            except Exception:
                logger.exception("surface-changed callback %r raised; ignored", callback)

    def __repr__(self) -> str:
        return f"<ToolRegistry v{self._version}: {', '.join(self.tool_names()) or 'empty'}>"


def lookup(registry: ToolRegistry, name: object) -> ToolProvider | None:
    """The provider under ``name`` in ``registry``, or None (also for a non-string name).

    For the core's own hot paths (the pipeline's lookup, a reconcile), where an unknown
    name is an answer rather than an error; hosts use ``get_provider``/``has_tool``.
    """
    if not isinstance(name, str):
        return None
    # One read of a dict that writers change in place under the lock: atomic without it
    # (the GIL, or the dict's own lock on a free-threaded build), and one lock less a call.
    return registry._providers.get(name)


def _rebuilt(held: ToolProvider, new: ToolProvider) -> bool:
    """Whether ``new`` is ``held`` rebuilt: the same type, from one known pack.

    Providers of unknown origin (built in a host's code or a test) are never taken for
    each other: two of them under one name collide.
    """
    if type(held) is not type(new) or held.origin is None or new.origin is None:
        return False
    one, other = held.origin, new.origin
    pack = (one.pack, one.distribution, one.server)
    return any(pack) and pack == (other.pack, other.distribution, other.server)


def _identical(held: ToolProvider, wanted: ToolProvider) -> bool:
    return held is wanted


def sync(
    registry: ToolRegistry,
    desired: Iterable[ToolProvider],
    *,
    same: Callable[[ToolProvider, ToolProvider], bool] = _identical,
    within: Collection[str] | None = None,
) -> None:
    """Make ``registry`` hold exactly ``desired``, keeping the position of what stays.

    A name held by a provider for which ``same(held, wanted)`` is false is replaced in
    place; new names are added in ``desired``'s order; the rest are removed. The one way
    the core brings a registry to a computed state (the hub's catalog, a thinker's
    palette at each reconcile), so an unchanged state leaves ``version`` alone.
    ``within`` limits it to those names (``desired`` among them): the others are left
    as they are, for a caller that knows only they can have changed.
    """
    wanted = list(desired)
    if within is None:
        registry.retain(p.name for p in wanted)
    else:
        keep = {p.name for p in wanted}
        for name in within:
            if name not in keep:
                registry.unregister(name)
    for provider in wanted:
        held = lookup(registry, provider.name)
        if held is None:
            registry.register(provider)
        elif held is not provider and not same(held, provider):
            registry.replace(provider)
