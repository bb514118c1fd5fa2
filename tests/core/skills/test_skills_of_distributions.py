"""The skills of named distributions, as ``serve --select`` finds them: other jars stay shut.

A broken skill in a skilljar nobody asked for is neither opened nor warned about.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from toolpalette import SkillRegistry
from toolpalette._skills.registry import skills_of_distributions

from .conftest import MakeJar


def test_only_the_named_distributions_jars_are_opened(
    make_jar: MakeJar, skill_md: Callable[..., str], caplog: pytest.LogCaptureFixture
) -> None:
    good = make_jar(
        "io.example.good",
        {"intro/SKILL.md": skill_md("intro")},
        distribution="toolpalette-skilljar-good",
    )
    broken = make_jar(
        "io.example.broken",
        {"bad/SKILL.md": skill_md("bad", description=None)},  # no description: skipped
        distribution="other-jar",
    )
    registry = SkillRegistry.from_entry_points([good, broken])
    with caplog.at_level(logging.WARNING, logger="toolpalette.skills"):
        found = skills_of_distributions(registry, ["Toolpalette_Skilljar.Good"])
    assert [s.id for s in found] == ["io.example.good/intro"]
    assert registry.loaded_bundles() == ["io.example.good"]
    assert registry.problems() == []
    assert caplog.records == []
    registry.load_all()  # the broken jar is still reported by check, which opens all
    assert [p.kind for p in registry.problems()] == ["invalid-skill"]


def test_a_distribution_with_no_jar_has_no_skills(make_jar: MakeJar, skill_md: Callable[..., str]):
    jar = make_jar("io.example.one", {"a/SKILL.md": skill_md("a")}, distribution="one-jar")
    registry = SkillRegistry.from_entry_points([jar])
    assert skills_of_distributions(registry, ["toolpalette-files"]) == []
    assert registry.loaded_bundles() == []
