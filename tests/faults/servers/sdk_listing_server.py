"""An SDK stdio server whose tools are read from a file at each listing, with a ``ttlMs``.

Its one argument names a plan (JSON): ``tools_file`` (a JSON list of tool
descriptions), ``ttl_ms`` (the hint each listing carries; 2026-07-28 sessions only) and
``log`` (a file each ``tools/list`` appends a line to). Every call answers ``ok``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

PLAN: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text())


async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    with open(PLAN["log"], "a") as log:
        log.write("tools/list\n")
    described = json.loads(Path(PLAN["tools_file"]).read_text())
    tools = [types.Tool.model_validate(tool) for tool in described]
    return types.ListToolsResult(tools=tools, ttl_ms=int(PLAN.get("ttl_ms", 0)))


async def on_call_tool(_ctx: Any, _params: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


async def main() -> None:
    server: Server[Any] = Server("listing", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
