"""The ToolHub's discovery side: find packs, import them only when needed, build the catalog.

``ToolHub()`` reads the ``toolpalette.plugins`` entry points (names and targets only) and
imports nothing. A pack is imported when something needs it: a selection naming its
import package or distribution, or the catalog (which needs them all). Each pack is
checked against this core's version before import, imported on its own, and each of
its hook implementations is called on its own, so one broken pack is a
:class:`~toolpalette.Problem` and never an exception.

Collisions: when loaded packs offer *different* tools under one name, none of them is
offered and one ``collision`` problem names every claimant. The result is the same
whatever order the packs loaded in; the host resolves it with a rename or a prefix
(see :mod:`toolpalette._plugins.config`). Equal providers (a pack reachable through two entry
points, a tool re-exported by another pack) are one entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

import pluggy

from toolpalette._agents.host import HostSide
from toolpalette._mcp_client import servers as _mcp
from toolpalette._plugins import collect as _collect
from toolpalette._plugins import listing as _listing
from toolpalette._plugins.config import ConfigSource, HubConfig, RenamedProvider, load_config
from toolpalette._plugins.discovery import PLUGIN_GROUP, env_names
from toolpalette._plugins.listing import Listing, ToolInfo
from toolpalette._plugins.manager import ToolpaletteManager
from toolpalette._plugins.packs import Pack, PackStatus, scan
from toolpalette._plugins.problems import Problem
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.registry import ToolRegistry
from toolpalette.errors import ToolCollisionError

__all__ = ["PackStatus", "PluginInfo", "ToolHub"]

DISABLE_ENV: Final = "TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD"
"""Set to anything non-empty: no installed pack is used unless TOOLPALETTE_PLUGINS names it."""
ONLY_ENV: Final = "TOOLPALETTE_PLUGINS"
"""``a,b``: only these installed packs are used."""
BLOCK_ENV: Final = "TOOLPALETTE_BLOCK_PLUGINS"
"""``a,b``: these packs are never imported."""


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


@dataclass(frozen=True)
class _Collision:
    name: str
    claims: tuple[tuple[Pack, ToolProvider], ...]

    def error(self, more: int = 0) -> ToolCollisionError:
        first, second = (provider.describe() for _, provider in self.claims[:2])
        error = ToolCollisionError(tool_name=self.name, first=first, second=second)
        if not more:
            return error
        hint = f"{error.hint} ({more} more collision(s): run `toolpalette check`)"
        return ToolCollisionError(tool_name=self.name, first=first, second=second, hint=hint)

    def problem(self) -> Problem:
        packs = ", ".join(pack.name for pack, _ in self.claims)
        labels = ", ".join(pack.label or "(added in code)" for pack, _ in self.claims)
        who = "; ".join(f"{p.describe()} in pack {pack.name!r}" for pack, p in self.claims)
        reason = (
            f"different tools claim the name {self.name!r}: {who}. None of them is offered; "
            f"{self.error().hint}"
        )
        known = any(pack.label for pack, _ in self.claims)
        return Problem("collision", reason, packs, labels if known else None, self.name)


@final
class ToolHub(HostSide):
    """The process-wide entry to installed tool packs (discovery side).

    Args:
        autoload: Discover installed packs through their entry points. False starts
            empty (add plugins with :meth:`add_plugin`); the environment can also turn
            autoload off (``TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD``).
        config: The host configuration: a mapping, a path to a ``toolpalette.toml``
            or ``pyproject.toml``, or None to look in the current directory.
        rename: Tool renames, merged over the configuration's (see the host guide).
        prefix: Per-pack tool name prefixes, merged over the configuration's.
        mcp_servers: MCP servers to use besides the configuration's: a mapping of
            names to tables (as in ``[mcp_servers.NAME]``), or a desktop client's
            ``{"mcpServers": ...}`` block, or the path of a JSON file holding one.

    Nothing is imported when the hub is built, and no MCP server is started until its
    tools are needed. All methods are thread-safe. Close the hub (or use it as a
    context manager) to stop the MCP servers it started.
    """

    def __init__(
        self,
        *,
        autoload: bool = True,
        config: ConfigSource = None,
        rename: Mapping[str, str] | None = None,
        prefix: Mapping[str, str] | None = None,
        mcp_servers: Any = None,
    ) -> None:
        self._lock = threading.RLock()
        self.config: HubConfig = load_config(config, rename=rename, prefix=prefix)
        """The validated host configuration."""
        self.pm = ToolpaletteManager()
        """The pluggy plugin manager; ``hub.pm.hook`` calls the host hooks."""
        self._packs: dict[str, Pack] = {}
        self._extra_problems: list[Problem] = []
        self._version = 0
        self._catalog: ToolRegistry | None = None
        self._catalog_version = -1
        self._mcp_code = mcp_servers
        self._mcp: _mcp.MCPServers | None = None
        self._mcp_claims: dict[str, Pack] = {}
        self.autoload = autoload
        """Whether installed packs and skilljars are discovered (False: add them in code)."""
        if autoload:
            self._discover()

    # -- discovery -----------------------------------------------------------------

    def _discover(self) -> None:
        only = env_names(ONLY_ENV)
        if only is None and env_names(DISABLE_ENV):
            return
        blocked = env_names(BLOCK_ENV) or frozenset()
        for name in sorted(blocked):
            self.pm.set_blocked(name)
        for name, group in _by_name(scan(PLUGIN_GROUP)).items():
            if len(group) > 1:
                self._extra_problems.append(_duplicate_pack(name, group))
                continue
            pack = group[0]
            if only is not None and name not in only:
                pack.status = "disabled"
            elif name in blocked:
                pack.status = "blocked"
                pack.problem("blocked", f"not imported: listed in {BLOCK_ENV}")
            self._packs[name] = pack

    def _load(self, pack: Pack) -> None:
        """Import one pack, after checking its requirement on toolpalette; once."""
        if pack.status != "not-loaded":
            return
        try:
            info = pack.info
            incompatible = pack.incompatibility()
        except Exception as exc:
            pack.status = "failed"
            reason = f"reading its metadata raised {_collect.describe_exception(exc)}"
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
        except (Exception, SystemExit) as exc:
            pack.status = "failed"
            pack.problem(
                "import", f"importing {info.value} raised {_collect.describe_exception(exc)}"
            )
            return
        self._register(pack, plugin)

    def _register(self, pack: Pack, plugin: object) -> None:
        existing = self.pm.get_name(plugin)
        if existing is not None:
            pack.plugin_name = existing  # one module behind two names: registered once
        else:
            try:
                pack.plugin_name = self.pm.register(plugin, pack.name)
            except (pluggy.PluginValidationError, ValueError) as exc:
                pack.status = "failed"
                reason = " ".join(str(exc).split())
                pack.problem("hook", f"its hooks cannot be registered: {reason}")
                return
            if pack.plugin_name is None:
                pack.status = "blocked"
                pack.problem("blocked", "not registered: the name is blocked")
                return
        pack.status = "loaded"
        for hook in self.pm.unknown_hooks(pack.plugin_name):
            pack.problem(
                "unknown-hook", f"{hook} is not a toolpalette hook; {self.pm.suggest(hook)}", hook
            )
        self._collect(pack)

    def _collect(self, pack: Pack) -> None:
        assert pack.plugin_name is not None
        collected = _collect.tools(self.pm, pack.plugin_name, pack.origin)
        pack.problems.extend(collected.problems)
        for provider in collected.items:
            offered = self._configured(pack, provider)
            if offered is not None:
                pack.providers.append(offered)
        self._version += 1

    def _configured(self, pack: Pack, provider: ToolProvider) -> ToolProvider | None:
        name = self.config.name_for(pack.name, provider.name)
        if name == provider.name:
            return provider
        try:
            return RenamedProvider(provider, name)
        except ValueError as exc:
            pack.problem("invalid-tool", f"the configured name is refused: {exc}", provider.name)
            return None

    # -- public API ----------------------------------------------------------------

    @property
    def version(self) -> int:
        """A counter that grows whenever a pack's or a server's tools change (caches key on it)."""
        mcp = self._mcp
        return self._version + (mcp.generation if mcp is not None else 0)

    @property
    def hook(self) -> Any:
        """``hub.pm.hook``: call the host hooks (reconcile, admit, grant, tool_error)."""
        return self.pm.hook

    def add_plugin(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object (a module or an object with ``@hookimpl`` methods) in code.

        Its tools join at once; broken hooks and garbage become problems, as for an
        installed pack. Returns the name it is registered under.

        Raises:
            ValueError: ``name`` is already a pack's name.
        """
        with self._lock:
            name = name or self.pm.get_canonical_name(plugin)
            if name in self._packs:
                raise ValueError(f"a pack named {name!r} already exists; pass another name=")
            module = getattr(plugin, "__name__", None) if _is_module(plugin) else None
            pack = Pack(name, module or type(plugin).__module__)
            self._packs[name] = pack
            self._register(pack, plugin)
            return name

    def catalog(self, *, strict: bool = False) -> ToolRegistry:
        """The registry of every available tool, importing every pack not imported yet.

        The same registry object every time; it grows as packs join. Colliding names are
        not in it (each is a ``collision`` problem).

        Args:
            strict: Raise instead of leaving colliding names out.

        Raises:
            ToolCollisionError: with ``strict``, for the first colliding name (sorted).
        """
        with self._lock:
            for pack in self._sorted_packs():
                self._load(pack)
            if self._catalog is None:
                self._catalog = ToolRegistry()
            self._add_pack_servers()
            servers = self._server_claims(self.mcp_server_names())
            offered, collisions = self._resolve([*self._loaded(), *servers])
            if self._catalog_version != self.version:
                _sync(self._catalog, offered)
                self._catalog_version = self.version
            if strict and collisions:
                raise collisions[0].error(more=len(collisions) - 1)
            return self._catalog

    def listing(self) -> Listing:
        """Every available tool's name, description, read-only flag and provenance.

        Read from the cross-process listing cache when the installed packs and the host's
        renames are exactly those it was built for (then no pack is imported); otherwise
        built from ``catalog()`` and cached. See ``toolpalette._plugins.listing``.
        """
        with self._lock:
            settings = {"rename": dict(self.config.rename), "prefix": dict(self.config.prefix)}
            key = _listing.key_of((p.fingerprint() for p in self._sorted_packs()), settings)
            if self.mcp_server_names():
                key = None  # a server's tools are listed live, never from the cache
            cached = _listing.load(key) if key is not None else None
            if cached is not None:
                return cached
            tools = sorted(self.catalog(), key=lambda p: p.name)
            skill_side = set(self._skill_problems())
            problems = tuple(p for p in self.problems() if p not in skill_side)
            built = Listing(tuple(ToolInfo.of(p) for p in tools), problems, cached=False)
            if key is not None:
                _listing.store(key, built)
            return built

    def providers_for_package(self, import_name: str) -> list[ToolProvider]:
        """The tools of every pack whose hooks module lies in package ``import_name``.

        Only those packs are imported (the choice reads entry point targets). Names
        that collide among them are left out, as in the catalog.
        """
        return self._select(lambda pack: _in_package(pack.module, import_name))

    def providers_for_distribution(self, dist_name: str) -> list[ToolProvider]:
        """The tools of every pack shipped by distribution ``dist_name``; imports only those."""
        wanted = _canonical(dist_name)
        return self._select(lambda pack: _canonical(pack.distribution or "") == wanted)

    def providers_for_pack(self, pack_name: str) -> list[ToolProvider]:
        """The tools of the pack named ``pack_name`` (its entry point name); imports only it."""
        return self._select(lambda pack: pack.name == pack_name)

    def _distribution_of(self, pack: str) -> tuple[str | None, str | None]:
        """The distribution name and version of the pack named ``pack`` (None for code)."""
        record = self._packs.get(pack)
        info = record.info if record is not None else None
        return (info.distribution, info.version) if info is not None else (None, None)

    def _loaded_providers(self) -> list[ToolProvider]:
        """The providers of every pack loaded so far (collisions left out); imports nothing."""
        with self._lock:
            return self._resolve(self._loaded())[0]

    def loaded_packs(self) -> list[str]:
        """The names of the packs imported and registered so far, sorted."""
        with self._lock:
            return [p.name for p in self._sorted_packs() if p.status == "loaded"]

    def problems(self) -> list[Problem]:
        """Everything skipped so far, and why, sorted; call ``catalog()`` first to see all."""
        with self._lock:
            found = list(self._extra_problems)
            for pack in self._sorted_packs():
                found.extend(pack.problems)
            servers = list(self._mcp_claims.values())
            found.extend(c.problem() for c in self._resolve([*self._loaded(), *servers])[1])
            found.extend(self._skill_problems())
            if self._mcp is not None:
                found.extend(self._mcp.problems())
        return sorted(found, key=_problem_key)

    def plugins(self, *, load: bool = False) -> list[PluginInfo]:
        """Every pack the hub knows, sorted by name; ``load`` imports them all first."""
        with self._lock:
            if load:
                self.catalog()
            return [self._plugin_info(p) for p in self._sorted_packs()]

    # -- MCP servers -------------------------------------------------------------------

    def mcp(self) -> _mcp.MCPServers:
        """The MCP servers of the host's configuration and code (packs' join with the catalog)."""
        with self._lock:
            if self._mcp is None:
                config = self.config
                self._mcp = _mcp.assemble(
                    config.mcp_servers,
                    json_file=config.mcp_json,
                    code=self._mcp_code,
                    source=config.source,
                )
            return self._mcp

    def mcp_server_names(self) -> list[str]:
        """Every MCP server's name: the host's, and the packs' once ``catalog()`` ran."""
        return self.mcp().names()

    def _add_pack_servers(self) -> None:
        """Import every pack, and add the MCP servers they describe (once)."""
        for pack in self._sorted_packs():
            self._load(pack)
        _mcp.add_pack_servers(self.mcp(), self._pack_servers())

    def providers_for_server(self, name: str) -> list[ToolProvider]:
        """The tools of MCP server ``name``, starting it if needed; [] when it cannot be used.

        Raises:
            KeyError: no server of that name is configured (the message lists those that are).
        """
        with self._lock:
            names = self.mcp_server_names()
            if name not in names:
                self._add_pack_servers()
                names = self.mcp_server_names()
            if name not in names:
                known = ", ".join(names) or "none"
                raise KeyError(f"no MCP server named {name!r} is configured (servers: {known})")
            return self._resolve(self._server_claims([name]))[0]

    def _server_claims(self, names: list[str]) -> list[Pack]:
        """One pack-like record per server, holding its tools, for the collision policy."""
        claims = []
        for name in names:
            providers: list[ToolProvider] = list(self.mcp().providers(name))
            claim = self._mcp_claims.get(name)
            if claim is None:
                claim = self._mcp_claims[name] = Pack(_mcp.problem_pack(name), None)
                claim.status = "loaded"
            if claim.providers != providers:
                claim.providers = providers
                self._version += 1
            claims.append(claim)
        return claims

    def close(self) -> None:
        """Stop every MCP server this hub started and end its connections. Idempotent.

        The servers' tools then answer 503. Interpreter exit closes open hubs' servers too.
        """
        mcp = self._mcp
        if mcp is not None:
            mcp.close()

    def __enter__(self) -> ToolHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The host's settings for ``pack`` (``[tool.toolpalette.packs.<pack>]``), read-only."""
        return self.config.pack_config(pack)

    # -- helpers -------------------------------------------------------------------

    def _select(self, wanted: Callable[[Pack], bool]) -> list[ToolProvider]:
        with self._lock:
            chosen = [p for p in self._sorted_packs() if wanted(p)]
            for pack in chosen:
                self._load(pack)
            return self._resolve([p for p in chosen if p.status == "loaded"])[0]

    def _sorted_packs(self) -> list[Pack]:
        return [self._packs[name] for name in sorted(self._packs)]

    def _loaded(self) -> list[Pack]:
        return [p for p in self._sorted_packs() if p.status == "loaded"]

    @staticmethod
    def _resolve(packs: Iterable[Pack]) -> tuple[list[ToolProvider], list[_Collision]]:
        """The offered providers and the collisions of ``packs``, independent of load order."""
        claims: dict[str, list[tuple[Pack, ToolProvider]]] = {}
        for pack in sorted(packs, key=lambda p: p.name):
            for provider in pack.providers:
                claims.setdefault(provider.name, []).append((pack, provider))
        offered: list[ToolProvider] = []
        collisions: list[_Collision] = []
        for name, claimed in claims.items():
            distinct: list[tuple[Pack, ToolProvider]] = []
            for claim in claimed:
                if not any(claim[1] == seen[1] for seen in distinct):
                    distinct.append(claim)
            if len(distinct) == 1:
                offered.append(distinct[0][1])
            else:
                collisions.append(_Collision(name, tuple(distinct)))
        collisions.sort(key=lambda c: c.name)
        return offered, collisions

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
        return f"<ToolHub {loaded}/{len(self._packs)} packs loaded, version {self._version}>"


def _sync(registry: ToolRegistry, offered: list[ToolProvider]) -> None:
    """Make ``registry`` hold exactly ``offered``, keeping the position of what stays."""
    wanted = {p.name: p for p in offered}
    for name in registry.tool_names():
        if name not in wanted:
            registry.unregister(name)
    for provider in offered:
        current = registry.get(provider.name)
        if current is None:
            registry.register(provider)
        elif current is not provider:
            registry.replace(provider)


def _by_name(packs: Iterable[Pack]) -> dict[str, list[Pack]]:
    grouped: dict[str, list[Pack]] = {}
    for pack in packs:
        grouped.setdefault(pack.name, []).append(pack)
    return grouped


def _duplicate_pack(name: str, group: list[Pack]) -> Problem:
    labels = ", ".join(pack.label or "?" for pack in group)
    reason = (
        f"{len(group)} distributions declare the pack {name!r} ({labels}); none of them is "
        "imported. Uninstall one, or rename its entry point."
    )
    return Problem("collision", reason, name, labels)


def _problem_key(problem: Problem) -> tuple[str, str, str, str]:
    return (problem.pack or "", problem.kind, problem.item or "", problem.reason)


def _in_package(module: str | None, package: str) -> bool:
    return module is not None and (module == package or module.startswith(package + "."))


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _is_module(obj: object) -> bool:
    import types

    return isinstance(obj, types.ModuleType)
