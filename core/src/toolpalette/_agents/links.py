"""What goes together: the skills a tool names, and the tools (or packs) a skill requires."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from toolpalette._plugins.problems import Problem
from toolpalette._tools.tool import SKILLS_KEY

if TYPE_CHECKING:
    from toolpalette._skills import Skill
    from toolpalette._tools.provider import ToolProvider

__all__ = [
    "PACK_PREFIX",
    "DeclaredLinks",
    "link_problems",
    "link_text",
    "linked_skills",
    "requirement_problems",
    "required_tools",
    "unmet",
]

PACK_PREFIX: Final = "pack:"
"""A requirement naming a pack (``pack:sqlite``) rather than one tool."""

DeclaredLinks = Callable[[str], Mapping[str, tuple[str, ...]]]
"""A pack's name to what its hooks module links (``PackCatalog.declared_links``)."""


def linked_skills(provider: ToolProvider, declared: DeclaredLinks | None = None) -> tuple[str, ...]:
    """The full ids of the skills ``provider`` names, its own first, then its pack's."""
    found: list[str] = []
    metadata = getattr(provider, "metadata", None)
    text = metadata.get(SKILLS_KEY) if isinstance(metadata, Mapping) else None
    if isinstance(text, str):
        found.extend(text.split())
    origin = getattr(provider, "origin", None)
    pack = getattr(origin, "pack", None)
    if declared is not None and isinstance(pack, str):
        links = declared(pack)
        inner = getattr(provider, "inner", None)
        for name in (provider.name, getattr(inner, "name", None)):
            if isinstance(name, str):
                found.extend(links.get(name, ()))
    return tuple(dict.fromkeys(found))


def _pack_of(provider: Any) -> str | None:
    pack = getattr(getattr(provider, "origin", None), "pack", None)
    return pack if isinstance(pack, str) else None


def unmet(skill: Skill, tools: Iterable[ToolProvider]) -> list[str]:
    """The requirements of ``skill`` that none of ``tools`` meets, in its order."""
    names: set[str] = set()
    packs: set[str] = set()
    for provider in tools:
        names.add(provider.name)
        pack = _pack_of(provider)
        if pack is not None:
            packs.add(pack)
    missing = []
    for need in skill.requires:
        if need.startswith(PACK_PREFIX):
            if need[len(PACK_PREFIX) :] not in packs:
                missing.append(need)
        elif need not in names:
            missing.append(need)
    return missing


def required_tools(skill: Skill, catalog: Mapping[str, ToolProvider]) -> list[ToolProvider]:
    """The tools of ``catalog`` that ``skill``'s requirements name (a pack's: all of it)."""
    wanted = skill.requires
    if not wanted:
        return []
    packs = {n[len(PACK_PREFIX) :] for n in wanted if n.startswith(PACK_PREFIX)}
    found = [catalog[n] for n in wanted if n in catalog]
    if packs:
        found.extend(p for p in catalog.values() if _pack_of(p) in packs)
    return list({p.name: p for p in found}.values())


def requirement_problems(
    skills: Iterable[Skill], tools: Collection[ToolProvider], where: str = "installed"
) -> list[Problem]:
    """A ``skill-requirement`` problem for each skill whose requirements ``tools`` miss."""
    problems = []
    for skill in skills:
        missing = unmet(skill, tools)
        if missing:
            reason = (
                f"requires {', '.join(missing)}, not {where}; the skill is not offered "
                "where its requirements are missing"
            )
            problems.append(Problem("skill-requirement", reason, skill.bundle, None, skill.id))
    return problems


def link_problems(
    tools: Iterable[ToolProvider],
    installed: Collection[str],
    linked: Callable[[ToolProvider], Iterable[str]],
) -> list[Problem]:
    """A ``skill-link`` problem for each skill a tool names (``linked``) not ``installed``."""
    problems = []
    for provider in tools:
        for skill_id in linked(provider):
            if skill_id not in installed:
                reason = f"names the skill {skill_id}, which is not installed"
                pack = _pack_of(provider)
                problems.append(Problem("skill-link", reason, pack, None, provider.name))
    return problems


def link_text(skills: Iterable[str], *, searches: bool) -> str:
    """The preamble's line for a tool's skills the model may still ask for."""
    listed = ", ".join(skills)
    how = "search_skills" if searches else "request_skill"
    return f"Skills for this tool (ask with {how}): {listed}."
