"""The io.toolpalette.sql skilljar, as installed: discoverable, clean, self-consistent."""

from __future__ import annotations

import json
import re
from importlib.resources import files

import jsonschema
import pytest
from toolpalette import SkillRegistry
from toolpalette._discovery import SKILLJAR_GROUP, discover

BUNDLE = "io.toolpalette.sql"
SQL_TOOLS = {"list_tables", "describe_table", "query", "execute"}
READ_ONLY_TOOLS = {"list_tables", "describe_table", "query"}


@pytest.fixture(scope="module")
def registry():
    infos = [info for info in discover(SKILLJAR_GROUP) if info.name == BUNDLE]
    if not infos:
        pytest.skip("toolpalette-skilljar-sql is not installed")
    return SkillRegistry.from_entry_points(infos)


def test_discoverable_through_its_entry_point():
    [info] = [info for info in discover(SKILLJAR_GROUP) if info.name == BUNDLE]
    assert info.distribution == "toolpalette-skilljar-sql"
    assert info.module == "toolpalette_skilljar_sql"


def test_skills_load_without_problems(registry):
    assert registry.ids() == [
        f"{BUNDLE}/explore-sqlite-schema",
        f"{BUNDLE}/write-parameterized-migrations",
    ]
    assert registry.problems() == []


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
    assert "ROLLBACK" in body


def test_every_front_matter_conforms_to_the_shipped_schema():
    from toolpalette._skills._loader import parse_front_matter, read_front_matter

    schema_file = files("toolpalette._skills").joinpath("skill-manifest.schema.json")
    schema = json.loads(schema_file.read_text("utf-8"))
    root = files(pytest.importorskip("toolpalette_skilljar_sql").__name__)
    folders = [f for f in root.iterdir() if f.joinpath("SKILL.md").is_file()]
    assert folders
    for folder in folders:
        with folder.joinpath("SKILL.md").open("rb") as stream:
            data, forgiven = parse_front_matter(read_front_matter(stream))
        assert forgiven == []
        jsonschema.validate(data, schema)
        assert data["name"] == folder.name
