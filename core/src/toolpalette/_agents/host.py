"""The host side of a hub: skills, MCP server descriptions, system-wide tools, thinkers, grants."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, final

from toolpalette._agents.content import OfferedContent
from toolpalette._agents.grants import GrantLog, GrantRecord
from toolpalette._agents.selector import ResolvedTools, ToolSelector
from toolpalette._agents.thinker import ResolvedPalette, Thinker, resolve_palette
from toolpalette._hookcall import call_each, in_call_order
from toolpalette._mcp_client import servers as _mcp
from toolpalette._plugins import collect as _collect
from toolpalette._plugins.catalog import PackCatalog
from toolpalette._plugins.content import Content, PackContent
from toolpalette._plugins.discovery import SKILLJAR_GROUP, discover
from toolpalette._plugins.listing import Listing
from toolpalette._plugins.packs import Pack
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.servers import MCPServerSpec, parse_server
from toolpalette._run.reports import Reporter
from toolpalette._skills import SkillRegistry
from toolpalette._tools.origin import distribution_label
from toolpalette._tools.provider import ToolProvider, as_provider
from toolpalette._tools.registry import ToolRegistry
from toolpalette.errors import ToolCollisionError

__all__ = ["Host"]

logger = logging.getLogger("toolpalette.hub")


@final
class Host:
    """What a host does with a hub's packs: bind thinkers, add system-wide tools, read grants.

    Args:
        catalog: The packs it draws tools, skills and server descriptions from.

    All methods are thread-safe.
    """

    def __init__(self, catalog: PackCatalog, *, mcp_servers: Any = None) -> None:
        self._catalog = catalog
        self._lock = threading.RLock()
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
        catalog.attach(_ServerClaims(self))
        self._content = PackContent(catalog)
        self._content_asked = False

    # -- skills ----------------------------------------------------------------------

    def skills(self) -> SkillRegistry:
        """The SkillRegistry: every installed skilljar (opened lazily) and code-built skills.

        Skills built in code (``toolpalette_register_skills``) join from the packs
        imported so far; the full catalog imports them all. Each MCP server's skills
        (the Skills extension) join under ``mcp.NAME``, listed when first asked for.
        """
        servers = self.mcp()  # before the host's lock: it takes the catalog's
        with self._lock:
            if self._skills is None:
                jars = discover(SKILLJAR_GROUP) if self._catalog.autoload else []
                self._skills = SkillRegistry.from_entry_points(jars)
            for pack in self._catalog.loaded_packs():
                if pack not in self._skill_packs:
                    self._skill_packs.add(pack)
                    self._collect_skills(pack, self._skills)
            for name in servers.names():
                _mcp.add_server_skills(servers, name, self._skills)
            return self._skills

    def problems(self) -> list[Problem]:
        """The host side's problems so far.

        Configuration keys nothing reads, skills (once used), what the skill hooks
        raised, MCP server descriptions, and the packs' prompts and resources (once
        asked for).
        """
        with self._lock:
            found = [
                *self._catalog.config.problems,
                *self._server_problems,
                *self._withheld.values(),
                *self._hook_problems,
            ]
            if self._skills is not None:
                found.extend(self._skills.problems())
            asked = self._content_asked
        if asked:
            found.extend(self._content.content().problems)
        return found

    # -- prompts and resources ---------------------------------------------------------

    def content(self) -> Content:
        """Every pack's prompts and resources (imports every pack)."""
        self._content_asked = True
        return self._content.content()

    def content_for(self, cls: type[Thinker]) -> OfferedContent:
        """The prompts and resources ``cls`` declares (read-only ones for a read-only class)."""
        selector = cls.declare_content()
        if not selector:
            return OfferedContent()
        return selector.resolve(self.content(), read_only=bool(cls.read_only))

    def _collect_skills(self, pack: str, registry: SkillRegistry) -> None:
        origin = self._catalog.origin_of(pack)
        found, problems = _collect.registered(
            self._catalog.pm, "toolpalette_register_skills", pack, origin
        )
        self._hook_problems.extend(problems)
        items = [item for _impl, _position, item in found]
        registry.add_skills(
            items, pack=pack, distribution=origin.distribution, version=origin.version
        )

    # -- MCP servers -------------------------------------------------------------------

    def mcp_servers(self) -> list[MCPServerSpec]:
        """The MCP servers installed packs describe, checked, sorted by name.

        Imports every pack (like the full catalog). A description of the wrong shape, or
        a name two packs use, is recorded in the problems and left out.
        """
        self._catalog.registry()
        return self.pack_servers()

    def pack_servers(self) -> list[MCPServerSpec]:
        """The servers the packs loaded so far describe, collected once (imports nothing)."""
        with self._lock:
            if self._servers is None:
                self._servers = self._collect_servers(self._server_problems)
            return list(self._servers)

    def _collect_servers(self, problems: list[Problem]) -> list[MCPServerSpec]:
        claims: dict[str, list[MCPServerSpec]] = {}
        hook = "toolpalette_register_mcp_servers"
        for pack in self._catalog.loaded_packs():
            origin = self._catalog.origin_of(pack)
            label = distribution_label(origin.distribution, origin.version)
            found, hook_problems = _collect.registered(self._catalog.pm, hook, pack, origin)
            problems.extend(hook_problems)
            for _impl, _position, item in found:
                try:
                    spec = parse_server(item, pack)
                except ValueError as invalid:
                    problems.append(Problem("garbage", str(invalid), pack, label))
                    continue
                claims.setdefault(spec.name, []).append(spec)
        for name, specs in claims.items():
            if len(specs) > 1:  # like tools: neither is used, whatever the load order
                packs = ", ".join(sorted(s.pack for s in specs))
                reason = f"MCP server name {name!r} is described by several packs: {packs}"
                problems.append(Problem("collision", reason, specs[0].pack, None, name))
        return [specs[0] for name, specs in sorted(claims.items()) if len(specs) == 1]

    # -- MCP servers' tools (the client side) -----------------------------------------

    def mcp(self) -> _mcp.MCPServers:
        """The MCP servers of the host's configuration and code (packs' join with the catalog)."""
        with self._catalog.lock:
            if self._mcp is None:
                config = self._catalog.config
                self._mcp = _mcp.assemble(
                    config.mcp_servers,
                    json_file=config.mcp_json,
                    code=self._mcp_code,
                    source=config.source,
                    switches=self._catalog.switches,
                )
            return self._mcp

    def mcp_server_names(self) -> list[str]:
        """Every MCP server's name: the host's, and the packs' once the catalog was built."""
        return self.mcp().names()

    def providers_for_server(self, name: str) -> list[ToolProvider]:
        """The tools of MCP server ``name``, starting it if needed; [] when it cannot be used.

        Raises:
            KeyError: no server of that name is configured (the message lists those that are).
        """
        with self._catalog.lock:
            names = self.mcp_server_names()
            if name not in names:
                self._add_pack_servers()
                names = self.mcp_server_names()
            if name not in names:
                known = ", ".join(names) or "none"
                raise KeyError(f"no MCP server named {name!r} is configured (servers: {known})")
            return self._catalog.offered(self._server_claims([name]))

    def close(self) -> None:
        """Stop every MCP server this host started and end its connections. Idempotent."""
        mcp = self._mcp
        if mcp is not None:
            mcp.close()

    def _add_pack_servers(self) -> None:
        """Import every pack, and add the MCP servers they describe (once)."""
        self._catalog.load_all()
        _mcp.add_pack_servers(self.mcp(), self.pack_servers())

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
                    config, self._catalog.config.source
                )
            if claim.providers != providers:
                claim.providers = providers
                self._mcp_changes += 1
            claims.append(claim)
        return claims

    # -- system-wide tools -----------------------------------------------------------

    def register_system_tool(self, obj: object) -> ToolProvider:
        """Offer a tool to every thinker bound to the hub (before its declared tools).

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

    # -- selecting tools (a ToolSource for selectors) --------------------------------

    def resolve(self, selector: ToolSelector) -> ResolvedTools:
        """Turn a ToolSelector into providers, importing only the packs it names."""
        return selector.resolve(self)

    def providers_for_package(self, import_name: str) -> list[ToolProvider]:
        """The catalog's tools of the packs in import package ``import_name``."""
        return self._catalog.providers_for_package(import_name)

    def providers_for_distribution(self, dist_name: str) -> list[ToolProvider]:
        """The catalog's tools of the packs shipped by distribution ``dist_name``."""
        return self._catalog.providers_for_distribution(dist_name)

    def providers_for_pack(self, pack_name: str) -> list[ToolProvider]:
        """The catalog's tools of the pack named ``pack_name``."""
        return self._catalog.providers_for_pack(pack_name)

    def declared_links(self, pack: str) -> Mapping[str, tuple[str, ...]]:
        """The skills a pack's hooks module names for its tools (``TOOLPALETTE_SKILLS``)."""
        return self._catalog.declared_links(pack)

    def bundle_description(self, kind: str, target: str) -> str | None:
        """What a bundle entry's packs say they are (``PackCatalog.bundle_description``)."""
        return self._catalog.bundle_description(kind, target)

    def listing(self) -> Listing:
        """The catalog's listing (read from the cache when it is fresh)."""
        return self._catalog.listing()

    def catalog(self) -> ToolRegistry:
        """The catalog's registry of every available tool."""
        return self._catalog.registry()

    def collision(self, name: str) -> ToolCollisionError | None:
        """The collision that keeps tool ``name`` out of the catalog, or None."""
        return self._catalog.collision(name)

    def known_provider(self, provider: ToolProvider) -> ToolProvider:
        """The loaded pack's own provider of ``provider``'s tool, else ``provider`` itself.

        The pack's provider carries its origin and the host's rename. It is looked up
        among the packs loaded so far, whether or not the full catalog was built:
        without the origin, a pack's tool selected by object would run without the
        host's configuration for its pack.
        """
        for known in self._known_index().get(_identity(provider), ()):
            if known == provider or getattr(known, "inner", None) == provider:
                return known
        return provider

    def _known_index(self) -> dict[int, list[ToolProvider]]:
        """The loaded packs' providers by the object they wrap, rebuilt when the catalog moves."""
        with self._lock:
            version = self._catalog.version
            if self._known is None or self._known[0] != version:
                index: dict[int, list[ToolProvider]] = {}
                for known in self._catalog.loaded_providers():
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
                palette = resolve_palette(self, cls)
            # Resolving may import packs and open jars (moving the versions): key on the result.
            self._palettes[cls] = (self._palette_key(), palette)
            for problem in palette.withheld:
                self._withheld[f"{problem.item}\0{problem.reason}"] = problem
            self._servers_of[cls] = frozenset(servers)
            return palette

    async def settle_servers(self, cls: type[Thinker]) -> None:
        """Await the listings in flight or due of the MCP servers ``cls``'s palette uses."""
        with self._lock:
            names = self._servers_of.get(cls, frozenset())
        mcp = self._mcp
        if names and mcp is not None:
            await mcp.settle(names)

    def _palette_key(self) -> tuple[int, int, int]:
        skills = self._skills.version if self._skills is not None else -1
        return (self._catalog.version, self._system.version, skills)

    # -- records and reports -----------------------------------------------------------

    def record_grant(self, record: GrantRecord) -> None:
        """Keep ``record`` and deliver it to every ``toolpalette_grant`` implementation."""
        self._grants.add(record)
        impls = in_call_order(self._catalog.pm.hook.toolpalette_grant)
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
        """Give ``callback`` every failure report of calls made by the hub's thinkers.

        Returns a function that removes it.
        """
        reporters = self._on_tool_error
        reporters.append(callback)
        return lambda: reporters.remove(callback) if callback in reporters else None

    def tool_error_reporters(self) -> Iterable[Reporter]:
        """The callbacks registered with `on_tool_error()`."""
        return tuple(self._on_tool_error)


def _identity(provider: object) -> int:
    """What equal providers share: the wrapped function or class, else the provider itself."""
    wrapped = getattr(provider, "function", None) or getattr(provider, "tool_class", None)
    return id(wrapped if wrapped is not None else provider)


class _ServerClaims:
    """The host's MCP servers as the pack catalog sees them: claims on tool names."""

    def __init__(self, host: Host) -> None:
        self._host = host

    def claims(self, *, gather: bool) -> list[Pack]:
        host = self._host
        if not gather:
            return list(host._mcp_claims.values())
        host._add_pack_servers()
        return host._server_claims(host.mcp_server_names())

    def generation(self) -> int:
        host = self._host
        mcp = host._mcp
        return host._mcp_changes + (mcp.generation if mcp is not None else 0)

    def problems(self) -> list[Problem]:
        mcp = self._host._mcp
        return mcp.problems() if mcp is not None else []

    def live(self) -> bool:
        return bool(self._host.mcp_server_names())
