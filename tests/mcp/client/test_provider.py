"""What a server's tool becomes: the hints a trusted server is believed on, and a tool that
must run as an MCP task offered like any other.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import mcp_types as types
import pytest
from mcp.server import Server
from toolpalette import Executor, Thinker, ToolHub, ToolSelector
from toolpalette.mcp import MCPServerConfig
from toolpalette.testing import run_cli

from .conftest import TASK_SERVER

HINTS = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


def hinted_server() -> Server[Any]:
    """A server listing ``append`` (additive, idempotent, closed-world) and ``bare`` (no hints)."""
    tools = [
        types.Tool(
            name="append",
            description="Append a line.",
            input_schema={"type": "object"},
            annotations=types.ToolAnnotations(
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        ),
        types.Tool(
            name="bare", description="Says nothing of itself.", input_schema={"type": "object"}
        ),
    ]

    async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    return Server("hinted", on_list_tools=on_list_tools)


class Everything(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("s")


def annotations_in_mcp_format(hub: ToolHub) -> dict[str, dict[str, Any]]:
    schemas = hub.bind(Everything).begin_turn().schemas("mcp")
    return {schema["name"]: schema["annotations"] for schema in schemas}


@pytest.mark.parametrize("trusted", [True, False])
def test_a_trusted_servers_hints_are_believed_and_an_untrusted_ones_are_not(
    make_hub: Callable[..., ToolHub], trusted: bool
):
    config = MCPServerConfig(name="s", server=hinted_server(), trusted=trusted)
    hub = make_hub(mcp_servers={"s": config})
    tools = {p.name: p for p in hub.providers_for_server("s")}
    append, bare = tools["append"], tools["bare"]
    assert dict(append.annotations) == HINTS  # as the server sent them, either way
    believed = (append.destructive, append.idempotent, append.open_world)
    assert believed == ((False, True, False) if trusted else (True, False, True))
    assert (append.info.destructive, append.info.idempotent) == believed[:2]
    # A tool that says nothing keeps MCP's defaults, trusted or not.
    assert (bare.read_only, bare.destructive, bare.idempotent, bare.open_world) == (
        False,
        True,
        False,
        True,
    )
    exported = annotations_in_mcp_format(hub)["append"]
    assert (exported["destructiveHint"], exported["idempotentHint"]) == believed[:2]
    assert exported["openWorldHint"] is believed[2]
    assert exported["readOnlyHint"] is False


def task_server() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(TASK_SERVER)]}


def test_a_tool_that_must_run_as_a_task_is_offered_and_answered_directly_when_the_server_does(
    make_hub: Callable[..., ToolHub],
):
    hub = make_hub(mcp_servers={"t": task_server()})
    tools = {p.name: p for p in hub.providers_for_server("t")}
    assert set(tools) == {"background", "plain"}
    assert (tools["background"].task_support, tools["plain"].task_support) == (
        "required",
        "optional",
    )
    assert hub.problems() == []
    # Called as a task (the server refuses any other call), answered with a plain result.
    executor = Executor(hub.catalog())
    background = executor.execute_sync("background", {})
    assert (background.is_error, background.text) == (False, "ran background")
    plain = executor.execute_sync("plain", {})
    assert (plain.is_error, plain.text) == (False, "ran plain")


def test_check_passes_a_server_whose_tool_must_run_as_a_task(
    make_hub: Callable[..., ToolHub], capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["check"], hub=make_hub(mcp_servers={"t": task_server()})) == 0
    assert "background" not in capsys.readouterr().out
