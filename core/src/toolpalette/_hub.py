"""``ToolHub``: the process-wide entry, over the pack catalog, skills, MCP servers and thinkers."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, final

from toolpalette._agents.content import OfferedContent
from toolpalette._agents.grants import GrantLog, GrantRecord
from toolpalette._agents.links import linked_skills
from toolpalette._agents.selector import ResolvedTools, ToolSelector
from toolpalette._agents.thinker import ResolvedPalette, Thinker, resolve_palette
from toolpalette._hookcall import call_each, in_call_order
from toolpalette._mcp_client import servers as _mcp
from toolpalette._plugins import collect as _collect
from toolpalette._plugins.catalog import PackCatalog, PluginInfo, problem_key
from toolpalette._plugins.config import ConfigSource, HubConfig, load_config
from toolpalette._plugins.content import Content, PackContent
from toolpalette._plugins.discovery import SKILLJAR_GROUP, discover
from toolpalette._plugins.listing import Listing
from toolpalette._plugins.manager import ToolpaletteManager
from toolpalette._plugins.packs import Pack, PackStatus
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.servers import MCPServerSpec
from toolpalette._plugins.switches import Switches
from toolpalette._run.reports import Reporter
from toolpalette._skills import Conversation, SkillRegistry
from toolpalette._tools.prompt import PackPrompt
from toolpalette._tools.provider import ToolProvider, as_provider
from toolpalette._tools.registry import ToolRegistry
from toolpalette._tools.resource import PackResource
from toolpalette.errors import ToolCollisionError

__all__ = ["PackStatus", "PluginInfo", "ToolHub"]

T = TypeVar("T", bound=Thinker)

logger = logging.getLogger("toolpalette.hub")


@final
class ToolHub:
    """The process-wide entry to installed tool packs, skilljars and thinkers.

    Args:
        autoload: Discover installed packs through their entry points. False starts
            empty (add plugins with [`add_plugin()`][toolpalette.ToolHub.add_plugin]);
            the environment can also turn autoload off
            (``TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD``).
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
        self._packs = PackCatalog(
            load_config(config, rename=rename, prefix=prefix),
            Switches.from_environ(),
            autoload=autoload,
        )
        self._lock = threading.RLock()
        """Held while the hub's own state changes (never while waiting for the catalog's)."""
        self._system = ToolRegistry()
        self._skills: SkillRegistry | None = None
        self._skill_packs: set[str] = set()
        self._palettes: dict[type[Any], tuple[tuple[int, int, int], ResolvedPalette]] = {}
        self._servers_of: dict[type[Any], frozenset[str]] = {}
        self._grants = GrantLog()
        self._on_tool_error: list[Reporter] = []
        self._known: tuple[int, dict[int, list[ToolProvider]]] | None = None
        self._servers: list[MCPServerSpec] | None = None
        self._server_problems: list[Problem] = []
        self._withheld: dict[str, Problem] = {}
        """The skills a thinker class did not offer (what they require is missing)."""
        self._hook_problems: list[Problem] = []
        """What ``toolpalette_register_skills`` implementations raised."""
        self._mcp_code = mcp_servers
        self._mcp: _mcp.MCPServers | None = None
        self._mcp_claims: dict[str, Pack] = {}
        self._mcp_changes = 0
        self._packs.attach(_ServerClaims(self))
        self._content = PackContent(self._packs)
        self._content_asked = False

    # -- the pack catalog ----------------------------------------------------------

    @property
    def config(self) -> HubConfig:
        """The validated host configuration."""
        return self._packs.config

    @property
    def pm(self) -> ToolpaletteManager:
        """The pluggy plugin manager; ``hub.pm.hook`` calls the host hooks."""
        return self._packs.pm

    @property
    def autoload(self) -> bool:
        """Whether installed packs and skilljars are discovered (False: add them in code)."""
        return self._packs.autoload

    @property
    def version(self) -> int:
        """A counter that grows whenever a pack's tools join the hub (caches key on it)."""
        return self._packs.version

    def add_plugin(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object (a module or an object with ``@hookimpl`` methods) in code.

        Its tools join at once; broken hooks and garbage become problems, as for an
        installed pack. Returns the name it is registered under.

        Raises:
            ValueError: ``name`` is already a pack's name.
        """
        return self._packs.add_plugin(plugin, name)

    def catalog(self, *, strict: bool = False) -> ToolRegistry:
        """The registry of every available tool, importing every pack not imported yet.

        The same registry object every time; it grows as packs join. Colliding names are
        not in it (each is a ``collision`` problem).

        Args:
            strict: Raise instead of leaving colliding names out.

        Raises:
            ToolCollisionError: with ``strict``, for the first colliding name (sorted).
        """
        return self._packs.registry(strict=strict)

    def listing(self) -> Listing:
        """Every available tool's name, description, read-only flag and provenance.

        Read from the cross-process listing cache when the core, the interpreter, the
        installed packs and the host's renames are exactly those it was built for (then
        no pack is imported); otherwise built from ``catalog()`` and cached. Its
        problems are the packs' (skills are listed by ``toolpalette skills``).
        """
        return self._packs.listing()

    def providers_for_package(self, import_name: str) -> list[ToolProvider]:
        """The tools of every pack whose hooks module lies in package ``import_name``.

        Only those packs are imported (the choice reads entry point targets). Names
        that collide among them are left out, as in the catalog.
        """
        return self._packs.providers_for_package(import_name)

    def providers_for_distribution(self, dist_name: str) -> list[ToolProvider]:
        """The tools of every pack shipped by distribution ``dist_name``; imports only those."""
        return self._packs.providers_for_distribution(dist_name)

    def providers_for_pack(self, pack_name: str) -> list[ToolProvider]:
        """The tools of the pack named ``pack_name`` (its entry point name); imports only it."""
        return self._packs.providers_for_pack(pack_name)

    def linked_skills(self, provider: ToolProvider) -> tuple[str, ...]:
        """The full ids of the skills that go with ``provider``'s tool.

        Those its ``@tool(skills=...)`` (its ``toolpalette.skills`` metadata) names,
        then those its pack's hooks module names in ``TOOLPALETTE_SKILLS``.
        """
        return linked_skills(provider, self._packs.declared_links)

    def bundle_description(self, kind: str, target: str) -> str | None:
        """What a selector's bundle of ``kind`` (package, distribution) ``target`` says it is.

        The ``TOOLPALETTE_BUNDLE`` text of its first pack's hooks module that has one,
        else its distribution's summary; None otherwise (the bundle then lists its tools).
        """
        return self._packs.bundle_description(kind, target)

    def collision(self, name: str) -> ToolCollisionError | None:
        """Why tool ``name`` is not in the catalog when packs claim it alike, else None.

        The error names every claimant's distribution and version, and the fix.
        """
        return self._packs.collision(name)

    def loaded_packs(self) -> list[str]:
        """The names of the packs imported and registered so far, sorted."""
        return self._packs.loaded_packs()

    def problems(self) -> list[Problem]:
        """Everything skipped so far, and why, sorted; call ``catalog()`` first to see all."""
        found = self._packs.problems()
        with self._lock:
            found += [
                *self._packs.config.problems,
                *self._server_problems,
                *self._withheld.values(),
                *self._hook_problems,
            ]
            if self._skills is not None:
                found.extend(self._skills.problems())
            asked = self._content_asked
        if asked:  # the packs' prompts and resources, once asked for
            found.extend(self._content.content().problems)
        return sorted(found, key=problem_key)

    def plugins(self, *, load: bool = False) -> list[PluginInfo]:
        """Every pack the hub knows, sorted by name; ``load`` imports them all first."""
        return self._packs.plugins(load=load)

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The host's settings for ``pack`` (``[tool.toolpalette.packs.<pack>]``), read-only."""
        return self._packs.pack_config(pack)

    # -- skills ----------------------------------------------------------------------

    def skills(self) -> SkillRegistry:
        """The SkillRegistry: every installed skilljar (opened lazily) and code-built skills.

        Skills built in code (``toolpalette_register_skills``) join from the packs
        imported so far; ``hub.catalog()`` imports them all. Each MCP server's skills
        (the Skills extension) join under ``mcp.NAME``, listed when first asked for.
        """
        servers = self.mcp()  # before the hub's lock: it takes the catalog's
        with self._lock:
            if self._skills is None:
                jars = discover(SKILLJAR_GROUP) if self._packs.autoload else []
                self._skills = SkillRegistry.from_entry_points(jars)
            for pack in self._packs.loaded_packs():
                if pack not in self._skill_packs:
                    self._skill_packs.add(pack)
                    self._collect_skills(pack, self._skills)
            for name in servers.names():
                _mcp.add_server_skills(servers, name, self._skills)
            return self._skills

    def _collect_skills(self, pack: str, registry: SkillRegistry) -> None:
        origin = self._packs.origin_of(pack)
        found, problems = _collect.registered(
            self._packs.pm, "toolpalette_register_skills", pack, origin
        )
        self._hook_problems.extend(problems)
        items = [item for _impl, _position, item in found]
        registry.add_skills(
            items, pack=pack, distribution=origin.distribution, version=origin.version
        )

    # -- prompts and resources ---------------------------------------------------------

    def prompts(self) -> list[PackPrompt]:
        """Every prompt the packs ship (``toolpalette_register_prompts``), by name.

        Imports every pack (like ``catalog()``); a broken one is in ``hub.problems()``.
        """
        found = self._pack_content().prompts
        return [found[name] for name in sorted(found)]

    def resources(self) -> list[PackResource]:
        """Every resource and resource template the packs ship, by URI.

        Imports every pack (like ``catalog()``); a broken one is in ``hub.problems()``.
        """
        found = self._pack_content().resources
        return [found[uri] for uri in sorted(found)]

    def content_for(self, thinker: type[Thinker]) -> OfferedContent:
        """The prompts and resources a thinker class declares (``declare_content``).

        Only read-only ones for a read-only class.
        """
        selector = thinker.declare_content()
        if not selector:
            return OfferedContent()
        return selector.resolve(self._pack_content(), read_only=bool(thinker.read_only))

    def _pack_content(self) -> Content:
        """Every pack's prompts and resources (imports every pack); their problems count."""
        self._content_asked = True
        return self._content.content()

    # -- MCP servers -------------------------------------------------------------------

    def mcp_servers(self) -> list[MCPServerSpec]:
        """The MCP servers installed packs describe, checked, sorted by name.

        Imports every pack (like ``catalog()``). A description of the wrong shape, or a
        name two packs use, is recorded in ``hub.problems()`` and left out.
        """
        self._packs.registry()
        return self._pack_servers()

    def _pack_servers(self) -> list[MCPServerSpec]:
        """The servers the packs loaded so far describe, collected once (imports nothing)."""
        with self._lock:
            if self._servers is None:
                packs = [(p, self._packs.origin_of(p)) for p in self._packs.loaded_packs()]
                collected = _collect.servers(self._packs.pm, packs)
                self._server_problems.extend(collected.problems)
                self._servers = collected.items
            return list(self._servers)

    def mcp(self) -> _mcp.MCPServers:
        """The MCP servers of the host's configuration and code (packs' join with the catalog)."""
        with self._packs.lock:
            if self._mcp is None:
                config = self._packs.config
                self._mcp = _mcp.assemble(
                    config.mcp_servers,
                    json_file=config.mcp_json,
                    code=self._mcp_code,
                    source=config.source,
                    switches=self._packs.switches,
                )
            return self._mcp

    def mcp_server_names(self) -> list[str]:
        """Every MCP server's name: the host's, and the packs' once ``catalog()`` ran."""
        return self.mcp().names()

    def providers_for_server(self, name: str) -> list[ToolProvider]:
        """The tools of MCP server ``name``, starting it if needed; [] when it cannot be used.

        Raises:
            KeyError: no server of that name is configured (the message lists those that are).
        """
        with self._packs.lock:
            names = self.mcp_server_names()
            if name not in names:
                self._add_pack_servers()
                names = self.mcp_server_names()
            if name not in names:
                known = ", ".join(names) or "none"
                raise KeyError(f"no MCP server named {name!r} is configured (servers: {known})")
            return self._packs.offered(self._server_claims([name]))

    def _add_pack_servers(self) -> None:
        """Import every pack, and add the MCP servers they describe (once)."""
        self._packs.load_all()
        _mcp.add_pack_servers(self.mcp(), self._pack_servers())

    def _server_claims(self, names: list[str]) -> list[Pack]:
        """One pack-like record per server, holding its tools, for the collision policy."""
        claims = []
        for name in names:
            providers: list[ToolProvider] = list(self.mcp().providers(name))
            claim = self._mcp_claims.get(name)
            if claim is None:
                claim = self._mcp_claims[name] = Pack(_mcp.problem_pack(name), None)
                claim.status = "loaded"
            config = self.mcp().config(name)
            if config is not None:
                claim.claim_source, claim.claim_hint = _mcp.claim_note(
                    config, self._packs.config.source
                )
            if claim.providers != providers:
                claim.providers = providers
                self._mcp_changes += 1
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

    # -- system-wide tools and selecting tools -----------------------------------------

    def register_system_tool(self, obj: object) -> ToolProvider:
        """Offer a tool to every thinker bound to this hub (before its declared tools).

        Raises:
            ToolCollisionError: another provider already holds the name.
        """
        provider = as_provider(obj)
        with self._lock:
            registered = self._system.register(provider)
            self._palettes.clear()
        assert registered is not None
        return registered

    def system_tools(self) -> list[ToolProvider]:
        """The system-wide tools, in registration order."""
        return self._system.providers()

    def resolve(self, selector: ToolSelector) -> ResolvedTools:
        """Turn a ToolSelector into providers, importing only the packs it names."""
        return selector.resolve(self)

    def known_provider(self, provider: ToolProvider) -> ToolProvider:
        """The loaded pack's own provider of ``provider``'s tool, else ``provider`` itself.

        The pack's provider carries its origin and the host's rename, so a pack's tool
        selected by object runs with the host's configuration for its pack. It is looked
        up among the packs loaded so far, whether or not ``catalog()`` ran.
        """
        for known in self._known_index().get(_identity(provider), ()):
            if known == provider or getattr(known, "inner", None) == provider:
                return known
        return provider

    def _known_index(self) -> dict[int, list[ToolProvider]]:
        """The loaded packs' providers by the object they wrap, rebuilt when the catalog moves."""
        with self._lock:
            version = self._packs.version
            if self._known is None or self._known[0] != version:
                index: dict[int, list[ToolProvider]] = {}
                for known in self._packs.loaded_providers():
                    inner = getattr(known, "inner", None)
                    index.setdefault(_identity(inner or known), []).append(known)
                self._known = (version, index)
            return self._known[1]

    # -- thinkers --------------------------------------------------------------------

    def resolve_thinker(self, cls: type[Thinker]) -> ResolvedPalette:
        """``cls``'s tools and skills, resolved once and cached until the hub changes."""
        with self._lock:
            cached = self._palettes.get(cls)
            if cached is not None and cached[0] == self._palette_key():
                return cached[1]
            with _mcp.MCPServers.consulting() as servers:
                palette = resolve_palette(self, cls, declared_links=self._packs.declared_links)
            # Resolving may import packs and open jars (moving the versions): key on the result.
            self._palettes[cls] = (self._palette_key(), palette)
            for problem in palette.withheld:
                self._withheld[f"{problem.item}\0{problem.reason}"] = problem
            self._servers_of[cls] = frozenset(servers)
            return palette

    def _palette_key(self) -> tuple[int, int, int]:
        skills = self._skills.version if self._skills is not None else -1
        return (self._packs.version, self._system.version, skills)

    async def settle_servers(self, cls: type[Thinker]) -> None:
        """Await the MCP listings ``cls``'s palette needs, without blocking the event loop.

        A listing in flight or due (a server said its list changed, its ``ttlMs`` ran
        out) of each server the class's palette was last resolved from, each within its
        deadline. ``thinker.abegin_turn()`` calls it before reconciling.
        """
        with self._lock:
            names = self._servers_of.get(cls, frozenset())
        mcp = self._mcp
        if names and mcp is not None:
            await mcp.settle(names)

    def bind(self, cls: type[T], conversation: Conversation | None = None, **options: Any) -> T:
        """A thinker of class ``cls`` bound to this hub and ``conversation``.

        ``options`` go to the thinker (``policy``, ``run_id``, ``user``, ``approver``,
        ``keep_grants``: False for stateless serving, where admissions are decided,
        recorded and answered but nothing is kept). The read-only binding is latched
        here. Selectors are resolved now, so a declaration error surfaces at bind time
        rather than mid-run.
        """
        self.resolve_thinker(cls)
        return cls(self, conversation, **options)

    # -- records and reports -----------------------------------------------------------

    def record_grant(self, record: GrantRecord) -> None:
        """Keep ``record`` and deliver it to every ``toolpalette_grant`` implementation."""
        self._grants.add(record)
        impls = in_call_order(self._packs.pm.hook.toolpalette_grant)
        for called in call_each(impls, "toolpalette_grant", {"record": record}):
            if called.error is not None:
                logger.error(
                    "toolpalette_grant in %s raised; ignored",
                    called.impl.plugin_name,
                    exc_info=called.error,
                )

    def grants(self) -> list[GrantRecord]:
        """The newest admission requests decided (at most 10,000), oldest first.

        Every decision also reaches the ``toolpalette_grant`` hook: an audit log keeps
        them all there.
        """
        return self._grants.records()

    def on_tool_error(self, callback: Reporter) -> Callable[[], None]:
        """Give ``callback`` every failure report of calls made by thinkers of this hub.

        Returns a function that removes it.
        """
        reporters = self._on_tool_error
        reporters.append(callback)
        return lambda: reporters.remove(callback) if callback in reporters else None

    def tool_error_reporters(self) -> Iterable[Reporter]:
        """The callbacks registered with [`on_tool_error()`][toolpalette.ToolHub.on_tool_error]."""
        return tuple(self._on_tool_error)

    def __repr__(self) -> str:
        loaded = len(self._packs.loaded_packs())
        total = self._packs.pack_count()
        return f"<ToolHub {loaded}/{total} packs loaded, version {self._packs.version}>"


def _identity(provider: object) -> int:
    """What equal providers share: the wrapped function or class, else the provider itself."""
    wrapped = getattr(provider, "function", None) or getattr(provider, "tool_class", None)
    return id(wrapped if wrapped is not None else provider)


class _ServerClaims:
    """The hub's MCP servers as the pack catalog sees them: claims on tool names."""

    def __init__(self, hub: ToolHub) -> None:
        self._hub = hub

    def claims(self, *, gather: bool) -> list[Pack]:
        hub = self._hub
        if not gather:
            return list(hub._mcp_claims.values())
        hub._add_pack_servers()
        return hub._server_claims(hub.mcp_server_names())

    def generation(self) -> int:
        hub = self._hub
        mcp = hub._mcp
        return hub._mcp_changes + (mcp.generation if mcp is not None else 0)

    def problems(self) -> list[Problem]:
        mcp = self._hub._mcp
        return mcp.problems() if mcp is not None else []

    def live(self) -> bool:
        return bool(self._hub.mcp_server_names())
