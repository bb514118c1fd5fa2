"""``check`` on links between tools and skills, ``show`` of their skills, ``--findable``."""

from __future__ import annotations

import json

import pytest
from toolpalette import Skill, ToolHub, tool
from toolpalette.testing import plugin_of, run_cli


@tool(read_only=True, skills=["io.example.db/write-sql", "io.example.db/gone"])
def run_query(sql: str) -> str:
    """Run one read-only SQL query against the database."""
    return sql


@tool(read_only=True)
def forecast(city: str) -> str:
    """The weather forecast of a city.

    Args:
        city: The city, by name.
    """
    return city


@tool(read_only=True)
def forecast_hourly(city: str) -> str:
    """The weather forecast of a city, hour by hour.

    Args:
        city: The city, by name.
    """
    return city


def _forecast(name: str) -> object:
    def forecast(city: str) -> str:
        """The weather forecast of a city.

        Args:
            city: The city, by name.
        """
        return city

    return tool(read_only=True, name=name)(forecast)


WRITE_SQL = Skill("write-sql", "Write safe SQL queries.", bundle="io.example.db", body="Bind.")
MIGRATE = Skill(
    "migrate",
    "Change a schema safely.",
    bundle="io.example.db",
    body="Back up first.",
    metadata={"toolpalette.requires": "run_query describe_table"},
)


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(plugin_of(run_query), name="db")
    return hub


def test_check_notes_a_link_to_a_skill_not_installed(
    hub: ToolHub, capsys: pytest.CaptureFixture[str]
):
    hub.skills().add_skills([WRITE_SQL], pack="code", distribution=None)
    assert run_cli(["check"], hub=hub) == 0  # the tool works without it
    out = capsys.readouterr().out
    assert "note: skill-link: db [run_query]" in out
    assert "names the skill io.example.db/gone, which is not installed" in out
    assert "write-sql" not in out


def test_check_fails_on_a_skill_whose_required_tool_is_missing(
    hub: ToolHub, capsys: pytest.CaptureFixture[str]
):
    hub.skills().add_skills([WRITE_SQL, MIGRATE], pack="code", distribution=None)
    assert run_cli(["check", "--json"], hub=hub) == 1
    report = json.loads(capsys.readouterr().out)
    [problem] = [p for p in report["problems"] if p["kind"] == "skill-requirement"]
    assert problem["item"] == "io.example.db/migrate"
    assert "describe_table" in problem["reason"]
    assert "run_query" not in problem["reason"]
    assert problem["fatal"] is True


def test_show_lists_a_tools_skills(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["show", "run_query", "--json"], hub=hub) == 0
    assert json.loads(capsys.readouterr().out)["skills"] == [
        "io.example.db/write-sql",
        "io.example.db/gone",
    ]
    assert run_cli(["show", "run_query"], hub=hub) == 0
    assert "skills: io.example.db/write-sql, io.example.db/gone" in capsys.readouterr().out


def test_check_findable_reports_a_tool_its_own_words_do_not_find(
    capsys: pytest.CaptureFixture[str],
):
    hub = ToolHub(autoload=False, config={})
    # Seven tools answer "weather forecast of a city" better than the hourly one does.
    crowd = [_forecast(f"forecast_{i}") for i in range(6)]
    hub.add_plugin(plugin_of(forecast, *crowd, forecast_hourly), name="weather")
    assert run_cli(["check", "--findable", "--json"], hub=hub) == 0
    report = json.loads(capsys.readouterr().out)
    by_description = {e["tool"] for e in report["findable"] if e["source"] == "description"}
    # Seven tools say the same; ties keep catalog order, so the last two are not found.
    # The hourly one's description has a word of its own ("hour"): it is found.
    assert by_description == {"forecast_4", "forecast_5"}
    missed = {e["tool"] for e in report["findable"]}
    assert "forecast_hourly" in missed  # but its parameters are everyone's: "city"
    for entry in report["findable"]:
        assert set(entry) == {"tool", "source", "query", "rank", "outranked_by"}
        assert len(entry["outranked_by"]) == 5
        assert entry["tool"] not in entry["outranked_by"]
    assert run_cli(["check", "--findable"], hub=hub) == 0
    out = capsys.readouterr().out
    assert f"findable: {len(missed)} of 8 tool(s) are not in the top 5" in out


def test_check_findable_says_when_every_tool_is_found(
    hub: ToolHub, capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["check", "--findable"], hub=hub) == 0
    assert "every one of 1 tool(s) ranks in the top 5 of its own queries" in capsys.readouterr().out
