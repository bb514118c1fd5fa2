"""Scalars cross between toolpalette and FastMCP as themselves, both ways.

FastMCP wraps a tool's non-object result in ``{"result": VALUE}`` under an output schema
marked ``x-fastmcp-wrap-result``; toolpalette marks its own ``x-toolpalette-wrapped``.
A toolpalette server writes both markers, and its client unwraps either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
import toolpalette.mcp
from mcp import Client
from mcp.server import Server
from toolpalette import Executor, Thinker, ToolHub, ToolSelector, tool
from toolpalette.mcp import MCPServerConfig


def fastmcp_like_server() -> Server[Any]:
    """A server whose ``count`` answers an int the way FastMCP sends one."""
    schema = {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
        "x-fastmcp-wrap-result": True,
    }
    listed = [
        types.Tool(
            name="count",
            description="Count.",
            input_schema={"type": "object"},
            output_schema=schema,
        )
    ]

    async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(_ctx: Any, _params: Any) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="42")], structured_content={"result": 42}
        )

    return Server("fastmcp-like", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def test_a_fastmcp_wrapped_int_arrives_as_an_int(make_hub: Callable[..., ToolHub]):
    hub = make_hub(mcp_servers={"f": MCPServerConfig(name="f", server=fastmcp_like_server())})
    result = Executor(hub.catalog()).execute_sync("count", {})
    assert not result.is_error
    assert result.text == "42"
    assert result.structured == {"result": 42}


@tool(read_only=True)
def answer() -> int:
    """The answer."""
    return 42


class Answering(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(answer)


async def test_a_toolpalette_int_carries_fastmcps_marker_too():
    server = toolpalette.mcp.server(ToolHub(autoload=False, config={}), Answering)
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        called = await client.call_tool("answer", {})
    schema = listed["answer"].output_schema or {}
    assert schema["x-fastmcp-wrap-result"] is True
    assert schema["x-toolpalette-wrapped"] is True
    assert called.structured_content == {"result": 42}
