"""``SkillSelector``: which skills a thinker declares, resolved only when asked."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from toolpalette._skills.registry import SkillRegistry
    from toolpalette._skills.skill import Skill

__all__ = ["SkillSelector"]

logger = logging.getLogger("toolpalette.skills")


@dataclass(frozen=True)
class _Entry:
    kind: Literal["skill", "prefix", "all"]
    value: str = ""
    bundle: bool = False


class SkillSelector:
    """Skills by exact id, by bundle-id prefix, or everything; chainable.

    Nothing is looked up when the selector is built: a thinker class declares it at
    import time, before any jar is installed or opened.
    [`get_skills()`][toolpalette.SkillSelector.get_skills] resolves it against a
    registry; a declared id or prefix the registry does not hold is logged
    (``toolpalette.skills`` logger, warning level) and skipped, never raised.

    Example::

        SkillSelector().prefix("io.toolpalette").skill("io.example.ops/deploy")
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[_Entry] = []

    def skill(self, full_id: str) -> SkillSelector:
        """Select one skill by its full id, ``<bundle-id>/<name>``."""
        self._entries.append(_Entry("skill", full_id))
        return self

    def prefix(self, bundle_prefix: str, *, bundle: bool = False) -> SkillSelector:
        """Select every skill of the bundles under ``bundle_prefix`` (on dot boundaries).

        ``bundle=True`` keeps each skilljar (each bundle id) whole: the model sees one
        entry per jar, and asking for it attaches all of its skills.

        Raises:
            ValueError: The prefix is empty (use [`all()`][toolpalette.SkillSelector.all]).
        """
        if not bundle_prefix.strip("."):
            raise ValueError("a bundle prefix must not be empty; use SkillSelector().all()")
        self._entries.append(_Entry("prefix", bundle_prefix, bool(bundle)))
        return self

    def all(self) -> SkillSelector:
        """Select every skill the registry holds."""
        self._entries.append(_Entry("all"))
        return self

    def get_skills(self, skill_registry: SkillRegistry) -> list[Skill]:
        """The selected skills: in declaration order, each prefix sorted by id, no repeats."""
        chosen: dict[str, Skill] = {}
        for entry in self._entries:
            for skill in self._resolve(entry, skill_registry):
                chosen.setdefault(skill.id, skill)
        return list(chosen.values())

    def jars(self, skill_registry: SkillRegistry) -> dict[str, list[str]]:
        """The skilljars selected whole (``prefix(..., bundle=True)``): bundle id to skill ids.

        A skill also selected on its own (``skill``) or by a prefix without
        ``bundle`` stays out of its jar's entry.
        """
        if not any(entry.bundle for entry in self._entries):
            return {}
        loose = {
            s.id
            for entry in self._entries
            if not entry.bundle
            for s in self._resolve(entry, skill_registry)
        }
        jars: dict[str, list[str]] = {}
        for entry in self._entries:
            if entry.bundle:
                for skill in self._resolve(entry, skill_registry):
                    if skill.id not in loose:
                        members = jars.setdefault(skill.bundle, [])
                        if skill.id not in members:
                            members.append(skill.id)
        return jars

    @staticmethod
    def _resolve(entry: _Entry, registry: SkillRegistry) -> list[Skill]:
        if entry.kind == "all":
            return registry.skills()
        if entry.kind == "prefix":
            found = registry.by_prefix(entry.value)
        else:
            one = registry.get(entry.value)
            found = [one] if one is not None else []
        if not found:
            logger.warning(
                "declared %s %r is not in the skill registry; skipped", entry.kind, entry.value
            )
        return found

    def __repr__(self) -> str:
        parts = [
            f".{e.kind}({e.value!r}{', bundle=True' if e.bundle else ''})"
            if e.value
            else f".{e.kind}()"
            for e in self._entries
        ]
        return "SkillSelector()" + "".join(parts)
