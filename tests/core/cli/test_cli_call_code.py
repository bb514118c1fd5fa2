"""``toolpalette call run_code``: a script over the catalog's tools, each call in the pipeline."""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolpalette import ToolHub, hookimpl, tool
from toolpalette.testing import run_cli

pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def remove(path: str) -> str:
    """Remove a file (mutating)."""
    return f"removed {path}"


class Pack:
    @hookimpl
    def toolpalette_register_tools(self) -> list[Any]:
        return [add, remove]


@pytest.fixture
def hub() -> ToolHub:
    made = ToolHub(autoload=False, config={})
    made.add_plugin(Pack(), name="demo")
    return made


def test_a_script_calls_the_catalogs_tools(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    code = "x = add(a=1, b=2)\nprint('x is', x)\nadd(a=x, b=10)"
    assert run_cli(["call", "run_code", "--input", json.dumps({"code": code})], hub=hub) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"result": 13, "printed": "x is 3\n", "calls": 2}


def test_read_only_holds_for_the_scripts_calls(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    code = "try:\n    remove(path='a')\nexcept Exception as e:\n    r = str(e)\nr"
    argv = ["call", "run_code", "--input", json.dumps({"code": code}), "--read-only"]
    assert run_cli(argv, hub=hub) == 0
    result = json.loads(capsys.readouterr().out)["result"]
    assert "not defined" in result or result.startswith("403")


def test_a_failed_script_exits_1(hub: ToolHub, capsys: pytest.CaptureFixture[str]):
    argv = ["call", "run_code", "--input", json.dumps({"code": "1/0"}), "--json"]
    assert run_cli(argv, hub=hub) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["status"], data["code"]) == (400, "script_error")
    assert "ZeroDivisionError" in data["text"]
