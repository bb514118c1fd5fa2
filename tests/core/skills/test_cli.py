"""``toolpalette skills`` and ``toolpalette skills show``."""

from __future__ import annotations

import json

import pytest
from toolpalette._cli import main


@pytest.fixture
def installed(monkeypatch, make_jar, skill_md):
    healthy = make_jar(
        "io.example.sql",
        {
            "alpha/SKILL.md": skill_md("alpha", "Explore things.", **{"allowed-tools": "query"}),
            "alpha/references/r.md": "ref",
            "Beta/SKILL.md": skill_md("Beta", "Loud."),
        },
        distribution="example-sql",
        version="1.2",
    )
    broken = make_jar(
        "io.example.bad", {"x/SKILL.md": "nothing"}, distribution="bad-jar", version="0.1"
    )
    monkeypatch.setattr("toolpalette._agents.host.discover", lambda group: [healthy, broken])


def test_skills_json_lists_bundles_skills_and_problems(installed, capsys):
    assert main(["skills", "--json"]) == 0
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
    assert main(["skills"]) == 0
    out = capsys.readouterr().out
    assert "io.example.sql  example-sql 1.2" in out
    assert "  io.example.sql/alpha\n      Explore things." in out
    assert "invalid-skill: io.example.bad/x: skipped: no front matter" in out


def test_skills_show_prints_the_skill(installed, capsys):
    assert main(["skills", "show", "io.example.sql/alpha"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "io.example.sql/alpha  from example-sql 1.2"
    assert "allowed-tools: query" in out
    assert "resources: references/r.md" in out
    assert out.rstrip().endswith("Do the thing.")


def test_skills_show_json(installed, capsys):
    assert main(["skills", "show", "io.example.sql/alpha", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["id"] == "io.example.sql/alpha"
    assert shown["body"] == "# Body\n\nDo the thing."
    assert shown["resources"] == ["references/r.md"]


def test_skills_show_an_unknown_id_fails_and_lists_the_ids(installed, capsys):
    assert main(["skills", "show", "io.example.sql/nope"]) == 1
    err = capsys.readouterr().err
    assert "io.example.sql/alpha" in err
    assert "'io.example.sql/nope'" in err


def test_no_jars(monkeypatch, capsys):
    monkeypatch.setattr("toolpalette._agents.host.discover", lambda group: [])
    assert main(["skills"]) == 0
    assert "No skilljars are installed." in capsys.readouterr().out


def test_check_counts_skilljars_and_skills(installed, capsys):
    assert main(["check", "--json"]) == 1  # the broken jar's skill is a fatal problem
    report = json.loads(capsys.readouterr().out)
    # The broken jar is open (its one skill skipped): two jars, the healthy one's two skills.
    assert (report["skilljars_loaded"], report["skills"]) == (
        ["io.example.bad", "io.example.sql"],
        2,
    )
    main(["check"])
    assert "2 skilljar(s) loaded, 2 skill(s) available" in capsys.readouterr().out
