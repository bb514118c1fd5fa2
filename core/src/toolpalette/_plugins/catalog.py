"""The pack catalog: find packs, import them only when needed, build the registry of tools."""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, final

import pluggy

from toolpalette._plugins import listing as _listing
from toolpalette._plugins.collisions import Collision, by_name, duplicate_pack, resolve_claims
from toolpalette._plugins.config import HubConfig
from toolpalette._plugins.discovery import PLUGIN_GROUP
from toolpalette._plugins.installed import Installed, snapshot
from toolpalette._plugins.listing import ListedTool, Listing
from toolpalette._plugins.packs import Pack, PackStatus, scan
from toolpalette._plugins.problems import (
    Problem,
    describe_exception,
    describe_origin,
    describe_type,
    safe_str,
)
from toolpalette._plugins.switches import BLOCK_ENV, Switches
from toolpalette._tools.info import Origin
from toolpalette.errors import ToolCollisionError, ToolpaletteError

if TYPE_CHECKING:
    from toolpalette._plugins.manager import ToolpaletteManager
    from toolpalette._tools.provider import ToolProvider
    from toolpalette._tools.registry import ToolRegistry

__all__ = ["ClaimSource", "PackCatalog", "PluginInfo", "problem_key"]


@dataclass(frozen=True)
class PluginInfo:
    """One pack as ``toolpalette plugins`` shows it."""

    name: str
    """The pack's name: its entry point name, or the name given to ``add_plugin``."""
    distribution: str | None
    """The distribution that ships it (None for a plugin added in code)."""
    version: str | None
    """That distribution's version."""
    module: str | None
    """The hooks module (the entry point's target)."""
    hooks: tuple[str, ...]
    """The hooks it implements, sorted; empty until it is imported."""
    imported: bool
    """Whether it was imported and registered."""
    status: PackStatus
    """``loaded``, ``not-loaded``, ``failed``, ``incompatible``, ``blocked`` or ``disabled``."""


class ClaimSource(Protocol):
    """Tools that are not a pack's but compete with theirs for names (an MCP server's).

    The host side attaches one (`PackCatalog.attach()`); each claim is a pack-like
    record holding its tools, so the collision policy treats it as it treats a pack.
    """

    def claims(self, *, gather: bool) -> list[Pack]:
        """The claims: with ``gather``, every one there is (may start servers), else so far."""
        ...

    def generation(self) -> int:
        """A counter that grows whenever a claim's tools change."""
        ...

    def problems(self) -> list[Problem]:
        """What went wrong with the claims' sources."""
        ...

    def live(self) -> bool:
        """Whether there are claims whose tools are listed live (never from the cache)."""
        ...


@final
class PackCatalog:
    """Every pack a hub knows, loaded on demand, and the registry of their tools.

    Args:
        config: The validated host configuration (renames, prefixes, pack settings).
        switches: The environment switches (which packs to use, block, trace, cache).
        autoload: Discover installed packs through their entry points; False starts
            empty (add plugins with `add_plugin()`).

    Nothing is imported when it is built. All methods are thread-safe.
    """

    def __init__(self, config: HubConfig, switches: Switches, *, autoload: bool = True) -> None:
        self._lock = threading.RLock()
        self.config = config
        """The validated host configuration."""
        self.switches = switches
        """The environment switches the catalog was built with."""
        self._pm: ToolpaletteManager | None = None
        self._probe: ToolpaletteManager | None = None
        self._unregistered: list[tuple[Pack, object]] = []
        self._unregistered_names: dict[int, str] = {}
        self._claims: ClaimSource | None = None
        self.autoload = autoload and switches.discovers
        """Whether installed packs (and skilljars) are discovered."""
        self._packs: dict[str, Pack] = {}
        self._extra_problems: list[Problem] = []
        self._version = 0
        self._registry: ToolRegistry | None = None
        self._registry_version = -1
        self._collisions: list[Collision] = []
        self._discovered = not self.autoload  # the entry points are read on first need

    @property
    def lock(self) -> threading.RLock:
        """The lock held while the catalog changes (the attached claim source takes it too)."""
        return self._lock

    def attach(self, claims: ClaimSource) -> None:
        """Let ``claims`` (the host's MCP servers) compete with the packs' tools for names."""
        self._claims = claims

    @property
    def pm(self) -> ToolpaletteManager:
        """The pluggy plugin manager; ``pm.hook`` calls the host hooks.

        Built on first use (a listing answered by the cache needs none), under the
        catalog's lock so that every caller gets the same one. Packs a listing imported
        are registered in it here, in the order they were imported, before it is
        returned (see `listing()`).
        """
        pm = self._pm
        if pm is None or self._unregistered:
            with self._lock:
                pm = self._manager()
                self._register_listed()
        return pm

    def _manager(self) -> ToolpaletteManager:
        """The plugin manager, built if needed, without registering the listed packs."""
        if self._pm is None:
            from toolpalette._plugins import manager

            self._pm = manager.ToolpaletteManager(trace=self.switches.trace)
        return self._pm

    # -- discovery -----------------------------------------------------------------

    def _discover(self, installed: Installed | None = None) -> None:
        """Read the entry points, once, when something first needs the packs.

        Not when the catalog is built: a listing answered by the cache needs none.
        ``installed`` is the snapshot to read them from (a new one by default): the
        listing passes the one its cache key was computed from.
        """
        if self._discovered:
            return
        self._discovered = True
        only, blocked = self.switches.only, self.switches.blocked
        for name in sorted(blocked):
            self._manager().set_blocked(name)
        for name, group in by_name(scan(PLUGIN_GROUP, installed)).items():
            if len(group) > 1:
                self._extra_problems.append(duplicate_pack(name, group))
                continue
            pack = group[0]
            if only is not None and name not in only:
                pack.status = "disabled"
            elif name in blocked:
                pack.status = "blocked"
                pack.problem("blocked", f"not imported: listed in {BLOCK_ENV}")
            self._packs.setdefault(name, pack)  # a plugin added in code keeps its name

    def _load(self, pack: Pack, *, listing: bool = False) -> None:
        """Import one pack, after checking its requirement on toolpalette; once.

        With ``listing``, its registration in the plugin manager waits for the
        manager's first use (see `_register()`).
        """
        if pack.status != "not-loaded":
            return
        try:
            info = pack.info
            incompatible = pack.incompatibility()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            pack.status = "failed"
            reason = f"reading its metadata raised {describe_exception(exc)}"
            pack.problem("import", f"{reason}; it was not imported")
            return
        if info is None:
            return  # a plugin added in code: registered already
        if incompatible is not None:
            pack.status = "incompatible"
            pack.problem("incompatible", f"{incompatible}; it was not imported")
            return
        try:
            plugin = info.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit, GeneratorExit: still the pack's problem
            pack.status = "failed"
            reason = f"importing {info.value} raised {describe_exception(exc)}"
            pack.problem("import", reason, detail=describe_origin(exc))
            return
        if not isinstance(plugin, types.ModuleType) and not _has_hooks(plugin):
            pack.status = "failed"
            what = describe_type(plugin)
            pack.problem(
                "import",
                f"the entry point names {info.value!r}, {what} with no toolpalette_* hook; "
                "point it at the pack's hooks module",
            )
            return
        self._register(pack, plugin, listing=listing)

    def _register(self, pack: Pack, plugin: object, *, listing: bool = False) -> None:
        """Register ``plugin`` as ``pack`` in the plugin manager and collect its tools.

        With ``listing`` it is registered, checked and collected in a manager of its own
        (the probe, emptied again at once), and joins the hub's manager when that is
        first used: pluggy's registration costs a pass over every implementation
        already registered, so registering a thousand packs costs more than importing
        them, and a listing calls no hook but each pack's own register hook. The
        checks are pluggy's own in both cases, so a pack is refused (or its unknown
        hooks reported) alike whether a listing or a selection imported it.
        """
        if listing:
            if id(plugin) in self._unregistered_names:  # one module behind two names
                self._register_listed()
        else:
            self._register_listed()  # keep the order the packs were imported in
        pm = self._manager()
        existing = pm.get_name(plugin)
        if existing is not None:
            pack.plugin_name = existing  # one module behind two names: registered once
        elif listing and pm.is_blocked(pack.name):
            pack.status = "blocked"
            pack.problem("blocked", "not registered: the name is blocked")
            return
        else:
            if listing:
                if self._probe is None:
                    from toolpalette._plugins import manager

                    self._probe = manager.ToolpaletteManager(trace=self.switches.trace)
                pm = self._probe
            try:
                pack.plugin_name = pm.register(plugin, pack.name)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # pluggy's validation, or the plugin's attributes
                if pm is self._probe and pm.get_plugin(pack.name) is not None:
                    pm.unregister(name=pack.name)  # the probe holds nothing between packs
                pack.status = "failed"
                if isinstance(exc, (pluggy.PluginValidationError, ValueError)):
                    reason = " ".join(safe_str(exc).split())
                else:
                    reason = describe_exception(exc)
                pack.problem("hook", f"its hooks cannot be registered: {reason}")
                return
            if pack.plugin_name is None:
                pack.status = "blocked"
                pack.problem("blocked", "not registered: the name is blocked")
                return
        pack.status = "loaded"
        for hook in pm.unknown_hooks(pack.plugin_name):
            pack.problem(
                "unknown-hook", f"{hook} is not a toolpalette hook; {pm.suggest(hook)}", hook
            )
        if pm is not self._probe:
            self._collect(pack, pm)
            return
        try:
            self._collect(pack, pm)
        finally:
            pm.unregister(plugin)
        self._unregistered.append((pack, plugin))
        self._unregistered_names[id(plugin)] = pack.plugin_name

    def _register_listed(self) -> None:
        """Register the packs a listing imported in the hub's manager, in their order.

        They passed the same checks in the probe, so this does not fail unless the
        manager changed meanwhile (a plugin registered under the same name by hand);
        then the pack is refused as it would have been at import.
        """
        if not self._unregistered:
            return
        listed, self._unregistered = self._unregistered, []
        self._unregistered_names.clear()
        pm = self._manager()
        for pack, plugin in listed:
            try:
                registered = pm.register(plugin, pack.plugin_name)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                registered, reason = None, describe_exception(exc)
            else:
                reason = "the name is blocked"
            if registered is None:
                pack.status = "failed"
                pack.providers = []
                pack.problem("hook", f"its hooks cannot be registered: {reason}")
                self._version += 1

    def _collect(self, pack: Pack, pm: ToolpaletteManager) -> None:
        assert pack.plugin_name is not None
        from toolpalette._plugins.collect import tools

        collected = tools(pm, pack.plugin_name, pack.origin)
        pack.problems.extend(collected.problems)
        for provider in collected.items:
            offered = self._configured(pack, provider)
            if offered is not None:
                pack.providers.append(offered)
        self._version += 1

    def _check(self, pack: Pack) -> None:
        """Build the schemas of a loaded pack's tools, once; a broken one becomes a problem."""
        if pack.checked or pack.status != "loaded":
            return
        pack.checked = True
        kept: list[ToolProvider] = []
        for provider in pack.providers:
            try:
                _ = (provider.input_schema, provider.output_schema)
            except KeyboardInterrupt:
                raise
            except ToolpaletteError as exc:
                pack.problem("invalid-tool", safe_str(exc), provider.name)
                continue
            except BaseException as exc:
                reason = f"building its schema raised {describe_exception(exc)}"
                pack.problem("invalid-tool", reason, provider.name, describe_origin(exc))
                continue
            kept.append(provider)
        if len(kept) != len(pack.providers):
            pack.providers = kept
            self._version += 1

    def _configured(self, pack: Pack, provider: ToolProvider) -> ToolProvider | None:
        name = self.config.name_for(pack.name, provider.name)
        if name == provider.name:
            return provider
        from toolpalette._plugins.config import renamed

        try:
            return renamed(provider, name)
        except ValueError as exc:
            pack.problem("invalid-tool", f"the configured name is refused: {exc}", provider.name)
            return None

    # -- what the hub delegates ------------------------------------------------------

    @property
    def version(self) -> int:
        """A counter that grows whenever a pack's (or a claim's) tools change (caches key on it)."""
        claims = self._claims
        return self._version + (claims.generation() if claims is not None else 0)

    def add_plugin(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object in code; see `toolpalette.ToolHub.add_plugin()`.

        Raises:
            ValueError: ``name`` is already a pack's name.
        """
        with self._lock:
            self._discover()
            name = name or self.pm.get_canonical_name(plugin)
            if name in self._packs:
                raise ValueError(f"a pack named {name!r} already exists; pass another name=")
            module = plugin.__name__ if isinstance(plugin, types.ModuleType) else None
            pack = Pack(name, module or type(plugin).__module__)
            self._packs[name] = pack
            self._register(pack, plugin)
            return name

    def registry(self, *, strict: bool = False) -> ToolRegistry:
        """The registry of every available tool, importing every pack not imported yet.

        The same registry object every time; it grows as packs join. Colliding names are
        not in it (each is a ``collision`` problem).

        Raises:
            ToolCollisionError: with ``strict``, for the first colliding name (sorted).
        """
        from toolpalette._tools.registry import ToolRegistry, sync

        with self._lock:
            for pack in self._sorted_packs():
                self._load(pack)
                self._check(pack)
            if self._registry is None:
                self._registry = ToolRegistry()
            extra = self._claims.claims(gather=True) if self._claims is not None else []
            offered, collisions = resolve_claims([*self._loaded(), *extra])
            self._collisions = collisions
            if self._registry_version != self.version:
                sync(self._registry, offered)
                self._registry_version = self.version
            if strict and collisions:
                raise collisions[0].error(more=len(collisions) - 1)
            return self._registry

    def collision(self, name: str) -> ToolCollisionError | None:
        """The collision that keeps ``name`` out of the catalog, or None; imports every pack."""
        with self._lock:
            self.registry()
            found = next((c for c in self._collisions if c.name == name), None)
            return found.error() if found is not None else None

    def listing(self, *, miss: _listing.Miss | None = None) -> Listing:
        """Every available tool's name, description, read-only flag and provenance.

        Read from the cross-process listing cache when the core, the interpreter, the
        installed packs and the host's renames are exactly those it was built for (then
        no pack is imported); otherwise built by importing every pack, without building
        any tool's schema (a broken definition is reported by `registry()`, by
        ``toolpalette check`` and by selections), and cached. ``miss`` is what a read of
        the cache that just missed computed (`toolpalette._plugins.listing.load_installed`):
        its snapshot and key are reused, not computed again.
        """
        with self._lock:
            fresh = self.autoload and not self._discovered
            cache = _listing.cache_file(self.switches)
            if miss is not None and fresh:
                installed = miss.installed
                # No key: no cache folder, or nothing installed could be fingerprinted.
                key = None if miss.key is None else self._listing_key(known=miss.key)
                cached = None  # the caller's read of the cache missed
            else:
                installed = snapshot() if fresh else None
                key = self._listing_key(installed)
                cached = _listing.load(cache, key) if key is not None and cache else None
            if cached is not None:
                return cached
            self._discover(installed)  # one read of what is installed, shared with the key
            if self._claims is not None and self._claims.live():
                found = list(self.registry())  # servers' tools come with the full catalog
            else:  # names, descriptions, flags: no schema is built for a listing
                for pack in self._sorted_packs():
                    self._load(pack, listing=True)
                found = resolve_claims(self._loaded())[0]
            tools = sorted(found, key=lambda p: p.name)
            built = Listing(tuple(ListedTool.of(p) for p in tools), tuple(self.problems()), False)
            if key is not None and cache is not None:
                _listing.store(cache, key, built)
            return built

    def _listing_key(
        self, installed: Installed | None = None, *, known: str | None = None
    ) -> str | None:
        """The listing cache key, or None when the listing cannot be cached.

        Plugins added in code are not installed files: a catalog holding one is never
        cached. Without autoload, nothing installed matters. ``installed`` is the
        snapshot to fingerprint (a new one when None); ``known`` is the key already
        computed from it (with the same switches and settings), used as it is.
        """
        if any(pack.added_in_code for pack in self._packs.values()):
            return None
        if self._claims is not None and self._claims.live():
            return None  # an MCP server's tools are listed live, never from the cache
        if known is not None:
            return known
        settings = _listing.settings_of(self.config)
        return _listing.packs_key(
            self.switches, settings, autoload=self.autoload, installed=installed
        )

    def providers_for_package(self, import_name: str) -> list[ToolProvider]:
        """The tools of every pack whose hooks module lies in package ``import_name``.

        Only those packs are imported (the choice reads entry point targets). Names
        that collide among them are left out, as in the registry.
        """
        return self._select(lambda pack: _in_package(pack.module, import_name))

    def providers_for_distribution(self, dist_name: str) -> list[ToolProvider]:
        """The tools of every pack shipped by distribution ``dist_name``; imports only those."""
        from packaging.utils import canonicalize_name

        wanted = canonicalize_name(dist_name)
        return self._select(lambda pack: canonicalize_name(pack.distribution or "") == wanted)

    def providers_for_pack(self, pack_name: str) -> list[ToolProvider]:
        """The tools of the pack named ``pack_name`` (its entry point name); imports only it."""
        return self._select(lambda pack: pack.name == pack_name)

    def bundle_description(self, kind: str, target: str) -> str | None:
        """The description of the packs a bundle entry names (``kind`` package or distribution).

        The first of them (by name) whose hooks module declares ``TOOLPALETTE_BUNDLE``
        (a string) gives it; else the first distribution's summary; else None.
        """
        if kind == "package":
            chosen = [p for p in self._sorted_packs() if _in_package(p.module, target)]
        elif kind == "distribution":
            from packaging.utils import canonicalize_name

            wanted = canonicalize_name(target)
            chosen = [
                p for p in self._sorted_packs() if canonicalize_name(p.distribution or "") == wanted
            ]
        else:
            return None
        for pack in chosen:
            plugin = self.pm.get_plugin(pack.plugin_name) if pack.plugin_name else None
            declared = _declared(plugin, BUNDLE_ATTRIBUTE)
            if isinstance(declared, str) and declared.strip():
                return declared
        for pack in chosen:
            summary = distribution_summary(pack.distribution)
            if summary:
                return summary
        return None

    def declared_links(self, pack: str) -> Mapping[str, tuple[str, ...]]:
        """The skills the pack's hooks module names for its tools (``TOOLPALETTE_SKILLS``).

        A mapping of the pack's own tool names to full skill ids; anything else in it
        is ignored (``check`` reports links to skills that are not installed).
        """
        record = self._packs.get(pack)
        name = record.plugin_name if record is not None else None
        declared = _declared(self.pm.get_plugin(name), LINKS_ATTRIBUTE) if name else None
        links: dict[str, tuple[str, ...]] = {}
        try:
            for tool, skills in declared.items() if isinstance(declared, Mapping) else ():
                if isinstance(tool, str) and isinstance(skills, (list, tuple)):
                    links[tool] = tuple(s for s in skills if isinstance(s, str))
        except Exception:  # a pack's odd mapping: its links are not read
            return {}
        return links

    def origin_of(self, pack: str) -> Origin:
        """The pack, distribution and version of the pack named ``pack`` (code: no dist)."""
        with self._lock:
            self._discover()
        record = self._packs.get(pack)
        return record.origin if record is not None else Origin(pack)

    def load_all(self) -> None:
        """Import every pack not imported yet."""
        with self._lock:
            for pack in self._sorted_packs():
                self._load(pack)

    def offered(self, claims: Iterable[Pack]) -> list[ToolProvider]:
        """The tools ``claims`` offer among themselves (names they dispute left out)."""
        return resolve_claims(claims)[0]

    def loaded_providers(self) -> list[ToolProvider]:
        """The providers of every pack loaded so far (collisions left out); imports nothing."""
        with self._lock:
            return resolve_claims(self._loaded())[0]

    def loaded_packs(self) -> list[str]:
        """The names of the packs imported and registered so far, sorted."""
        with self._lock:
            return [p.name for p in self._loaded()]

    def problems(self) -> list[Problem]:
        """The packs' problems so far, sorted (skills and servers are the host side's)."""
        with self._lock:
            found = list(self._extra_problems)
            for pack in self._sorted_packs():
                found.extend(pack.problems)
            extra = self._claims.claims(gather=False) if self._claims is not None else []
            found.extend(c.problem() for c in resolve_claims([*self._loaded(), *extra])[1])
            if self._claims is not None:
                found.extend(self._claims.problems())
        return sorted(found, key=problem_key)

    def plugins(self, *, load: bool = False) -> list[PluginInfo]:
        """Every pack known, sorted by name; ``load`` imports them all first."""
        with self._lock:
            if load:
                self.registry()
            return [self._plugin_info(p) for p in self._sorted_packs()]

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The host's settings for ``pack`` (``[tool.toolpalette.packs.<pack>]``), read-only."""
        return self.config.pack_config(pack)

    def pack_count(self) -> int:
        """How many packs are known (loaded or not)."""
        with self._lock:
            self._discover()
            return len(self._packs)

    # -- helpers -------------------------------------------------------------------

    def _select(self, wanted: Callable[[Pack], bool]) -> list[ToolProvider]:
        with self._lock:
            chosen = [p for p in self._sorted_packs() if wanted(p)]
            for pack in chosen:
                self._load(pack)
                self._check(pack)
            return resolve_claims([p for p in chosen if p.status == "loaded"])[0]

    def _sorted_packs(self) -> list[Pack]:
        self._discover()
        return [self._packs[name] for name in sorted(self._packs)]

    def _loaded(self) -> list[Pack]:
        return [p for p in self._sorted_packs() if p.status == "loaded"]

    def _plugin_info(self, pack: Pack) -> PluginInfo:
        info = pack.info
        hooks = tuple(self.pm.hooks_of(pack.plugin_name)) if pack.plugin_name else ()
        return PluginInfo(
            name=pack.name,
            distribution=info.distribution if info else None,
            version=info.version if info else None,
            module=pack.module,
            hooks=hooks,
            imported=pack.status == "loaded",
            status=pack.status,
        )

    def __repr__(self) -> str:
        loaded = len(self.loaded_packs())
        return f"<PackCatalog {loaded}/{self.pack_count()} packs loaded, version {self._version}>"


def problem_key(problem: Problem) -> tuple[str, str, str, str]:
    """The order problems are listed in: pack, kind, item, reason."""
    return (problem.pack or "", problem.kind, problem.item or "", problem.reason)


def _has_hooks(plugin: object) -> bool:
    """Whether ``plugin`` has a ``toolpalette_*`` attribute (reading it must not fail)."""
    try:
        return any(name.startswith("toolpalette_") for name in dir(plugin))
    except KeyboardInterrupt:
        raise
    except BaseException:
        return False


LINKS_ATTRIBUTE = "TOOLPALETTE_SKILLS"
"""The hooks module's attribute naming the skills of its tools: tool name to skill ids."""

BUNDLE_ATTRIBUTE = "TOOLPALETTE_BUNDLE"
"""The hooks module's attribute that describes its pack when deferred as a bundle."""


def _declared(plugin: object, attribute: str) -> object:
    """A hooks module's (or plugin object's) attribute, or None when reading it fails."""
    if plugin is None:
        return None
    try:
        return getattr(plugin, attribute, None)
    except Exception:  # a property that raises: the pack declares nothing
        return None


def distribution_summary(distribution: str | None) -> str | None:
    """The installed distribution's summary (its ``description`` in pyproject), or None."""
    if not distribution:
        return None
    from importlib import metadata

    try:
        summary = metadata.metadata(distribution)["Summary"]
    except (metadata.PackageNotFoundError, KeyError, OSError, ValueError):
        return None
    return summary if isinstance(summary, str) and summary.strip() else None


def _in_package(module: str | None, package: str) -> bool:
    return module is not None and (module == package or module.startswith(package + "."))
