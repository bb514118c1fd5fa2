"""A stdio MCP server with one read-only tool, for the tests of configuration and trust.

``look(text)`` says it looked at the text; it is annotated ``readOnlyHint: true``, so it
is read-only exactly when the host trusts the server.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def look(text: str) -> str:
    """Look at a text."""
    return f"looked at {len(text)} characters"


if __name__ == "__main__":
    server.run("stdio")
