"""Refreshing an MCP server's listing never blocks an event loop.

The server here says its list changed, then never answers ``tools/list`` again. Before,
the next ``begin_turn()`` waited on the calling thread (the host's event loop, or
``toolpalette serve``'s) for a minute and more, and every new session waited again. Now
the last good listing serves while the refresh runs in the background; once the
refresh passes its deadline the server's tools are unavailable, with a problem, and
the next listing waits its back-off whoever asks. ``await thinker.abegin_turn()``
awaits the refresh instead, the loop turning meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from toolpalette import Thinker, ToolHub, ToolSelector, tool
from toolpalette.testing import await_until

pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")

RAW = Path(__file__).parent / "servers" / "raw_server.py"
WAIT = 60.0
"""Seconds given to what happens in the background (a refresh's 2-second deadline)."""


def stuck_server(log: Path, timeout: float) -> dict[str, Any]:
    """A server that answers ``change`` by saying its list changed, then lists no more."""
    tools = [
        {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
        for name in ("ping", "change")
    ]
    plan = {"tools": tools, "calls": {"change": {"do": "change"}}, "log": str(log)}
    path = log.with_suffix(".plan.json")
    path.write_text(json.dumps(plan))
    return {"command": sys.executable, "args": [str(RAW), str(path)], "timeout": timeout}


class Host(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("stuck")


@tool(read_only=True)
def note() -> str:
    """A tool the host offers for one turn."""
    return "noted"


def listings(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


async def changed(hub: ToolHub, thinker: Thinker) -> None:
    """Call ``change`` and wait until the hub knows the server's list changed."""
    before = hub.version
    assert (await thinker.call("change", {})).text == "changed"
    await await_until(lambda: hub.version != before, timeout=WAIT)


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolHub:
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    return ToolHub(
        autoload=False, config={}, mcp_servers={"stuck": stuck_server(tmp_path / "log", 2.0)}
    )


async def test_begin_turn_serves_the_last_good_listing_while_a_refresh_hangs(
    hub: ToolHub, tmp_path: Path
) -> None:
    log = tmp_path / "log"
    try:
        thinker = await asyncio.to_thread(hub.bind, Host)  # the first listing, off this loop
        assert set(thinker.begin_turn().tool_names) == {"ping", "change"}
        await changed(hub, thinker)
        turn = thinker.begin_turn()  # on this loop: the refresh runs in the background
        assert set(turn.tool_names) == {"ping", "change"}
        await await_until(lambda: listings(log) == 2, timeout=WAIT)  # asked, never answered
        # Past the refresh's deadline the server's tools are unavailable, with a problem.
        await await_until(lambda: not thinker.begin_turn().tool_names, timeout=WAIT)
        (problem,) = [p for p in hub.problems() if p.pack == "mcp:stuck"]
        assert problem.kind == "server"
        assert "did not answer within 2 seconds" in problem.reason
        # Backed off: every session asking again at once starts one listing at most.
        asked = listings(log)
        for _ in range(20):
            assert hub.providers_for_server("stuck") == []
        assert listings(log) <= asked + 1
    finally:
        await asyncio.to_thread(hub.close)


async def test_abegin_turn_awaits_the_refresh_and_the_loop_keeps_turning(hub: ToolHub) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.ensure_future(tick())
    try:
        thinker = await asyncio.to_thread(hub.bind, Host)
        await changed(hub, thinker)
        before = ticks
        # It waits for the refresh's deadline, not the loop, and offers this turn's tools.
        turn = await thinker.abegin_turn(extra=[note])
        assert ticks > before + 10
        assert set(turn.tool_names) == {"note"}
        assert any("did not answer within" in p.reason for p in hub.problems())
    finally:
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)
        await asyncio.to_thread(hub.close)


async def test_serve_answers_new_sessions_while_a_servers_refresh_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp import Client
    from toolpalette.mcp import server

    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    servers = {"stuck": stuck_server(tmp_path / "log", WAIT)}
    hub = ToolHub(autoload=False, config={}, mcp_servers=servers)
    try:
        palette = await asyncio.to_thread(server, hub, Host)  # the first listing
        async with Client(palette, mode="legacy") as first:
            offered = {t.name for t in (await first.list_tools()).tools}
            assert {"ping", "change"} <= offered  # beside the palette's meta-tools
            before = hub.version
            await first.call_tool("change", {})
            await await_until(lambda: hub.version != before, timeout=WAIT)
            # A new session binds a thinker, whose listing is being refreshed: it is
            # answered from the last good listing, and so is the first session.
            async with Client(palette, mode="legacy") as second:
                listed = await second.list_tools()
                assert {t.name for t in listed.tools} == offered
            again = await first.call_tool("ping", {})
            assert not again.is_error
    finally:
        await asyncio.to_thread(hub.close)
