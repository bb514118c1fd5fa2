"""The io.toolpalette.files skilljar, as installed: discoverable, clean, self-consistent."""

from __future__ import annotations

import json
import re
from importlib.resources import files

import jsonschema
import pytest
from toolpalette import SkillRegistry
from toolpalette._plugins.discovery import SKILLJAR_GROUP, discover

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
    infos = [info for info in discover(SKILLJAR_GROUP) if info.name == BUNDLE]
    if not infos:
        pytest.skip("toolpalette-skilljar-files is not installed")
    registry = SkillRegistry.from_entry_points(infos)
    assert registry.problems() == []
    return registry.skill(f"{BUNDLE}/safe-bulk-edits")


def test_discoverable_through_its_entry_point():
    [info] = [info for info in discover(SKILLJAR_GROUP) if info.name == BUNDLE]
    assert info.distribution == "toolpalette-skilljar-files"
    assert info.module == "toolpalette_skilljar_files"


def test_the_skill_loads_clean():
    registry = SkillRegistry.from_entry_points(discover(SKILLJAR_GROUP))
    assert registry.by_prefix(BUNDLE)[0].id == f"{BUNDLE}/safe-bulk-edits"
    assert [p for p in registry.problems() if p.pack == BUNDLE] == []


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


def test_every_front_matter_conforms_to_the_shipped_schema():
    from toolpalette._skills.loader import parse_front_matter, read_front_matter

    schema_file = files("toolpalette._skills").joinpath("skill-manifest.schema.json")
    schema = json.loads(schema_file.read_text("utf-8"))
    root = files(pytest.importorskip("toolpalette_skilljar_files").__name__)
    folders = [f for f in root.iterdir() if f.joinpath("SKILL.md").is_file()]
    assert folders
    for folder in folders:
        with folder.joinpath("SKILL.md").open("rb") as stream:
            data, forgiven = parse_front_matter(read_front_matter(stream))
        assert forgiven == []
        jsonschema.validate(data, schema)
        assert data["name"] == folder.name
