"""Skilljars as installed distributions: the test-only jars of tests/integration/jars.

Run by ``nox -s dists``, which installs the first-party skilljars and the test-only ones
(healthy, lenient, unparsable, two claiming one bundle id, one requiring a toolpalette
that does not exist) into a fresh virtual environment. What a process imported is asked
in a fresh interpreter, so other tests in this one cannot have imported anything first.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from toolpalette import Conversation, SkillRegistry, SkillSelector
from toolpalette._plugins.discovery import SKILLJAR_GROUP, discover

pytestmark = pytest.mark.dists


@pytest.fixture(scope="module")
def registry():
    registry = SkillRegistry.from_entry_points(discover(SKILLJAR_GROUP))
    registry.load_all()
    return registry


def problems_of(registry, pack):
    return sorted((p.kind, p.item) for p in registry.problems() if p.pack == pack)


def test_every_test_jar_is_discovered():
    names = {info.name for info in discover(SKILLJAR_GROUP)}
    assert {
        "io.example.healthy",
        "io.examples.neighbour",
        "io.example.lenient",
        "Bad_Bundle",
        "io.example.unparsable",
        "io.example.clash",
        "io.example.incompatible",
        "io.toolpalette.sql",
        "io.toolpalette.files",
    } <= names


def test_the_healthy_jar_serves_its_skills_and_resources(registry):
    skill = registry.skill("io.example.healthy/query-helper")
    assert (skill.distribution, skill.version) == ("toolpalette-testjar-healthy", "0.1.0")
    assert skill.allowed_tools == ("list_tables", "query")
    assert dict(skill.metadata) == {"version": "1.10", "updated": "2024-05-01"}
    assert skill.resources() == ["references/guide.md"]
    assert skill.read_text("references/guide.md") == "# Guide\n\nUse LIMIT.\n"
    assert "[the guide](references/guide.md)" in skill.body()
    assert problems_of(registry, "io.example.healthy") == []


def test_first_party_jars_load_clean(registry):
    assert problems_of(registry, "io.toolpalette.sql") == []
    assert problems_of(registry, "io.toolpalette.files") == []
    assert [s.id for s in registry.by_prefix("io.toolpalette")] == [
        "io.toolpalette.files/safe-bulk-edits",
        "io.toolpalette.sql/explore-sqlite-schema",
        "io.toolpalette.sql/write-parameterized-migrations",
    ]


def test_cosmetic_problems_load_with_warnings(registry):
    assert [s.id for s in registry.by_prefix("io.example.lenient")] == [
        "io.example.lenient/Upper-Case",
        "io.example.lenient/colon-value",
        "io.example.lenient/extra-keys",
        "io.example.lenient/long-description",
        "io.example.lenient/lowercase-file",
        "io.example.lenient/mismatched-name",
    ]
    found = problems_of(registry, "io.example.lenient")
    assert {kind for kind, _ in found} == {"skill-warning"}
    assert {item for _, item in found} == {s.id for s in registry.by_prefix("io.example.lenient")}
    colon = registry.skill("io.example.lenient/colon-value")
    assert colon.description == "Use when: the description has an unquoted colon"


def test_an_invalid_bundle_id_is_reported_and_not_served(registry):
    assert problems_of(registry, "Bad_Bundle") == [("invalid-jar", None)]
    assert "Bad_Bundle" not in registry.bundles()


def test_unparsable_skills_are_skipped_and_their_neighbour_loads(registry):
    assert [s.id for s in registry.by_prefix("io.example.unparsable")] == [
        "io.example.unparsable/still-fine"
    ]
    assert problems_of(registry, "io.example.unparsable") == [
        ("invalid-skill", f"io.example.unparsable/{name}")
        for name in ("broken-yaml", "no-description", "no-front-matter", "python-tag", "unclosed")
    ]


def test_two_jars_claiming_one_bundle_id_are_both_reported_and_neither_served(registry):
    collisions = [p for p in registry.problems() if p.pack == "io.example.clash"]
    assert {p.kind for p in collisions} == {"collision"}
    assert sorted(p.distribution for p in collisions) == [
        "toolpalette-testjar-clash-a 0.1.0",
        "toolpalette-testjar-clash-b 0.1.0",
    ]
    assert registry.by_prefix("io.example.clash") == []
    assert "io.example.clash" not in registry.bundles()


def test_a_jar_requiring_another_toolpalette_is_not_opened(registry):
    assert problems_of(registry, "io.example.incompatible") == [("incompatible", None)]
    assert registry.by_prefix("io.example.incompatible") == []


def test_selection_attaches_to_a_conversation(registry):
    selector = (
        SkillSelector().skill("io.example.healthy/summarize-table").prefix("io.toolpalette.sql")
    )
    conversation = Conversation()
    for skill in selector.get_skills(registry):
        conversation.attach(skill)
    assert conversation.attached == (
        "io.example.healthy/summarize-table",
        "io.toolpalette.sql/explore-sqlite-schema",
        "io.toolpalette.sql/write-parameterized-migrations",
    )
    assert "# Explore an unknown SQLite schema safely" in conversation.preamble


def run_python(code):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_prefix_selection_imports_only_the_jars_under_the_prefix():
    seen = run_python(
        """
        import json, sys
        from toolpalette import SkillRegistry, SkillSelector
        from toolpalette._plugins.discovery import SKILLJAR_GROUP, discover
        registry = SkillRegistry.from_entry_points(discover(SKILLJAR_GROUP))
        skills = SkillSelector().prefix("io.example.healthy").get_skills(registry)
        print(json.dumps({
            "ids": [s.id for s in skills],
            "opened": registry.loaded_bundles(),
            "jars": sorted(m for m in sys.modules if m.startswith("tp_testjar_")),
        }))
        """
    )
    assert seen == {
        "ids": ["io.example.healthy/query-helper", "io.example.healthy/summarize-table"],
        "opened": ["io.example.healthy"],
        "jars": ["tp_testjar_healthy"],
    }


def test_a_dot_boundary_keeps_io_examples_out_of_io_example():
    seen = run_python(
        """
        import json, sys
        from toolpalette import SkillRegistry
        from toolpalette._plugins.discovery import SKILLJAR_GROUP, discover
        registry = SkillRegistry.from_entry_points(discover(SKILLJAR_GROUP))
        skills = registry.by_prefix("io.example")
        print(json.dumps({
            "neighbour": any(s.bundle == "io.examples.neighbour" for s in skills),
            "imported": "tp_testjar_neighbour" in sys.modules,
        }))
        """
    )
    assert seen == {"neighbour": False, "imported": False}


def run_cli(*args):
    code = f"from toolpalette.testing import run_cli; raise SystemExit(run_cli({list(args)!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_the_skills_command_lists_everything_with_problems():
    result = run_cli("skills", "--json")
    assert result.stderr == ""
    listing = json.loads(result.stdout)
    bundles = {b["id"]: b for b in listing["bundles"]}
    assert bundles["io.example.healthy"]["distribution"] == "toolpalette-testjar-healthy"
    assert "io.example.clash" not in bundles
    kinds = {(p["kind"], p["bundle"]) for p in listing["problems"]}
    assert ("collision", "io.example.clash") in kinds
    assert ("invalid-skill", "io.example.unparsable") in kinds
    assert ("invalid-jar", "Bad_Bundle") in kinds


def test_the_skills_command_shows_one_skill():
    result = run_cli("skills", "show", "io.toolpalette.sql/explore-sqlite-schema")
    first_line = result.stdout.splitlines()[0]
    assert (
        first_line
        == "io.toolpalette.sql/explore-sqlite-schema  from toolpalette-skilljar-sql 0.1.0"
    )
    assert "references/catalog-queries.md" in result.stdout
