"""The benchmark's hostile MCP server over stdio: results costly to check naively.

``unique(n)`` answers ``{"items": [{"i": 0}, ..., {"i": n - 1}]}`` under an output
schema whose ``uniqueItems`` a naive validator checks pair by pair (see
bench_mcp_client's stall case).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

UNIQUE = types.Tool(
    name="unique",
    description="Answer n distinct objects.",
    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    output_schema={
        "type": "object",
        "properties": {"items": {"type": "array", "uniqueItems": True}},
    },
)


async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[UNIQUE])


async def on_call_tool(_ctx: Any, params: Any) -> types.CallToolResult:
    n = int((params.arguments or {}).get("n", 0))
    items = [{"i": i} for i in range(n)]
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{n} items")],
        structured_content={"items": items},
    )


async def main() -> None:
    server: Server[Any] = Server("hostile", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    import anyio

    anyio.run(main)
