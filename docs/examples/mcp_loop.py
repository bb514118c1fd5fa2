"""A thinker answering MCP ``tools/list`` and ``tools/call`` requests, in JSON-RPC.

This is the loop from the server's side, for a host with a transport of its own (the
ready-made server is ``toolpalette serve``): the client lists the tools and calls them,
and each request is answered with the thinker's palette and pipeline. Run it to see a
listing and one call: ``python docs/examples/mcp_loop.py``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from toolpalette import Thinker, ToolHub, ToolSelector, tool


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: The city, e.g. "Oslo".
    """
    return f"Sunny and 21 degrees in {city}."


class Assistant(Thinker):
    """The agent kind: what it may use."""

    read_only = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        """Only the weather tool."""
        return ToolSelector().tool(weather)


async def handle(thinker: Thinker, request: dict[str, Any]) -> dict[str, Any]:
    """Answer one JSON-RPC request: ``tools/list`` or ``tools/call``."""
    method = request.get("method")
    if method == "tools/list":
        turn = thinker.begin_turn()
        return {"jsonrpc": "2.0", "id": request["id"], "result": {"tools": turn.schemas("mcp")}}
    if method == "tools/call":
        turn = thinker.begin_turn()
        [call] = turn.calls_from("mcp", request)
        result = await thinker.call(call.name, call.input, call_id=call.id)
        return {"jsonrpc": "2.0", "id": request["id"], "result": call.reply(result)}
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return {"jsonrpc": "2.0", "id": request.get("id"), "error": error}


async def demo() -> None:
    """List the tools, then call one, printing each answer."""
    thinker = ToolHub().bind(Assistant)
    listing = await handle(thinker, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    print(json.dumps(listing, indent=2))
    params = {"name": "weather", "arguments": {"city": "Oslo"}}
    answer = await handle(
        thinker, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    )
    print(json.dumps(answer, indent=2))


if __name__ == "__main__":
    asyncio.run(demo())
