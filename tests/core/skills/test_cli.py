"""``toolpalette skills`` and ``toolpalette skills show``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toolpalette import ToolHub
from toolpalette.testing import run_cli


def folder(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path: text) under ``root``; return ``root``."""
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def installed(tmp_path, skill_md) -> ToolHub:
    """A hub with two skilljars: a healthy one, and one whose only skill is broken."""
    hub = ToolHub(autoload=False, config={})
    healthy = {
        "alpha/SKILL.md": skill_md("alpha", "Explore things.", **{"allowed-tools": "query"}),
        "alpha/references/r.md": "ref",
        "Beta/SKILL.md": skill_md("Beta", "Loud."),
    }
    hub.skills().add_directory(
        "io.example.sql",
        folder(tmp_path / "sql", healthy),
        distribution="example-sql",
        version="1.2",
    )
    broken = {"x/SKILL.md": "nothing"}
    hub.skills().add_directory(
        "io.example.bad", folder(tmp_path / "bad", broken), distribution="bad-jar", version="0.1"
    )
    return hub


def test_skills_json_lists_bundles_skills_and_problems(installed, capsys):
    assert run_cli(["skills", "--json"], hub=installed) == 0
    listing = json.loads(capsys.readouterr().out)
    bundles = {b["id"]: b for b in listing["bundles"]}
    assert set(bundles) == {"io.example.bad", "io.example.sql"}
    sql = bundles["io.example.sql"]
    assert (sql["distribution"], sql["version"]) == ("example-sql", "1.2")
    assert [s["id"] for s in sql["skills"]] == ["io.example.sql/Beta", "io.example.sql/alpha"]
    alpha = sql["skills"][1]
    assert alpha["description"] == "Explore things."
    assert alpha["allowed_tools"] == ["query"]
    assert alpha["problems"] == []
    assert "uppercase" in sql["skills"][0]["problems"][0]
    assert bundles["io.example.bad"]["skills"] == []
    assert {(p["kind"], p["item"]) for p in listing["problems"]} == {
        ("skill-warning", "io.example.sql/Beta"),
        ("invalid-skill", "io.example.bad/x"),
    }


def test_skills_text(installed, capsys):
    assert run_cli(["skills"], hub=installed) == 0
    out = capsys.readouterr().out
    assert "io.example.sql  example-sql 1.2" in out
    assert "  io.example.sql/alpha\n      Explore things." in out
    assert "invalid-skill: io.example.bad/x: skipped: no front matter" in out


def test_skills_show_prints_the_skill(installed, capsys):
    assert run_cli(["skills", "show", "io.example.sql/alpha"], hub=installed) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "io.example.sql/alpha  from example-sql 1.2"
    assert "allowed-tools: query" in out
    assert "resources: references/r.md" in out
    assert out.rstrip().endswith("Do the thing.")


def test_skills_show_json(installed, capsys):
    assert run_cli(["skills", "show", "io.example.sql/alpha", "--json"], hub=installed) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["id"] == "io.example.sql/alpha"
    assert shown["body"] == "# Body\n\nDo the thing."
    assert shown["resources"] == ["references/r.md"]


def test_skills_show_an_unknown_id_fails_and_lists_the_ids(installed, capsys):
    assert run_cli(["skills", "show", "io.example.sql/nope"], hub=installed) == 1
    err = capsys.readouterr().err
    assert "io.example.sql/alpha" in err
    assert "'io.example.sql/nope'" in err


def test_no_jars(capsys):
    assert run_cli(["skills"], hub=ToolHub(autoload=False, config={})) == 0
    assert "No skilljars are installed." in capsys.readouterr().out


def test_check_counts_skilljars_and_skills(installed, capsys):
    # The broken jar's skill is a fatal problem.
    assert run_cli(["check", "--json"], hub=installed) == 1
    report = json.loads(capsys.readouterr().out)
    # The broken jar is open (its one skill skipped): two jars, the healthy one's two skills.
    assert (report["skilljars_loaded"], report["skills"]) == (
        ["io.example.bad", "io.example.sql"],
        2,
    )
    run_cli(["check"], hub=installed)
    assert "2 skilljar(s) loaded, 2 skill(s) available" in capsys.readouterr().out
