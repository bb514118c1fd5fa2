"""A stdio MCP server whose listing offers tools with schemas no validator can bound.

For the fault tests of schema bounds: ``doubling`` checks one value against 2**40
subschemas (``allOf`` of two ``$ref`` to the level below, forty deep), ``patterns`` has
600 patterns too costly to compile, ``cycle`` is a ``$ref`` that comes back to the same
value, and ``fine`` is a tool any client may call.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server


def doubling() -> dict[str, Any]:
    """allOf of two $ref to the level below, forty levels deep: 2**40 subschemas a value."""
    defs: dict[str, Any] = {"d0": {"type": "integer"}}
    for level in range(1, 41):
        below = {"$ref": f"#/$defs/d{level - 1}"}
        defs[f"d{level}"] = {"allOf": [below, dict(below)]}
    return {"type": "object", "$defs": defs, "properties": {"n": {"$ref": "#/$defs/d40"}}}


def patterns() -> dict[str, Any]:
    """600 distinct patterns, each compiling to a large automaton (``\\w`` repeated)."""
    fields = {f"p{i}": {"type": "string", "pattern": f"^\\w{{8}}{i}$"} for i in range(600)}
    return {"type": "object", "properties": fields}


def cycle() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/a"}},
    }


TOOLS = [
    types.Tool(name="doubling", description="Doubles.", input_schema=doubling()),
    types.Tool(name="patterns", description="Patterns.", input_schema=patterns()),
    types.Tool(name="cycle", description="Cycles.", input_schema=cycle()),
    types.Tool(
        name="fine",
        description="Fine.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    ),
]


async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(_ctx: Any, params: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


async def main() -> None:
    server: Server[Any] = Server("schemas", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    import anyio

    anyio.run(main)
