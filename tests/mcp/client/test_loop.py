"""The event loop a hub's MCP sessions live on: never the host's own, and gone on close.

A palette lists a server's tools from sync code (``bind``, ``begin_turn``), which a
host often calls on its own event loop. When that loop owned the sessions, the listing
waited for the very loop it blocked. The sessions live on a loop of the hub's, in a
thread of its own, which ``hub.close()`` stops with every server it started.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from toolpalette import Executor, Thinker, ToolHub, ToolSelector
from toolpalette.testing import await_until, leak_check

from .conftest import PROCESS_WAIT, SLOW_SERVER

HOST_DEADLINE = 60.0
"""Seconds the host's loop is given to list, call and list again (it takes well under one)."""


def test_a_hosts_own_loop_lists_and_calls_without_waiting_for_itself(
    make_hub: Callable[..., ToolHub],
):
    server = MCPServer("growing")

    def extra(n: int) -> int:
        """A tool added while the server runs."""
        return n * 2

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool and say so."""
        server.add_tool(extra)
        await ctx.notify_tools_changed()
        return "grown"

    hub = make_hub(mcp_servers={"g": server})

    class Host(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().mcp_server("g")

    async def on_the_hosts_loop() -> tuple[list[str], str, list[str], str]:
        # The first listing is read from sync code, on this very loop; the refresh after
        # the change is awaited (abegin_turn), the loop turning meanwhile.
        thinker = hub.bind(Host)
        first = sorted(thinker.begin_turn().tool_names)
        before = hub.version
        grown = await thinker.call("grow", {})
        await await_until(lambda: hub.version != before, timeout=PROCESS_WAIT)
        second = sorted((await thinker.abegin_turn()).tool_names)
        doubled = await thinker.call("extra", {"n": 21})
        return first, grown.text, second, doubled.text

    box: list[Any] = []

    def host() -> None:
        try:
            box.append(asyncio.run(on_the_hosts_loop()))
        except BaseException as exc:
            box.append(exc)

    runner = threading.Thread(target=host, name="a-hosts-loop", daemon=True)
    runner.start()
    runner.join(HOST_DEADLINE)
    assert not runner.is_alive(), "the host's loop is waiting for itself"
    (outcome,) = box
    assert not isinstance(outcome, BaseException), outcome
    first, grown, second, doubled = outcome
    assert "grow" in first
    assert "extra" not in first
    assert grown == '{"result":"grown"}'
    assert "extra" in second
    assert doubled == '{"result":42}'


def test_closing_the_hub_leaves_no_thread_process_or_file_behind(tmp_path: Path):
    with leak_check(deadline=PROCESS_WAIT):
        hub = ToolHub(
            autoload=False,
            config={},
            mcp_servers={"slow": {"command": sys.executable, "args": [str(SLOW_SERVER)]}},
        )
        try:
            result = Executor(hub.catalog()).execute_sync(
                "wait", {"seconds": 0, "marker": str(tmp_path / "w")}
            )
            assert result.structured == {"result": "done"}, result
            threads = {t.name for t in threading.enumerate()}
            assert "toolpalette-mcp" in threads  # the sessions' loop, in its own thread
        finally:
            hub.close()
