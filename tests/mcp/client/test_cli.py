"""``toolpalette list``, ``show``, ``check`` and ``call`` with MCP servers configured.

A server starts only when its tools are listed and no listing of it is kept from an
earlier run, or when one of its tools is called (``check`` always lists live).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from toolpalette import Thinker, ToolHub, ToolSelector, tool
from toolpalette.testing import leak_check, plugin_of, run_cli

from .conftest import PROCESS_WAIT, SLOW_SERVER


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


# -- servers start only when needed -------------------------------------------------------

RAW = Path(__file__).parents[2] / "faults" / "servers" / "raw_server.py"


@tool(read_only=True)
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


def marking(marker: Path) -> dict[str, object]:
    """A server that writes ``marker`` (its pid) when it starts, with one tool, ``ping``."""
    plan = {
        "tools": [{"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}],
        "calls": {"ping": {"do": "text", "text": "pong"}},
        "pid": str(marker),
    }
    path = marker.with_suffix(".plan.json")
    if not path.exists():  # written once: the server's kept listing is keyed on its files
        path.write_text(json.dumps(plan))
    return {"command": sys.executable, "args": [str(RAW), str(path)]}


@pytest.fixture
def lazy_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], ToolHub]]:
    """Hubs with a pack's tool (``shout``) and the marking server, sharing one cache.

    The test runs under a leak check: every hub is closed, and then no thread, process
    or descriptor the test started may be left.
    """
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    hubs: list[ToolHub] = []

    def make() -> ToolHub:
        hub = ToolHub(
            autoload=False, config={}, mcp_servers={"lazy": marking(tmp_path / "started")}
        )
        hubs.append(hub)
        hub.add_plugin(plugin_of(shout), name="local")
        return hub

    with leak_check(deadline=PROCESS_WAIT):
        yield make
        for hub in hubs:
            hub.close()


def test_a_call_of_a_packs_tool_starts_no_server(
    lazy_hub: Callable[[], ToolHub], tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["call", "shout", "--input", '{"text": "hi"}'], hub=lazy_hub()) == 0
    assert capsys.readouterr().out.strip() == "HI"
    assert not (tmp_path / "started").exists()
    # A server's tool is found by starting the servers not listed yet.
    assert run_cli(["call", "ping"], hub=lazy_hub()) == 0
    assert capsys.readouterr().out.strip() == "pong"
    assert (tmp_path / "started").exists()


def test_list_and_thinkers_use_the_listing_kept_from_the_servers_last_run(
    lazy_hub: Callable[[], ToolHub], tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    started = tmp_path / "started"
    assert run_cli(["list", "--json"], hub=lazy_hub()) == 0
    live = json.loads(capsys.readouterr().out)
    assert started.exists()  # listed live once, and kept
    started.unlink()
    assert run_cli(["list", "--json"], hub=lazy_hub()) == 0
    assert json.loads(capsys.readouterr().out) == live
    assert not started.exists()

    class Pinger(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().mcp_server("lazy")

    thinker = lazy_hub().bind(Pinger)
    assert set(thinker.begin_turn().tool_names) == {"ping"}
    assert not started.exists()  # the kept listing offers the tools; nothing started
    assert asyncio.run(thinker.call("ping", {})).text == "pong"
    assert started.exists()  # the call started the server
    started.unlink()
    assert run_cli(["check"], hub=lazy_hub()) == 0
    assert started.exists()  # check lists every server live
