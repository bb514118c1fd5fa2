"""The palette ``bench_serve`` serves: a trivial async tool and 1,000 listed ones.

The same tools, as a toolpalette thinker (for ``toolpalette serve --thinker
bench.serve_palette:Bench``) and as the mcp SDK's high-level ``MCPServer`` (run with
``python -m bench.serve_palette`` to serve it over stdio).
"""

from __future__ import annotations

from typing import Any

import toolpalette
from toolpalette import Thinker, ToolSelector

LISTED = 1000


async def aadd(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _listed(i: int) -> Any:
    async def lookup(key: str, limit: int = 10) -> str:
        return key

    lookup.__name__ = f"lookup_{i:04d}"
    lookup.__doc__ = f"Look a key up in table {i} and return at most limit rows."
    return lookup


FUNCTIONS = [aadd, *(_listed(i) for i in range(LISTED - 1))]
"""1,000 tools: ``aadd`` and 999 lookups."""
TOOLS = [toolpalette.tool(read_only=True)(fn) for fn in FUNCTIONS]


class Bench(Thinker):
    """Offers the 1,000 tools."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector()
        for tool in TOOLS:
            selector.tool(tool)
        return selector


def anchor() -> Any:
    """The same tools in the SDK's high-level ``MCPServer``."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("anchor")
    for fn in FUNCTIONS:
        server.add_tool(fn, name=fn.__name__)
    return server


if __name__ == "__main__":
    anchor().run("stdio")
