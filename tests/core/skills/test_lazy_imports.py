"""The skills API imports yaml and the manifest's pydantic model only to read or build a skill."""

from __future__ import annotations

import json
import subprocess
import sys


def modules_after(*statements: str) -> set[str]:
    """The modules loaded in a fresh interpreter after running ``statements``."""
    code = "\n".join(["import json, sys", *statements, "print(json.dumps(sorted(sys.modules)))"])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_the_skills_api_and_the_hub_import_neither_yaml_nor_the_manifest() -> None:
    loaded = modules_after(
        "from toolpalette import Conversation, Skill, SkillRegistry, SkillSelector, ToolHub"
    )
    assert "toolpalette._skills" in loaded  # the check looks where they would be
    assert "yaml" not in loaded
    assert "toolpalette._skills.manifest" not in loaded


def test_building_a_skill_imports_the_manifest() -> None:
    loaded = modules_after(
        "from toolpalette import Skill",
        "Skill('a-skill', 'Does a.', bundle='io.example.a')",
    )
    assert "toolpalette._skills.manifest" in loaded


def test_the_public_name_still_resolves() -> None:
    loaded = modules_after(
        "from toolpalette import SkillManifest",
        "assert SkillManifest(name='a', description='b').name == 'a'",
    )
    assert "toolpalette._skills.manifest" in loaded
