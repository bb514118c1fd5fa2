"""SkillSelector: declared early, resolved against a registry only in get_skills()."""

from __future__ import annotations

import logging

import pytest
from toolpalette import Skill, SkillRegistry, SkillSelector


@pytest.fixture
def registry():
    registry = SkillRegistry()
    skills = [
        Skill("b", "d", bundle="io.example.sql"),
        Skill("a", "d", bundle="io.example.sql"),
        Skill("ops", "d", bundle="io.example"),
        Skill("z", "d", bundle="io.examples.x"),
        Skill("q", "d", bundle="org.other"),
    ]
    registry.add_skills(skills, pack="test", distribution=None)
    return registry


def ids(skills):
    return [s.id for s in skills]


def test_nothing_is_resolved_until_get_skills():
    selector = SkillSelector().skill("io.example.sql/a").prefix("io.example")
    assert repr(selector) == "SkillSelector().skill('io.example.sql/a').prefix('io.example')"


def test_exact_ids(registry):
    assert ids(SkillSelector().skill("io.example.sql/b").get_skills(registry)) == [
        "io.example.sql/b"
    ]


def test_prefix_on_dot_boundaries(registry):
    selected = SkillSelector().prefix("io.example").get_skills(registry)
    assert ids(selected) == ["io.example.sql/a", "io.example.sql/b", "io.example/ops"]


def test_all(registry):
    assert ids(SkillSelector().all().get_skills(registry)) == registry.ids()


def test_order_is_declaration_order_without_repeats(registry):
    selector = (
        SkillSelector()
        .skill("org.other/q")
        .prefix("io.example.sql")
        .skill("io.example.sql/a")
        .all()
    )
    assert ids(selector.get_skills(registry)) == [
        "org.other/q",
        "io.example.sql/a",
        "io.example.sql/b",
        "io.example/ops",
        "io.examples.x/z",
    ]


def test_a_name_the_registry_lacks_is_logged_and_skipped(registry, caplog):
    selector = (
        SkillSelector().skill("io.example.sql/missing").prefix("net.none").skill("io.example.sql/a")
    )
    with caplog.at_level(logging.WARNING, logger="toolpalette.skills"):
        selected = selector.get_skills(registry)
    assert ids(selected) == ["io.example.sql/a"]
    assert "'io.example.sql/missing'" in caplog.text
    assert "'net.none'" in caplog.text


def test_an_empty_prefix_is_refused():
    with pytest.raises(ValueError, match=r"all\(\)"):
        SkillSelector().prefix("")


def test_prefix_selection_opens_only_matching_jars(make_jar, skill_md):
    inside = make_jar("io.example.sql", {"a/SKILL.md": skill_md("a")})
    outside = make_jar(
        "io.examples", {"b/SKILL.md": skill_md("b")}, init="raise RuntimeError('opened')\n"
    )
    registry = SkillRegistry.from_entry_points([inside, outside])
    assert ids(SkillSelector().prefix("io.example").get_skills(registry)) == ["io.example.sql/a"]
    assert registry.loaded_bundles() == ["io.example.sql"]
    assert registry.problems() == []
