"""Skills in the Agent Skills format: skilljars, the registry, selectors, the preamble.

``_manifest`` holds the front-matter model and the specification's rules, ``_loader``
reads ``SKILL.md``, ``_jar`` reads a jar's folders through ``importlib.resources``,
``_registry`` serves skills by id, ``_selector`` declares them, and ``_conversation``
carries the attached ones in the preamble.
"""

from __future__ import annotations

from toolpalette._skills.conversation import Conversation
from toolpalette._skills.manifest import SkillManifest
from toolpalette._skills.registry import SkillRegistry
from toolpalette._skills.selector import SkillSelector
from toolpalette._skills.skill import Skill

__all__ = ["Conversation", "Skill", "SkillManifest", "SkillRegistry", "SkillSelector"]
