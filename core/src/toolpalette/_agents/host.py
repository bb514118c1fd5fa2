"""The host-facing half of ToolHub: skills, system-wide tools, thinkers and the grant record.

Kept apart from discovery (``_hub``) so each module has one purpose; ``ToolHub``
inherits it. Its state is created on first use, so the discovery side builds as cheaply
as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from toolpalette._agents.grants import GrantLog, GrantRecord
from toolpalette._agents.selector import ResolvedTools, ToolSelector
from toolpalette._plugins import collect as _collect
from toolpalette._plugins.discovery import SKILLJAR_GROUP, discover, env_names
from toolpalette._plugins.problems import Problem
from toolpalette._plugins.servers import MCPServerSpec, parse_server
from toolpalette._run.reports import Reporter
from toolpalette._skills import Conversation, SkillRegistry
from toolpalette._tools.provider import ToolProvider, as_provider
from toolpalette._tools.registry import ToolRegistry

if TYPE_CHECKING:
    from toolpalette._agents.thinker import Thinker, _Palette
    from toolpalette._plugins.manager import ToolpaletteManager

__all__ = ["HostSide"]

logger = logging.getLogger("toolpalette.hub")

T = TypeVar("T", bound="Thinker")


@dataclass
class _HostState:
    lock: threading.RLock = field(default_factory=threading.RLock)
    system: ToolRegistry = field(default_factory=ToolRegistry)
    skills: SkillRegistry | None = None
    skill_packs: set[str] = field(default_factory=set)
    palettes: dict[type[Any], tuple[tuple[int, int, int], _Palette]] = field(default_factory=dict)
    grants: GrantLog = field(default_factory=GrantLog)
    on_tool_error: list[Reporter] = field(default_factory=list)
    known: tuple[int, dict[int, list[ToolProvider]]] | None = None
    servers: list[MCPServerSpec] | None = None
    server_problems: list[Problem] = field(default_factory=list)


class HostSide:
    """What a host does with a hub: bind thinkers, register system-wide tools, read grants."""

    pm: ToolpaletteManager
    autoload: bool

    @property
    def version(self) -> int:  # provided by ToolHub
        raise NotImplementedError

    def loaded_packs(self) -> list[str]:  # provided by ToolHub
        raise NotImplementedError

    def catalog(self, *, strict: bool = False) -> ToolRegistry:  # provided by ToolHub
        raise NotImplementedError

    def _state(self) -> _HostState:
        state: _HostState | None = self.__dict__.get("_host_state")
        if state is None:
            state = self.__dict__.setdefault("_host_state", _HostState())
        return state

    # -- skills ----------------------------------------------------------------------

    def skills(self) -> SkillRegistry:
        """The SkillRegistry: every installed skilljar (opened lazily) and code-built skills.

        Skills built in code (``toolpalette_register_skills``) join from the packs
        imported so far; ``hub.catalog()`` imports them all.
        """
        state = self._state()
        with state.lock:
            if state.skills is None:
                jars = discover(SKILLJAR_GROUP) if self._jars_enabled() else []
                state.skills = SkillRegistry.from_entry_points(jars)
            for pack in self.loaded_packs():
                if pack not in state.skill_packs:
                    state.skill_packs.add(pack)
                    self._collect_skills(pack, state.skills)
            return state.skills

    def _skill_problems(self) -> list[Problem]:
        """The host side's problems so far: skills (once used) and MCP server descriptions."""
        state = self._state()
        found = list(state.server_problems)
        if state.skills is not None:
            found.extend(state.skills.problems())
        return found

    def _jars_enabled(self) -> bool:
        return self.autoload and not (
            env_names("TOOLPALETTE_PLUGINS") is None
            and env_names("TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD")
        )

    def _collect_skills(self, pack: str, registry: SkillRegistry) -> None:
        distribution, version = self._distribution_of(pack)
        for _impl, result, exc in _collect.call_each(self.pm, "toolpalette_register_skills", pack):
            if exc is not None:
                reason = _collect.describe_exception(exc)
                logger.warning("toolpalette_register_skills of %s raised %s", pack, reason)
                continue
            items, _error = _collect.items_of(result)
            registry.add_skills(items, pack=pack, distribution=distribution, version=version)

    def _distribution_of(self, pack: str) -> tuple[str | None, str | None]:  # by ToolHub
        raise NotImplementedError

    # -- MCP servers -------------------------------------------------------------------

    def mcp_servers(self) -> list[MCPServerSpec]:
        """The MCP servers installed packs describe, checked, sorted by name.

        Imports every pack (like ``catalog()``). A description of the wrong shape, or a
        name two packs use, is recorded in ``hub.problems()`` and left out.
        """
        self.catalog()
        return self._pack_servers()

    def _pack_servers(self) -> list[MCPServerSpec]:
        """The servers the loaded packs describe, collected once (imports nothing)."""
        state = self._state()
        with state.lock:
            if state.servers is None:
                state.servers = self._collect_servers(state.server_problems)
            return list(state.servers)

    def _collect_servers(self, problems: list[Problem]) -> list[MCPServerSpec]:
        claims: dict[str, list[MCPServerSpec]] = {}
        hook = "toolpalette_register_mcp_servers"
        for pack in self.loaded_packs():
            dist, version = self._distribution_of(pack)
            label = f"{dist} {version}" if dist else None
            for _impl, result, exc in _collect.call_each(self.pm, hook, pack):
                items, error = _collect.items_of(result) if exc is None else ([], exc)
                if error is not None:
                    reason = f"{hook} raised {_collect.describe_exception(error)}"
                    problems.append(Problem("hook", reason, pack, label))
                for item in items:
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

    # -- system-wide tools -----------------------------------------------------------

    def register_system_tool(self, obj: object) -> ToolProvider:
        """Offer a tool to every thinker bound to this hub (before its declared tools).

        Raises:
            ToolCollisionError: another provider already holds the name.
        """
        state = self._state()
        provider = as_provider(obj)
        with state.lock:
            registered = state.system.register(provider)
            state.palettes.clear()
        assert registered is not None
        return registered

    def system_tools(self) -> list[ToolProvider]:
        """The system-wide tools, in registration order."""
        return self._state().system.providers()

    # -- thinkers --------------------------------------------------------------------

    def resolve(self, selector: ToolSelector) -> ResolvedTools:
        """Turn a ToolSelector into providers, importing only the packs it names."""
        return selector.resolve(self)  # type: ignore[arg-type]

    def known_provider(self, provider: ToolProvider) -> ToolProvider:
        """The loaded pack's own provider of ``provider``'s tool, else ``provider`` itself.

        The pack's provider carries its origin and the host's rename. It is looked up
        among the packs loaded so far, whether or not ``catalog()`` was built: without
        the origin, a pack's tool selected by object would run without the host's
        configuration for its pack.
        """
        for known in self._known_index().get(_identity(provider), ()):
            if known == provider or getattr(known, "inner", None) == provider:
                return known
        return provider

    def _known_index(self) -> dict[int, list[ToolProvider]]:
        """The loaded packs' providers by the object they wrap, rebuilt when the hub moves."""
        state = self._state()
        with state.lock:
            if state.known is None or state.known[0] != self.version:
                index: dict[int, list[ToolProvider]] = {}
                for known in self._loaded_providers():
                    inner = getattr(known, "inner", None)
                    index.setdefault(_identity(inner or known), []).append(known)
                state.known = (self.version, index)
            return state.known[1]

    def _loaded_providers(self) -> list[ToolProvider]:  # provided by ToolHub
        raise NotImplementedError

    def resolve_thinker(self, cls: type[Thinker]) -> _Palette:
        """``cls``'s tools and skills, resolved once and cached until the hub changes."""
        from toolpalette._agents.thinker import resolve_palette

        state = self._state()
        with state.lock:
            cached = state.palettes.get(cls)
            if cached is not None and cached[0] == self._palette_key(state):
                return cached[1]
            palette = resolve_palette(self, cls)  # type: ignore[arg-type]
            # Resolving may import packs and open jars (moving the versions): key on the result.
            state.palettes[cls] = (self._palette_key(state), palette)
            return palette

    def _palette_key(self, state: _HostState) -> tuple[int, int, int]:
        skills = state.skills.version if state.skills is not None else -1
        return (self.version, state.system.version, skills)

    def bind(self, cls: type[T], conversation: Conversation | None = None, **options: Any) -> T:
        """A thinker of class ``cls`` bound to this hub and ``conversation``.

        ``options`` go to the thinker (``policy``, ``run_id``, ``user``, ``approver``).
        The read-only binding is latched here. Selectors are resolved now, so a
        declaration error surfaces at bind time rather than mid-run.
        """
        self.resolve_thinker(cls)
        return cls(self, conversation, **options)  # type: ignore[arg-type]

    # -- records and reports -----------------------------------------------------------

    def record_grant(self, record: GrantRecord) -> None:
        """Keep ``record`` and deliver it to every ``toolpalette_grant`` implementation."""
        self._state().grants.add(record)
        for impl in reversed(self.pm.hook.toolpalette_grant.get_hookimpls()):
            try:
                impl.function(**({"record": record} if impl.argnames else {}))
            except Exception:
                logger.exception("toolpalette_grant in %s raised; ignored", impl.plugin_name)

    def grants(self) -> list[GrantRecord]:
        """Every admission request decided so far, oldest first."""
        return self._state().grants.records()

    def on_tool_error(self, callback: Reporter) -> Callable[[], None]:
        """Give ``callback`` every failure report of calls made by thinkers of this hub.

        Returns a function that removes it.
        """
        reporters = self._state().on_tool_error
        reporters.append(callback)
        return lambda: reporters.remove(callback) if callback in reporters else None

    def tool_error_reporters(self) -> Iterable[Reporter]:
        """The callbacks registered with :meth:`on_tool_error`."""
        return tuple(self._state().on_tool_error)


def _identity(provider: object) -> int:
    """What equal providers share: the wrapped function or class, else the provider itself."""
    wrapped = getattr(provider, "function", None) or getattr(provider, "tool_class", None)
    return id(wrapped if wrapped is not None else provider)
