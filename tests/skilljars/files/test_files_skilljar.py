"""The io.toolpalette.files skilljar, as installed: discoverable, clean, self-consistent."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from importlib.resources import files

import jsonschema
import pytest
import yaml
from toolpalette import SkillManifest, ToolHub
from toolpalette.testing import assert_discoverable

BUNDLE = "io.toolpalette.files"
FILE_TOOLS = {
    "read_file",
    "list_directory",
    "search_files",
    "file_info",
    "write_file",
    "edit_file",
    "make_directory",
    "move_path",
}


@pytest.fixture(scope="module")
def skill():
    registry = ToolHub(config={}).skills()
    if BUNDLE not in registry.bundles():
        pytest.skip("toolpalette-skilljar-files is not installed")
    return registry.skill(f"{BUNDLE}/safe-bulk-edits")


def test_discoverable_through_its_entry_point():
    [entry] = [e for e in entry_points(group="toolpalette.skilljars") if e.name == BUNDLE]
    assert entry.value == "toolpalette_skilljar_files"


def test_the_skill_loads_clean():
    found = assert_discoverable("toolpalette-skilljar-files")  # fails on any problem
    assert found.distribution == "toolpalette-skilljar-files"
    assert found.skills == (f"{BUNDLE}/safe-bulk-edits",)


def test_it_names_only_tools_of_the_files_pack(skill):
    assert set(skill.allowed_tools) <= FILE_TOOLS
    assert {"search_files", "read_file", "edit_file"} <= set(skill.allowed_tools)


def test_the_files_pack_really_has_those_tools(skill):
    tools = pytest.importorskip("toolpalette_files.tools")
    for name in skill.allowed_tools:
        assert hasattr(tools, name), name


def test_every_linked_file_ships(skill):
    links = [link for link in re.findall(r"\]\(([^)#]+)\)", skill.body()) if "://" not in link]
    assert links == ["references/anchors.md"]
    assert skill.read_text(links[0]).startswith("# ")


def test_every_front_matter_conforms_to_the_published_schema():
    # The front matter as plain YAML reads it (no leniency), against the model's schema,
    # which is the schema the core ships (tests/core/skills/test_manifest_schema.py).
    schema = SkillManifest.model_json_schema(by_alias=True)
    root = files(pytest.importorskip("toolpalette_skilljar_files").__name__)
    folders = [f for f in root.iterdir() if f.joinpath("SKILL.md").is_file()]
    assert folders
    for folder in folders:
        text = folder.joinpath("SKILL.md").read_text(encoding="utf-8")
        front, _, _ = text.removeprefix("---\n").partition("\n---\n")
        data = yaml.safe_load(front)
        jsonschema.validate(data, schema)
        assert data["name"] == folder.name
