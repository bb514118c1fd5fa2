"""A flood of abandoned sessions: memory flat, and another client still served.

``BENCH_SESSION_FLOOD`` (default 100,000) ``initialize`` requests without a ``DELETE``
reach a stateful palette app (in process, through httpx's ASGI transport) from one
client address; the table gives the process's resident memory after a tenth of them
and after all, how many were refused (429 at the per-client cap), and whether a client
from another address could still open a session. Goal (issue: faults round 4, item
13): the ratio of the two memories stays under 1.1.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import httpx
import toolpalette.mcp
from toolpalette import Thinker, ToolHub, ToolSelector, tool

from bench._summary import record

FLOOD = int(os.environ.get("BENCH_SESSION_FLOOD", "100000"))
HELLO = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@tool(read_only=True)
def echo(text: str) -> str:
    """Say the text back."""
    return text


class Echo(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(echo)


def _rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * (os.sysconf("SC_PAGE_SIZE") // 1024)


async def _flood() -> tuple[int, int, dict[int, int], int]:
    app: Any = toolpalette.mcp.asgi_app(ToolHub(autoload=False, config={}), Echo)
    statuses: dict[int, int] = {}
    async with app.router.lifespan_context(app):
        flood = httpx.ASGITransport(app=app, client=("203.0.113.7", 4000))
        other = httpx.ASGITransport(app=app, client=("198.51.100.9", 4000))
        async with httpx.AsyncClient(transport=flood, base_url="http://127.0.0.1:8000") as c:
            early = 0
            for i in range(FLOOD):
                answer = await c.post("/mcp", json=HELLO, headers=HEADERS)
                statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
                if i + 1 == FLOOD // 10:
                    early = _rss_kib()
            late = _rss_kib()
        async with httpx.AsyncClient(transport=other, base_url="http://127.0.0.1:8000") as c:
            opened = (await c.post("/mcp", json=HELLO, headers=HEADERS)).status_code
    return early, late, statuses, opened


def main(argv: list[str]) -> None:
    del argv
    early, late, statuses, opened = asyncio.run(_flood())
    print(f"\n## A flood of {FLOOD:,} abandoned sessions from one client\n")
    print("| RSS after a tenth | RSS after all | ratio | answers | another client |")
    print("|---|---|---|---|---|")
    answers = ", ".join(f"{n:,} x {status}" for status, n in sorted(statuses.items()))
    print(
        f"| {early / 1024:,.1f} MiB | {late / 1024:,.1f} MiB | {late / early:.2f} | "
        f"{answers} | {opened} |"
    )
    record("session flood memory, all / a tenth", late, "a tenth", early, unit="KiB", goal="<= 1.1")
