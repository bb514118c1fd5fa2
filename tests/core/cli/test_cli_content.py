"""``toolpalette list --content`` and ``check``: the packs' prompts and resources."""

from __future__ import annotations

import json

import pytest
import toolpalette
from toolpalette import ToolHub
from toolpalette.testing import run_cli


@toolpalette.prompt
def summarize(text: str, style: str = "short") -> str:
    """Summarize a text."""
    return f"Summarize ({style}): {text}"


@toolpalette.resource("notes://{day}", mime_type="text/markdown")
def notes(day: str) -> str:
    """The notes of a day."""
    return f"# {day}"


class Hooks:
    @toolpalette.hookimpl
    def toolpalette_register_prompts(self) -> object:
        return [summarize, "not a prompt"]

    @toolpalette.hookimpl
    def toolpalette_register_resources(self) -> object:
        return [notes]


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False)
    hub.add_plugin(Hooks(), name="notes")
    return hub


def test_list_content_shows_prompts_and_templates(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["list", "--content"], hub=hub) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0].split() == ["KIND", "NAME", "OR", "URI", "ARGUMENTS", "OR", "TYPE", "PACK"]
    assert lines[1].split() == ["prompt", "summarize", "text,", "style?", "notes"]
    assert lines[2].split() == ["template", "notes://{day}", "text/markdown", "notes"]
    assert "1 problem(s) found" in out.err


def test_list_content_json(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["list", "--content", "--json"], hub=hub) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["prompts"][0]["arguments"] == [
        {"name": "text", "required": True},
        {"name": "style", "required": False},
    ]
    assert listing["resources"][0] == {
        "uri": "notes://{day}",
        "templated": True,
        "mime_type": "text/markdown",
        "pack": "notes",
        "read_only": True,
    }


def test_check_counts_them_and_reports_the_garbage(
    hub: ToolHub, capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["check", "--json"], hub=hub) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["prompts"], report["resources"]) == (1, 1)
    assert [p["kind"] for p in report["problems"]] == ["garbage"]
