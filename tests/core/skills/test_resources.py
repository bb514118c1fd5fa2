"""Skill resources: by relative path, inside the skill folder only."""

from __future__ import annotations

import os

import pytest
from toolpalette import Skill, SkillRegistry


@pytest.fixture
def skill(make_jar, skill_md, tmp_path):
    info = make_jar(
        "io.example.sql",
        {
            "alpha/SKILL.md": skill_md("alpha"),
            "alpha/references/guide.md": "# Guide\n",
            "alpha/assets/logo.bin": b"\x00\x01",
            "alpha/scripts/run.py": "print('hi')\n",
            "beta/SKILL.md": skill_md("beta"),
            "secret.txt": "not yours",
        },
    )
    return SkillRegistry.from_entry_points([info]).skill("io.example.sql/alpha")


def test_resources_lists_every_file_but_skill_md(skill):
    assert skill.resources() == ["assets/logo.bin", "references/guide.md", "scripts/run.py"]


def test_a_resource_is_read_by_relative_path(skill):
    assert skill.read_text("references/guide.md") == "# Guide\n"
    assert skill.resource("assets/logo.bin") == b"\x00\x01"


@pytest.mark.parametrize(
    "relpath",
    [
        "../beta/SKILL.md",
        "../secret.txt",
        "references/../../secret.txt",
        "/etc/passwd",
        "C:/Windows/win.ini",
        "references\\guide.md",
        "./references/guide.md",
        "references//guide.md",
        "",
        "a\0b",
    ],
)
def test_paths_that_could_leave_the_skill_are_refused(skill, relpath):
    with pytest.raises(ValueError, match="resource path"):
        skill.resource(relpath)


def test_a_missing_resource_is_file_not_found(skill):
    with pytest.raises(FileNotFoundError, match="no resource"):
        skill.resource("references/missing.md")
    with pytest.raises(FileNotFoundError):
        skill.resource("references")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinks_out_of_the_skill_are_refused_and_not_listed(make_jar, skill_md, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret", encoding="utf-8")
    info = make_jar("io.example.sql", {"alpha/SKILL.md": skill_md("alpha"), "alpha/inner.md": "ok"})
    folder = tmp_path / info.module / "alpha"
    try:
        (folder / "leak.txt").symlink_to(outside)
        (folder / "inside-link.md").symlink_to(folder / "inner.md")
    except OSError:
        pytest.skip("cannot create symlinks here")
    (folder / "dangling.txt").symlink_to(tmp_path / "missing.txt")
    skill = SkillRegistry.from_entry_points([info]).skill("io.example.sql/alpha")
    # One answer whether the target outside exists or not: nothing can be probed.
    answers = []
    for name in ("leak.txt", "dangling.txt", "absent.txt"):
        with pytest.raises(FileNotFoundError) as raised:
            skill.resource(name)
        answers.append(str(raised.value).replace(name, "NAME"))
    assert len(set(answers)) == 1
    assert skill.resources() == ["inner.md", "inside-link.md"]  # links out are not listed
    assert skill.read_text("inside-link.md") == "ok"


def test_a_code_built_skill_serves_its_resources():
    skill = Skill(
        "x", "d", bundle="io.example.ops", resources={"references/a.md": "A", "b.bin": b"B"}
    )
    assert skill.resources() == ["b.bin", "references/a.md"]
    assert skill.read_text("references/a.md") == "A"
    with pytest.raises(ValueError, match="resource path"):
        skill.resource("../b.bin")
    with pytest.raises(FileNotFoundError):
        skill.resource("c.md")


def test_a_code_built_skill_refuses_unsafe_resource_paths_at_construction():
    with pytest.raises(ValueError, match="resource path"):
        Skill("x", "d", bundle="io.example.ops", resources={"../a.md": "A"})
