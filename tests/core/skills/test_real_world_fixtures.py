"""Real-world skills (third-party, Apache-2.0) must load; used in place, never copied.

The skills are not part of the repository. Point ``TOOLPALETTE_SKILL_FIXTURES`` at the
folder holding them (one sub-folder per skill); without it, the default folder beside
the checkout (``FIXTURES`` below) is used if present. When the folder is absent these
tests skip, naming the folder they looked for.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from toolpalette import SkillRegistry

FIXTURES_ENV = "TOOLPALETTE_SKILL_FIXTURES"
CHECKOUT = Path(__file__).resolve().parents[3]
FIXTURES = Path(
    os.environ.get(FIXTURES_ENV) or CHECKOUT.parent / "shared" / "fixtures" / "agent-skills"
)
BUNDLE = "com.anthropic.skills"

pytestmark = pytest.mark.skipif(
    not FIXTURES.is_dir(),
    reason=f"the real-world skill fixtures are absent: no folder {FIXTURES} "
    f"(set {FIXTURES_ENV} to the folder holding them)",
)

# The verdict for each fixture skill: the warnings it loads with (empty: loads clean).
VERDICTS = {
    "brand-guidelines": [],
    "claude-api": ["description is 1068 characters, over the specification's 1024; shorten it"],
    "internal-comms": [],
    "mcp-builder": [],
}


@pytest.fixture(scope="module")
def registry():
    registry = SkillRegistry()
    registry.add_directory(BUNDLE, FIXTURES)
    registry.load_all()
    return registry


def test_every_fixture_skill_loads(registry):
    assert registry.ids() == [f"{BUNDLE}/{name}" for name in sorted(VERDICTS)]
    assert [p for p in registry.problems() if p.fatal] == []


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_verdict(registry, name):
    warnings = [p.reason for p in registry.problems() if p.item == f"{BUNDLE}/{name}"]
    assert warnings == VERDICTS[name]


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_body_and_licence(registry, name):
    skill = registry.skill(f"{BUNDLE}/{name}")
    assert skill.license == "Complete terms in LICENSE.txt"
    assert skill.body().startswith("#")
    assert "LICENSE.txt" in skill.resources()
    assert "Apache License" in skill.read_text("LICENSE.txt")


def test_a_block_scalar_description_keeps_its_lines(registry):
    description = registry.skill(f"{BUNDLE}/claude-api").description
    assert description.startswith("Reference for the Claude API")
    assert description.count("\n") == 2
    assert not description.endswith("\n")


def test_non_standard_folders_are_plain_resources(registry):
    assert registry.skill(f"{BUNDLE}/mcp-builder").resources() == [
        "LICENSE.txt",
        "reference/evaluation.md",
        "reference/mcp_best_practices.md",
    ]
    assert "examples/faq-answers.md" in registry.skill(f"{BUNDLE}/internal-comms").resources()
