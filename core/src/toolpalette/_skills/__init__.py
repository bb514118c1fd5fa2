"""Skills in the Agent Skills format: skilljars, the registry, selectors, the preamble."""

from __future__ import annotations

from toolpalette._skills.conversation import Conversation
from toolpalette._skills.registry import SkillRegistry
from toolpalette._skills.selector import SkillSelector
from toolpalette._skills.skill import Skill

__all__ = ["Conversation", "Skill", "SkillRegistry", "SkillSelector"]
