"""The io.toolpalette.sql skilljar, as installed: discoverable, clean, self-consistent."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from importlib.resources import files

import jsonschema
import pytest
import yaml
from toolpalette import SkillManifest, ToolHub
from toolpalette.testing import assert_discoverable

BUNDLE = "io.toolpalette.sql"
SQL_TOOLS = {"list_tables", "describe_table", "query", "execute"}
READ_ONLY_TOOLS = {"list_tables", "describe_table", "query"}


@pytest.fixture(scope="module")
def registry():
    registry = ToolHub(config={}).skills()
    if BUNDLE not in registry.bundles():
        pytest.skip("toolpalette-skilljar-sql is not installed")
    return registry


def test_discoverable_through_its_entry_point():
    [entry] = [e for e in entry_points(group="toolpalette.skilljars") if e.name == BUNDLE]
    assert entry.value == "toolpalette_skilljar_sql"


def test_skills_load_without_problems():
    found = assert_discoverable("toolpalette-skilljar-sql")  # fails on any problem
    assert found.distribution == "toolpalette-skilljar-sql"
    assert found.bundles == (BUNDLE,)
    assert found.skills == (
        f"{BUNDLE}/explore-sqlite-schema",
        f"{BUNDLE}/write-parameterized-migrations",
    )


@pytest.mark.parametrize("name", ["explore-sqlite-schema", "write-parameterized-migrations"])
def test_every_linked_file_ships(registry, name):
    skill = registry.skill(f"{BUNDLE}/{name}")
    links = re.findall(r"\]\(([^)#]+)\)", skill.body())
    local = [link for link in links if "://" not in link]
    assert local, "each skill links a reference"
    for link in local:
        assert skill.read_text(link).startswith("# ")


def test_exploring_is_read_only(registry):
    skill = registry.skill(f"{BUNDLE}/explore-sqlite-schema")
    assert set(skill.allowed_tools) == READ_ONLY_TOOLS
    assert "execute" not in skill.body().replace("Do not call `execute`", "")


def test_migrations_use_bound_parameters(registry):
    skill = registry.skill(f"{BUNDLE}/write-parameterized-migrations")
    assert set(skill.allowed_tools) <= SQL_TOOLS
    assert "execute" in skill.allowed_tools
    body = skill.body()
    assert "bound parameters" in body.lower()
    assert "`params`" in body


def test_migrations_never_ask_for_transaction_control(registry):
    # execute commits each statement and refuses BEGIN/COMMIT/ROLLBACK/SAVEPOINT, so
    # the skill must not tell a model to use them, and must say why.
    skill = registry.skill(f"{BUNDLE}/write-parameterized-migrations")
    texts = [skill.body(), skill.read_text("references/rebuild-table.md")]
    for text in texts:
        for line in text.splitlines():
            if re.search(r"\b(BEGIN|COMMIT|ROLLBACK|SAVEPOINT)\b", line):
                assert "There is no `BEGIN`" in line or "refuses" in line, line
    assert "refuses transaction control" in texts[0]


def test_the_sqlite_pack_really_behaves_as_the_skills_say(registry):
    tools = pytest.importorskip("toolpalette_sqlite.tools")
    assert [t.__name__ for t in tools.TOOLS] == [
        "list_tables",
        "describe_table",
        "query",
        "execute",
    ]
    # If the pack's documented behaviour changes, the skills must be re-read against it.
    doc = " ".join(tools.execute.__doc__.split())
    assert "commits on its own" in doc
    assert "transaction control (BEGIN, COMMIT, SAVEPOINT) are refused" in doc
    for name in ("explore-sqlite-schema", "write-parameterized-migrations"):
        assert set(registry.skill(f"{BUNDLE}/{name}").allowed_tools) <= {
            t.__name__ for t in tools.TOOLS
        }


def test_every_front_matter_conforms_to_the_published_schema():
    # The front matter as plain YAML reads it (no leniency), against the model's schema,
    # which is the schema the core ships (tests/core/skills/test_manifest_schema.py).
    schema = SkillManifest.model_json_schema(by_alias=True)
    root = files(pytest.importorskip("toolpalette_skilljar_sql").__name__)
    folders = [f for f in root.iterdir() if f.joinpath("SKILL.md").is_file()]
    assert folders
    for folder in folders:
        text = folder.joinpath("SKILL.md").read_text(encoding="utf-8")
        front, _, _ = text.removeprefix("---\n").partition("\n---\n")
        data = yaml.safe_load(front)
        jsonschema.validate(data, schema)
        assert data["name"] == folder.name
