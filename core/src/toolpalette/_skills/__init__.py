"""Skills in the Agent Skills format: skilljars, the registry, selectors, the preamble.

``_manifest`` holds the front-matter model and the specification's rules, ``_loader``
reads ``SKILL.md``, ``_jar`` reads a jar's folders through ``importlib.resources``,
``_registry`` serves skills by id, ``_selector`` declares them, and ``_conversation``
carries the attached ones in the preamble.
"""

from __future__ import annotations

from toolpalette._skills._conversation import Conversation
from toolpalette._skills._manifest import SkillManifest
from toolpalette._skills._registry import SkillRegistry
from toolpalette._skills._selector import SkillSelector
from toolpalette._skills._skill import Skill

__all__ = ["Conversation", "Skill", "SkillManifest", "SkillRegistry", "SkillSelector"]
