"""``toolpalette list / show / plugins / check`` on a hub built in code.

The commands against installed packs are tested in ``tests/integration/test_cli_dists.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolpalette import ToolHub, tool
from toolpalette.testing import plugin_of, run_cli


@tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return key


@tool(name="lookup")
def lookup_again(key: str) -> str:
    """Look a key up, differently."""
    return key


@tool
def store(key: str, value: str) -> None:
    """Store a value under a key.

    A second paragraph that listings leave out.
    """


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


def test_list_prints_a_table(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    hub.add_plugin(plugin_of(lookup, store), name="kv")
    assert run_cli(["list"], hub=hub) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "NAME    MODE       PACK  DESCRIPTION",
        "lookup  read-only  kv    Look a key up.",
        "store   mutating   kv    Store a value under a key.",
    ]
    assert err == ""


def test_list_says_what_to_do_when_empty(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["list"], hub=hub) == 0
    assert "No tools available" in capsys.readouterr().out


def test_list_json(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    hub.add_plugin(plugin_of(store), name="kv")
    assert run_cli(["list", "--json"], hub=hub) == 0
    assert json.loads(capsys.readouterr().out) == {
        "tools": [
            {
                "name": "store",
                "description": (
                    "Store a value under a key.\n\nA second paragraph that listings leave out."
                ),
                "read_only": False,
                "pack": "kv",
                "distribution": None,
                "version": None,
            }
        ],
        "problems": [],
    }


def test_show_json_has_both_schemas(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    hub.add_plugin(plugin_of(lookup), name="kv")
    assert run_cli(["show", "lookup", "--json"], hub=hub) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["input_schema"]["properties"]["key"]["description"] == "The key."
    assert shown["output_schema"] is None
    assert shown["module"] == __name__
    assert shown["display_name"] == "Lookup"


def test_show_an_unknown_tool(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    hub.add_plugin(plugin_of(lookup), name="kv")
    assert run_cli(["show", "nope"], hub=hub) == 1
    assert "Available tools: lookup" in capsys.readouterr().err


def test_plugins_json_and_text(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    hub.add_plugin(plugin_of(lookup), name="kv")
    assert run_cli(["plugins", "--json"], hub=hub) == 0
    (entry,) = json.loads(capsys.readouterr().out)["plugins"]
    assert entry["hooks"] == ["toolpalette_register_tools"]
    assert (entry["imported"], entry["status"]) == (True, "loaded")
    assert run_cli(["plugins"], hub=hub) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == [
        "kv",
        "loaded",
        "-",
        "-",
        "toolpalette_register_tools",
    ]


def test_check_passes_without_problems(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    hub.add_plugin(plugin_of(lookup), name="kv")
    assert run_cli(["check"], hub=hub) == 0
    assert capsys.readouterr().out.strip() == (
        "OK: 1 pack(s) loaded, 1 tool(s) available, "
        "0 skilljar(s) loaded, 0 skill(s) available, no problems."
    )


def test_check_fails_on_a_collision(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    hub.add_plugin(plugin_of(lookup), name="one")
    hub.add_plugin(plugin_of(lookup_again), name="two")
    assert run_cli(["check"], hub=hub) == 1
    out = capsys.readouterr().out
    assert "error: collision: one, two [lookup]" in out
    assert run_cli(["check", "--json"], hub=hub) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert [p["kind"] for p in report["problems"]] == ["collision"]
    assert report["problems"][0]["fatal"] is True


def _json_blocks() -> list[Any]:
    from pathlib import Path

    guide = Path(__file__).resolve().parents[3] / "docs" / "host-guide" / "discovering-packs.md"
    text = guide.read_text(encoding="utf-8")
    blocks = [part.split("```", 1)[0] for part in text.split("```json\n")[1:]]
    return [json.loads(block) for block in blocks]


def test_the_host_guide_documents_the_json_keys(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    listing, plugins, check = _json_blocks()
    hub.add_plugin(plugin_of(lookup, lookup_again, store), name="kv")

    def run(*argv: str) -> Any:
        run_cli([*argv, "--json"], hub=hub)
        return json.loads(capsys.readouterr().out)

    real = run("list")
    assert set(listing) == set(real)
    assert set(listing["tools"][0]) == set(real["tools"][0])
    assert set(listing["problems"][0]) == set(real["problems"][0])  # lookup collides with itself
    assert set(plugins["plugins"][0]) == set(run("plugins")["plugins"][0])
    assert set(check) == set(run("check"))


def test_with_no_tools_list_points_at_what_exists(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["list"], hub=hub) == 0
    out = capsys.readouterr().out
    assert "pip install ./plugins/toolpalette-files" in out
    assert "toolpalette new pack NAME" in out
    assert "pip install toolpalette-" not in out  # no such distribution on any index


class Opaque:
    """Something pydantic cannot serialize."""


def opaque() -> Opaque:
    """Return an opaque object."""
    return Opaque()


def test_check_flags_a_return_annotation_that_cannot_be_serialized(
    hub: ToolHub, capsys: pytest.CaptureFixture[str]
):
    # The pack's hook returns the function; the tool is refused when its provider is
    # built, so check reports it before any call could fail.
    hub.add_plugin(plugin_of(lookup, tool(read_only=True)(opaque)), name="kv")
    assert run_cli(["check", "--json"], hub=hub) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    [problem] = [p for p in problems if p["item"] == "opaque"]
    assert problem["kind"] == "invalid-tool"
    assert "return annotation Opaque cannot be serialized to JSON" in problem["reason"]
    assert run_cli(["list", "--json"], hub=hub) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)["tools"]] == ["lookup"]
