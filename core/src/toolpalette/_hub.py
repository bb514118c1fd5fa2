"""``ToolHub``: the process-wide entry, a facade over the pack catalog and the host side."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, final

from toolpalette._agents.content import OfferedContent
from toolpalette._agents.grants import GrantRecord
from toolpalette._agents.host import Host
from toolpalette._agents.links import linked_skills
from toolpalette._agents.selector import ResolvedTools, ToolSelector
from toolpalette._agents.thinker import ResolvedPalette, Thinker
from toolpalette._mcp_client.servers import MCPServers
from toolpalette._plugins.catalog import PackCatalog, PluginInfo, problem_key
from toolpalette._plugins.config import ConfigSource, HubConfig, load_config
from toolpalette._plugins.listing import Listing
from toolpalette._plugins.manager import ToolpaletteManager
from toolpalette._plugins.packs import PackStatus
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.servers import MCPServerSpec
from toolpalette._plugins.switches import Switches
from toolpalette._run.reports import Reporter
from toolpalette._skills import Conversation, SkillRegistry
from toolpalette._tools.prompt import PackPrompt
from toolpalette._tools.provider import ToolProvider
from toolpalette._tools.registry import ToolRegistry
from toolpalette._tools.resource import PackResource
from toolpalette.errors import ToolCollisionError

__all__ = ["PackStatus", "PluginInfo", "ToolHub"]

T = TypeVar("T", bound=Thinker)


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
        self._host = Host(self._packs, mcp_servers=mcp_servers)

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
        return linked_skills(provider, self._host.declared_links)

    def bundle_description(self, kind: str, target: str) -> str | None:
        """What a selector's bundle of ``kind`` (package, distribution) ``target`` says it is.

        The ``TOOLPALETTE_BUNDLE`` text of its first pack's hooks module that has one,
        else its distribution's summary; None otherwise (the bundle then lists its tools).
        """
        return self._host.bundle_description(kind, target)

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
        return sorted([*self._packs.problems(), *self._host.problems()], key=problem_key)

    def plugins(self, *, load: bool = False) -> list[PluginInfo]:
        """Every pack the hub knows, sorted by name; ``load`` imports them all first."""
        return self._packs.plugins(load=load)

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The host's settings for ``pack`` (``[tool.toolpalette.packs.<pack>]``), read-only."""
        return self._packs.pack_config(pack)

    # -- the host side ---------------------------------------------------------------

    def skills(self) -> SkillRegistry:
        """The SkillRegistry: every installed skilljar (opened lazily) and code-built skills.

        Skills built in code (``toolpalette_register_skills``) join from the packs
        imported so far; ``hub.catalog()`` imports them all.
        """
        return self._host.skills()

    def prompts(self) -> list[PackPrompt]:
        """Every prompt the packs ship (``toolpalette_register_prompts``), by name.

        Imports every pack (like ``catalog()``); a broken one is in ``hub.problems()``.
        """
        found = self._host.content().prompts
        return [found[name] for name in sorted(found)]

    def resources(self) -> list[PackResource]:
        """Every resource and resource template the packs ship, by URI.

        Imports every pack (like ``catalog()``); a broken one is in ``hub.problems()``.
        """
        found = self._host.content().resources
        return [found[uri] for uri in sorted(found)]

    def content_for(self, thinker: type[Thinker]) -> OfferedContent:
        """The prompts and resources a thinker class declares (``declare_content``)."""
        return self._host.content_for(thinker)

    def mcp_servers(self) -> list[MCPServerSpec]:
        """The MCP servers installed packs describe, checked, sorted by name.

        Imports every pack (like ``catalog()``). A description of the wrong shape, or a
        name two packs use, is recorded in ``hub.problems()`` and left out.
        """
        return self._host.mcp_servers()

    def mcp(self) -> MCPServers:
        """The MCP servers of the host's configuration and code (packs' join with the catalog)."""
        return self._host.mcp()

    def mcp_server_names(self) -> list[str]:
        """Every MCP server's name: the host's, and the packs' once ``catalog()`` ran."""
        return self._host.mcp_server_names()

    def providers_for_server(self, name: str) -> list[ToolProvider]:
        """The tools of MCP server ``name``, starting it if needed; [] when it cannot be used.

        Raises:
            KeyError: no server of that name is configured (the message lists those that are).
        """
        return self._host.providers_for_server(name)

    def close(self) -> None:
        """Stop every MCP server this hub started and end its connections. Idempotent.

        The servers' tools then answer 503. Interpreter exit closes open hubs' servers too.
        """
        self._host.close()

    def __enter__(self) -> ToolHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def register_system_tool(self, obj: object) -> ToolProvider:
        """Offer a tool to every thinker bound to this hub (before its declared tools).

        Raises:
            ToolCollisionError: another provider already holds the name.
        """
        return self._host.register_system_tool(obj)

    def system_tools(self) -> list[ToolProvider]:
        """The system-wide tools, in registration order."""
        return self._host.system_tools()

    def resolve(self, selector: ToolSelector) -> ResolvedTools:
        """Turn a ToolSelector into providers, importing only the packs it names."""
        return self._host.resolve(selector)

    def known_provider(self, provider: ToolProvider) -> ToolProvider:
        """The loaded pack's own provider of ``provider``'s tool, else ``provider`` itself.

        The pack's provider carries its origin and the host's rename, so a pack's tool
        selected by object runs with the host's configuration for its pack.
        """
        return self._host.known_provider(provider)

    def resolve_thinker(self, cls: type[Thinker]) -> ResolvedPalette:
        """``cls``'s tools and skills, resolved once and cached until the hub changes."""
        return self._host.resolve_thinker(cls)

    async def settle_servers(self, cls: type[Thinker]) -> None:
        """Await the MCP listings ``cls``'s palette needs, without blocking the event loop.

        A listing in flight or due (a server said its list changed, its ``ttlMs`` ran
        out) of each server the class's palette was last resolved from, each within its
        deadline. ``thinker.abegin_turn()`` calls it before reconciling.
        """
        await self._host.settle_servers(cls)

    def bind(self, cls: type[T], conversation: Conversation | None = None, **options: Any) -> T:
        """A thinker of class ``cls`` bound to this hub and ``conversation``.

        ``options`` go to the thinker (``policy``, ``run_id``, ``user``, ``approver``,
        ``keep_grants``: False for stateless serving, where admissions are decided,
        recorded and answered but nothing is kept). The read-only binding is latched
        here. Selectors are resolved now, so a declaration error surfaces at bind time
        rather than mid-run.
        """
        self._host.resolve_thinker(cls)
        return cls(self, conversation, **options)

    def record_grant(self, record: GrantRecord) -> None:
        """Keep ``record`` and deliver it to every ``toolpalette_grant`` implementation."""
        self._host.record_grant(record)

    def grants(self) -> list[GrantRecord]:
        """The newest admission requests decided (at most 10,000), oldest first.

        Every decision also reaches the ``toolpalette_grant`` hook: an audit log keeps
        them all there.
        """
        return self._host.grants()

    def on_tool_error(self, callback: Reporter) -> Callable[[], None]:
        """Give ``callback`` every failure report of calls made by thinkers of this hub.

        Returns a function that removes it.
        """
        return self._host.on_tool_error(callback)

    def tool_error_reporters(self) -> Iterable[Reporter]:
        """The callbacks registered with [`on_tool_error()`][toolpalette.ToolHub.on_tool_error]."""
        return self._host.tool_error_reporters()

    def __repr__(self) -> str:
        loaded = len(self._packs.loaded_packs())
        total = self._packs.pack_count()
        return f"<ToolHub {loaded}/{total} packs loaded, version {self._packs.version}>"
