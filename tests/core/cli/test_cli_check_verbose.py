"""``toolpalette check -v``: for a problem raised by a pack's code, the message and the place.

Without ``-v`` the report is as before; the problem's reason never holds a path.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolpalette import ToolHub, hookimpl
from toolpalette.testing import run_cli

PACK = """\
from toolpalette import hookimpl


@hookimpl
def toolpalette_register_tools():
    tools = []
    assert tools
    return tools
"""
"""A pack whose hook fails a bare ``assert``: an AssertionError with no message (line 7)."""


class Raising:
    """A pack whose hook raises with a message of two lines."""

    @hookimpl
    def toolpalette_register_tools(self) -> list[Any]:
        raise RuntimeError("the catalog is broken\nsee the pack's log")


def _line_of(cls: type, text: str) -> int:
    lines, start = inspect.getsourcelines(cls)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolHub]:
    (tmp_path / "asserting_pack.py").write_text(PACK)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(importlib.import_module("asserting_pack"), name="asserting")
    hub.add_plugin(Raising(), name="raising")
    yield hub
    sys.modules.pop("asserting_pack", None)


def test_check_v_shows_where_a_hook_raised(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["check", "-v"], hub=hub) == 1
    out = capsys.readouterr().out
    here = Path(__file__)
    assert "    toolpalette_register_tools raised AssertionError\n" in out
    # The pack's file relative to the current directory, the line, the function, the source.
    place = "asserting_pack.py:7 in toolpalette_register_tools: assert tools"
    assert f"      AssertionError\n        at {place}\n" in out
    assert "RuntimeError: the catalog is broken\n" in out
    assert "      see the pack's log" in out  # the whole message, indented under the problem
    assert f"{here.name}:{_line_of(Raising, 'raise RuntimeError')} in " in out


def test_check_without_v_is_unchanged(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["check"], hub=hub) == 1
    out = capsys.readouterr().out
    assert "    toolpalette_register_tools raised AssertionError\n" in out
    assert "    toolpalette_register_tools raised RuntimeError: the catalog is broken\n" in out
    assert Path(__file__).name not in out
    assert "asserting_pack.py" not in out
    assert "see the pack's log" not in out


def test_check_json_v_has_the_detail(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["check", "--json", "-v"], hub=hub) == 1
    problems = {p["pack"]: p for p in json.loads(capsys.readouterr().out)["problems"]}
    assert problems["asserting"]["detail"].startswith("AssertionError\n  at ")
    assert problems["raising"]["detail"].startswith("RuntimeError: the catalog is broken\n")
    assert run_cli(["check", "--json"], hub=hub) == 1
    plain = json.loads(capsys.readouterr().out)["problems"]
    assert all("detail" not in p for p in plain)


def test_the_reason_holds_no_path_and_the_detail_does_not_change_equality(hub: ToolHub):
    hub.catalog()
    for problem in hub.problems():
        assert Path(__file__).name not in problem.reason
        assert "asserting_pack.py" not in problem.reason
        assert problem.detail is not None
        assert problem == type(problem)(
            problem.kind, problem.reason, problem.pack, problem.distribution, problem.item
        )
