"""The skilljar author guide builds a real jar; its files are written out and loaded."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from toolpalette import SkillRegistry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "skilljar-guide.md"
BLOCK = re.compile(r"^```(\w+)(?: file=(\S+))?\n(.*?)^```", re.MULTILINE | re.DOTALL)
BUNDLE = "io.example.ops"


def blocks() -> list[tuple[str, str | None, str]]:
    text = GUIDE.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), m.group(3)) for m in BLOCK.finditer(text)]


@pytest.fixture(scope="module")
def jar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("toolpalette-skilljar-ops")
    for _, path, body in blocks():
        if path:
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
    return root


def test_the_guide_writes_the_whole_jar(jar: Path) -> None:
    written = sorted(p.relative_to(jar).as_posix() for p in jar.rglob("*") if p.is_file())
    assert written == [
        "pyproject.toml",
        "src/toolpalette_skilljar_ops/__init__.py",
        "src/toolpalette_skilljar_ops/release-checklist/SKILL.md",
        "src/toolpalette_skilljar_ops/release-checklist/references/rollback.md",
        "tests/test_jar.py",
    ]


def test_the_entry_point_names_the_bundle_and_the_package(jar: Path) -> None:
    project = tomllib.loads((jar / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["toolpalette.skilljars"] == {BUNDLE: "toolpalette_skilljar_ops"}
    assert project["dependencies"] == ["toolpalette>=0.1,<1"]


def test_the_guides_skill_loads_clean(jar: Path) -> None:
    registry = SkillRegistry()
    registry.add_directory(BUNDLE, jar / "src" / "toolpalette_skilljar_ops")
    assert registry.ids() == [f"{BUNDLE}/release-checklist"]
    assert registry.problems() == []
    skill = registry.skill(f"{BUNDLE}/release-checklist")
    assert skill.metadata["reviewed"] == "2024-05-01"
    assert skill.allowed_tools == ("read_file", "edit_file", "search_files")
    assert skill.resources() == ["references/rollback.md"]
    assert "[the rollback notes](references/rollback.md)" in skill.body()


def test_the_code_built_skill_example_registers_clean() -> None:
    [source] = [body for lang, path, body in blocks() if "toolpalette_register_skills" in body]
    namespace: dict[str, object] = {}
    exec(compile(source, str(GUIDE), "exec"), namespace)  # the guide's own example
    registry = SkillRegistry()
    hook = namespace["toolpalette_register_skills"]
    registry.add_skills([hook()], pack="ops", distribution="toolpalette-ops")  # type: ignore[operator]
    assert registry.ids() == [f"{BUNDLE}/deploy"]
    assert registry.problems() == []
    assert registry.skill(f"{BUNDLE}/deploy").read_text("references/env.md") == "# Environments\n"


def test_the_requirements_example_runs() -> None:
    [source] = [
        body for lang, path, body in blocks() if lang == "python" and "toolpalette.requires" in body
    ]
    namespace: dict[str, object] = {"__name__": "guide_requirements"}
    exec(compile(source, str(GUIDE), "exec"), namespace)  # the example asserts what it shows
    hub = namespace["hub"]
    reasons = {r.name: r.reason for r in hub.grants() if r.kind == "tool"}  # type: ignore[attr-defined]
    assert reasons == {"describe_table": "required by the skill io.example.db/migrate"}
