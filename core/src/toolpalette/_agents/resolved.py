"""What a thinker class resolves to on a hub, and the hub as a bound thinker uses it.

A thinker class declares its tools and skills (``declare_compatible_tools``,
``declare_skills``); :func:`resolve_palette` resolves them against a hub, which caches
the :class:`ResolvedPalette` per class until it changes. :class:`ThinkerHub` is the
hub's side of a bound thinker, typed here, below the hub, so the agents layer never
imports the hub's module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolpalette._agents.selector import ResolvedTools, ToolSelector, ToolSource
from toolpalette._search.search import CatalogIndexes

if TYPE_CHECKING:
    from toolpalette._agents.grants import GrantRecord
    from toolpalette._plugins.config import HubConfig
    from toolpalette._plugins.manager import ToolpaletteManager
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


def resolve_palette(source: PaletteSource, cls: Declaring) -> ResolvedPalette:
    """Resolve ``cls``'s selectors against ``source`` (uncached; the hub caches per class)."""
    tools = cls.declare_compatible_tools().resolve(source)
    skills = tuple(cls.declare_skills().get_skills(source.skills()))
    return ResolvedPalette(tools, skills)
