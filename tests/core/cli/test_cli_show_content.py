"""``toolpalette show`` of a pack's prompt, resource or template, and of a name nothing has."""

from __future__ import annotations

import json

import pytest
import toolpalette
from toolpalette import ToolHub
from toolpalette.testing import plugin_of, run_cli


@toolpalette.prompt(title="Summary", completions={"style": ["short", "long"]})
def summarize(text: str, style: str = "short") -> str:
    """Summarize a text.

    Args:
        text: the text to summarize.
        style: how long the summary is.
    """
    return f"Summarize ({style}): {text}"


@toolpalette.resource("notes://{day}", mime_type="text/markdown", completions={"day": lambda p: []})
def notes(day: str) -> str:
    """The notes of a day."""
    return f"# {day}"


@toolpalette.resource("notes://index", read_only=False)
def index() -> dict[str, str]:
    """Every day's note."""
    return {}


@toolpalette.tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up."""
    return key


class Hooks:
    @toolpalette.hookimpl
    def toolpalette_register_prompts(self) -> object:
        return [summarize]

    @toolpalette.hookimpl
    def toolpalette_register_resources(self) -> object:
        return [notes, index]


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False)
    hub.add_plugin(Hooks(), name="notes")
    hub.add_plugin(plugin_of(lookup), name="kv")
    return hub


def shown(hub: ToolHub, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = run_cli(["show", *argv], hub=hub)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_prompt_shows_its_arguments_completions_and_pack(hub: ToolHub, capsys):
    status, out, _ = shown(hub, capsys, "summarize")
    assert status == 0
    assert out.splitlines() == [
        "summarize (prompt, read-only) - Summary",
        "pack: notes",
        "",
        "Summarize a text.",
        "",
        "arguments:",
        "  text (required): the text to summarize.",
        "  style: how long the summary is. [completions: short, long]",
    ]
    status, out, _ = shown(hub, capsys, "summarize", "--json")
    entry = json.loads(out)
    assert (entry["kind"], entry["pack"], entry["asks_the_client"]) == ("prompt", "notes", False)
    assert entry["arguments"][0] == {
        "name": "text",
        "description": "the text to summarize.",
        "required": True,
    }
    assert entry["completions"] == {"style": ["short", "long"]}


def test_a_resource_and_a_template_show_their_uri_mime_type_and_completions(hub: ToolHub, capsys):
    status, out, _ = shown(hub, capsys, "notes://index")
    assert status == 0
    assert out.splitlines()[:3] == [
        "notes://index (resource, mutating) - index",
        "pack: notes",
        "mime type: by what it returns (text, bytes or JSON)",
    ]
    status, out, _ = shown(hub, capsys, "notes://{day}")
    assert out.splitlines()[0] == "notes://{day} (template, read-only) - notes"
    assert "mime type: text/markdown" in out
    assert "  day [completions: computed from what is typed]" in out
    status, out, _ = shown(hub, capsys, "notes://monday", "--json")  # a URI it matches
    entry = json.loads(out)
    assert status == 0
    assert (entry["kind"], entry["uri"], entry["mime_type"]) == (
        "template",
        "notes://{day}",
        "text/markdown",
    )
    assert entry["matched"] == {"uri": "notes://monday", "parameters": {"day": "monday"}}


def test_a_tool_still_shows_first(hub: ToolHub, capsys):
    status, out, _ = shown(hub, capsys, "lookup", "--json")
    assert status == 0
    assert json.loads(out)["input_schema"]["required"] == ["key"]


@pytest.mark.parametrize(
    ("name", "near"),
    [
        ("sumarize", "note: near names: 'summarize' (prompt)"),
        ("notes://mon/day", "'notes://index' (resource)"),
        ("notes://mon/day", "'notes://{day}' (template)"),
    ],
)
def test_a_name_nothing_has_is_an_error_listing_near_names(
    hub: ToolHub, capsys, name: str, near: str
):
    status, out, err = shown(hub, capsys, name)
    assert status == 1
    assert out == ""
    assert f"{name!r} is not available: no tool, prompt or resource has that name or URI" in err
    assert "Available tools: lookup." in err
    assert near in err


def test_without_prompts_or_resources_an_unknown_name_is_the_tools_error(capsys):
    hub = ToolHub(autoload=False)
    hub.add_plugin(plugin_of(lookup), name="kv")
    status, _, err = shown(hub, capsys, "lokup")
    assert status == 1
    assert "Available tools: lookup" in err
    assert "did you mean 'lookup'?" in err
    assert "near names" not in err
