"""An MCP server whose ``crawl(pages)`` reports its progress, page by page.

It reports ``done`` of ``pages`` with a message for each page, then one report without
a total, and answers ``crawled N``; the tests run it in-process (:data:`server`) and
over stdio (this file as a script).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("progress")


@server.tool()
async def crawl(pages: int, ctx: Context) -> str:
    """Crawl some pages, reporting each one."""
    for done in range(1, pages + 1):
        await ctx.report_progress(done, pages, f"page {done}")
    await ctx.report_progress(pages + 1)
    return f"crawled {pages}"


if __name__ == "__main__":
    server.run("stdio")
