"""``toolpalette list``, ``show`` and ``check`` with MCP servers configured."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import pytest
from toolpalette import ToolHub
from toolpalette.testing import run_cli

from .conftest import SLOW_SERVER


def servers() -> dict[str, dict[str, object]]:
    return {
        "slow": {"command": sys.executable, "args": [str(SLOW_SERVER)], "prefix": "s_"},
        "ghost": {"command": "/nonexistent/mcp-server"},
    }


def test_list_json_names_each_tools_server(
    make_hub: Callable[..., ToolHub], capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["list", "--json"], hub=make_hub(mcp_servers=servers())) == 0
    listing = json.loads(capsys.readouterr().out)
    (tool,) = listing["tools"]
    assert (tool["name"], tool["server"], tool["read_only"]) == ("s_wait", "slow", False)
    assert [(p["kind"], p["pack"]) for p in listing["problems"]] == [("server", "mcp:ghost")]


def test_show_says_which_server(
    make_hub: Callable[..., ToolHub], capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["show", "s_wait"], hub=make_hub(mcp_servers=servers())) == 0
    assert "MCP server slow" in capsys.readouterr().out


def test_check_fails_on_a_server_that_does_not_start(
    make_hub: Callable[..., ToolHub], capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["check"], hub=make_hub(mcp_servers=servers())) == 1
    out = capsys.readouterr().out
    assert "server: mcp:ghost" in out
    assert "the command was not found" in out
