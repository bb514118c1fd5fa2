"""Front matter cannot exhaust the host: aliases, anchors and merge keys are refused.

532 bytes of nested merge keys took 5.4 s and 200 MB with PyYAML 6.0.2. Refused before
anything expands, the same document now costs what reading it costs (a regression
hangs here until pytest-timeout; no assertion is about time).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toolpalette import SkillRegistry


def _bomb(levels: int) -> str:
    lines = ["name: bomb", "description: Expands.", "a: &a {x: 1, y: 2}"]
    for i in range(levels):
        prev, this = chr(97 + i), chr(98 + i)
        lines.append(f"{this}: &{this} {{<<: [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}]}}")
    return "\n".join(lines) + "\n"


def _jar(tmp_path: Path, skills: dict[str, str]) -> SkillRegistry:
    root = tmp_path / "jar"
    for name, front in skills.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\n{front}---\nBody of {name}.\n", encoding="utf-8")
    registry = SkillRegistry()
    registry.add_directory("io.example.yaml", root)
    registry.load_all()
    return registry


@pytest.mark.parametrize(
    "front",
    [
        _bomb(16),  # 5**16 expansions if built
        "name: anchored\ndescription: &d Anchored.\n",
        "name: aliased\ndescription: x\nother: *d\n",
        "name: merged\ndescription: x\nmetadata:\n  <<: {a: b}\n",
    ],
)
def test_aliases_anchors_and_merge_keys_skip_the_skill_with_a_clear_problem(
    tmp_path: Path, front: str
) -> None:
    registry = _jar(tmp_path, {"bad": front, "good": "name: good\ndescription: Fine.\n"})
    assert registry.ids() == ["io.example.yaml/good"]
    problems = [p for p in registry.problems() if "bad" in (p.item or "") or "bad" in p.reason]
    assert len(problems) == 1, registry.problems()
    assert problems[0].kind == "invalid-skill"
    assert "anchors (&), aliases (*) and merge keys (<<) are not allowed" in problems[0].reason


def test_ampersands_and_asterisks_inside_values_are_just_text(tmp_path: Path) -> None:
    registry = _jar(tmp_path, {"plain": "name: plain\ndescription: R&D * notes & more\n"})
    skill = registry.skill("io.example.yaml/plain")
    assert skill.manifest.description == "R&D * notes & more"


def test_front_matter_nested_past_the_recursion_limit_skips_only_its_skill(tmp_path: Path) -> None:
    # 30,000 nested "[" raised RecursionError while composing, and the whole jar was
    # reported invalid: its valid skills were lost with it.
    deep = "name: deep\ndescription: Nested.\nmetadata: " + "[" * 30_000 + "\n"
    registry = _jar(tmp_path, {"deep": deep, "good": "name: good\ndescription: Fine.\n"})
    assert registry.ids() == ["io.example.yaml/good"]
    problems = registry.problems()
    assert [(p.kind, p.item, p.reason) for p in problems] == [
        (
            "invalid-skill",
            "io.example.yaml/deep",
            "skipped: front matter nests too deeply to be read",
        )
    ]
