"""``[mcp_servers.NAME] exclude = [...]`` leaves tools out; a bad table is filed under mcp:NAME."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from toolpalette import ToolHub
from toolpalette.mcp import MCPServerConfig

from .test_fastmcp_wrapped import fastmcp_like_server
from .test_provider import hinted_server


def test_exclude_leaves_the_named_tools_out(make_hub: Callable[..., ToolHub]):
    config = MCPServerConfig(name="s", server=hinted_server(), exclude=("append",))
    hub = make_hub(mcp_servers={"s": config})
    assert [p.name for p in hub.providers_for_server("s")] == ["bare"]


def test_exclude_names_the_servers_own_names_before_a_prefix(make_hub: Callable[..., ToolHub]):
    config = MCPServerConfig(
        name="f", server=fastmcp_like_server(), prefix="f_", exclude=("count",)
    )
    hub = make_hub(
        mcp_servers={"f": config, "s": MCPServerConfig(name="s", server=hinted_server())}
    )
    assert hub.providers_for_server("f") == []
    assert sorted(p.name for p in hub.providers_for_server("s")) == ["append", "bare"]


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ({"command": "x", "exclude": "delete_repo"}, "'exclude' must be a list of tool names"),
        ({"command": "x", "exclude": [1]}, "'exclude' must be a list of tool names"),
        ({"comand": "x"}, "unknown keys 'comand'"),
    ],
)
def test_a_bad_table_is_filed_under_its_server(
    make_hub: Callable[..., ToolHub], table: dict[str, Any], why: str
):
    hub = make_hub(mcp_servers={"github": table, "good": {"command": "good-server"}})
    assert hub.mcp_server_names() == ["good"]
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack) == ("server", "mcp:github")
    assert why in problem.reason


def test_a_table_read_from_a_file_takes_exclude(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"x": {"command": "x-server", "exclude": ["wipe"]}})
    assert hub.mcp().connection("x").config.exclude == ("wipe",)
