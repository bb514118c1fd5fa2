"""A stdio MCP server with tools that wait, for the tests of cancellation and crashes.

``wait(seconds, marker)`` writes ``marker.started`` when it begins, ``marker.cancelled``
if the client cancels it, and returns ``done`` otherwise.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("slow")


@server.tool()
async def wait(seconds: float, marker: str) -> str:
    """Wait, then say done."""
    Path(marker + ".started").write_text("started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        Path(marker + ".cancelled").write_text("cancelled")
        raise
    return "done"


if __name__ == "__main__":
    server.run("stdio")
