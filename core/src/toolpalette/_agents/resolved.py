"""What a thinker class resolves to on a hub, and the hub as a bound thinker uses it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolpalette._agents.links import DeclaredLinks, linked_skills, requirement_problems, unmet
from toolpalette._agents.selector import ResolvedTools, ToolSelector, ToolSource
from toolpalette._plugins.catalog import distribution_summary
from toolpalette._search.bundles import Bundle
from toolpalette._search.search import CatalogIndexes

if TYPE_CHECKING:
    from toolpalette._agents.grants import GrantRecord
    from toolpalette._plugins.config import HubConfig
    from toolpalette._plugins.manager import ToolpaletteManager
    from toolpalette._plugins.problems import Problem
    from toolpalette._run.reports import Reporter
    from toolpalette._skills import Skill, SkillRegistry, SkillSelector
    from toolpalette._tools.provider import ToolProvider

__all__ = ["Declaring", "PaletteSource", "ResolvedPalette", "ThinkerHub", "resolve_palette"]


@dataclass
class ResolvedPalette:
    """What a thinker class resolves to, cached on the hub per class and hub version."""

    tools: ResolvedTools
    skills: tuple[Skill, ...]
    search: CatalogIndexes = field(default_factory=CatalogIndexes, compare=False, repr=False)
    """The search indexes of these catalogs, built on first use and shared by the
    class's thinkers (``search.py``)."""
    links: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    """The skills each of the class's tools names, by tool name (``links.py``)."""
    skill_bundles: tuple[Bundle, ...] = ()
    """The skilljars declared whole (``prefix(..., bundle=True)``): one entry each."""
    withheld: tuple[Problem, ...] = ()
    """The declared skills not offered, because what they require is not among the
    class's tools: one ``skill-requirement`` problem each."""


class PaletteSource(ToolSource, Protocol):
    """What a thinker class's declarations are resolved against: tools and skills."""

    def skills(self) -> SkillRegistry:
        """The registry skill selectors choose from."""
        ...


class Declaring(Protocol):
    """A thinker class, as far as resolving its declarations goes."""

    def declare_compatible_tools(self) -> ToolSelector:
        """The class's tool selector."""
        ...

    def declare_skills(self) -> SkillSelector:
        """The class's skill selector."""
        ...


class ThinkerHub(Protocol):
    """The hub as a bound thinker uses it (``toolpalette.ToolHub`` is one)."""

    @property
    def version(self) -> int:
        """Grows whenever a pack's tools join (the thinker's reconcile keys on it)."""
        ...

    @property
    def pm(self) -> ToolpaletteManager:
        """The plugin manager whose ``hook`` calls the host hooks."""
        ...

    @property
    def config(self) -> HubConfig:
        """The host's configuration (the worker pool's size, each pack's settings)."""
        ...

    def resolve_thinker(self, cls: Any) -> ResolvedPalette:
        """``cls``'s resolved tools and skills (cached by the hub)."""
        ...

    async def settle_servers(self, cls: Any) -> None:
        """Await the MCP listings ``cls``'s palette needs (``abegin_turn``)."""
        ...

    def system_tools(self) -> list[ToolProvider]:
        """The tools offered to every thinker of the hub."""
        ...

    def record_grant(self, record: GrantRecord) -> None:
        """Keep an admission decision on the hub's record."""
        ...

    def pack_config(self, pack: str) -> Mapping[str, Any]:
        """The host's settings for one pack."""
        ...

    def tool_error_reporters(self) -> Iterable[Reporter]:
        """The host's failure-report callbacks."""
        ...


def resolve_palette(
    source: PaletteSource, cls: Declaring, *, declared_links: DeclaredLinks | None = None
) -> ResolvedPalette:
    """Resolve ``cls``'s selectors against ``source`` (uncached; the hub caches per class).

    ``declared_links`` gives what each pack's hooks module links its tools to.
    """
    tools = cls.declare_compatible_tools().resolve(source)
    links: dict[str, tuple[str, ...]] = {}
    for provider in (*tools.offered, *tools.deferred):
        found = linked_skills(provider, declared_links)
        if found:
            links[provider.name] = found
    reachable = (*tools.offered, *tools.deferred, *_system_tools(source))
    declared_skills = cls.declare_skills()
    chosen = declared_skills.get_skills(source.skills())
    kept = [s for s in chosen if not unmet(s, reachable)]
    name = getattr(cls, "__qualname__", type(cls).__name__)
    withheld = requirement_problems(
        [s for s in chosen if s not in kept], reachable, f"among the tools of {name}"
    )
    # A skill some tool of the class names comes first: search_skills and request_skill
    # list it before the others that match as well.
    named = {skill_id for found in links.values() for skill_id in found}
    kept.sort(key=lambda s: s.id not in named)
    jars = _jars(declared_skills.jars(source.skills()), kept)
    return ResolvedPalette(
        tools, tuple(kept), links=links, skill_bundles=jars, withheld=tuple(withheld)
    )


def _jars(declared: Mapping[str, list[str]], kept: list[Skill]) -> tuple[Bundle, ...]:
    """The skilljars kept whole, each with its skills that are offered."""
    by_id = {s.id: s for s in kept}
    jars = []
    for jar, ids in declared.items():
        members = [by_id[i] for i in ids if i in by_id]
        if not members:
            continue
        summary = distribution_summary(members[0].distribution)
        names = ", ".join(s.name for s in members)
        description = " ".join(summary.split()) if summary else f"Skills of {jar}: {names}."
        jars.append(Bundle(jar, description, tuple(s.id for s in members), f"skilljar:{jar}"))
    return tuple(jars)


def _system_tools(source: Any) -> list[ToolProvider]:
    tools = getattr(source, "system_tools", None)
    return list(tools()) if callable(tools) else []
