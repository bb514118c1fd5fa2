"""``Conversation``: the preamble a model sees, and the skills attached to it."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolpalette._skills.skill import Skill

__all__ = ["Conversation"]


class Conversation:
    """One conversation's preamble: the host's own text, then each attached skill.

    A skill is attached when it is declared or admitted; from then on its name,
    description and body ride the preamble. Skills are appended in the order they are
    attached, never re-sorted, so the preamble of an earlier turn stays a prefix of the
    next one (which keeps a provider's prompt cache warm); the same attachments in the
    same order always give the same text, byte for byte. A thinker's turn adds the
    guidance of the tools it offers after the skills
    ([`preamble_with()`][toolpalette.Conversation.preamble_with]).

    Args:
        preamble: The host's own preamble text, placed first.
        id: The conversation's id (a thread id in tool contexts and grant records); a
            random one when not given.
    """

    def __init__(self, preamble: str = "", *, id: str | None = None) -> None:
        self.id = id if id is not None else uuid.uuid4().hex
        """The conversation's id."""
        self._base = preamble
        self._skills: dict[str, Skill] = {}
        self._lock = threading.Lock()

    def attach(self, skill: Skill) -> bool:
        """Attach a skill once; reads its body now.

        Returns:
            True when it was attached now, False when it already was (by id).
        """
        skill.body()  # admission is when the body is read; a bad body fails here
        with self._lock:
            if skill.id in self._skills:
                return False
            self._skills[skill.id] = skill
        return True

    @property
    def attached(self) -> tuple[str, ...]:
        """The ids of the attached skills, in the order they were attached."""
        with self._lock:
            return tuple(self._skills)

    @property
    def skills(self) -> tuple[Skill, ...]:
        """The attached skills, in the order they were attached."""
        with self._lock:
            return tuple(self._skills.values())

    def is_attached(self, skill_id: str) -> bool:
        """Whether the skill with this full id is attached."""
        with self._lock:
            return skill_id in self._skills

    @property
    def preamble(self) -> str:
        """The host's text, then one section per attached skill, in attachment order."""
        return self.preamble_with(())

    def preamble_with(self, guidance: Iterable[tuple[str, str]]) -> str:
        """`preamble`, then one section per tool's guidance, in the order given.

        A thinker's turn passes the guidance of the tools it offers, as ``(name, text)``
        pairs in the palette's order (``turn.preamble``); each becomes
        ``<tool name="NAME">``, the text (without surrounding blank space), ``</tool>``,
        on lines of their own. They come after the skills, so what a tool granted or
        offered for one turn adds or takes away leaves the text before them as it was.
        """
        with self._lock:
            skills = list(self._skills.values())
        sections = [self._base.strip()] if self._base.strip() else []
        sections.extend(_section(skill) for skill in skills)
        sections.extend(f'<tool name="{name}">\n{text.strip()}\n</tool>' for name, text in guidance)
        return "\n\n".join(sections) + ("\n" if sections else "")


def _section(skill: Skill) -> str:
    return (
        f'<skill id="{skill.id}" name="{skill.name}">\n'
        f"<description>{skill.description}</description>\n\n"
        f"{skill.body()}\n"
        "</skill>"
    )
