"""The event loop a hub's MCP sessions live on: never the host's own, and gone on close.

A palette lists a server's tools from sync code (``bind``, ``begin_turn``), which a
host often calls on its own event loop. When that loop owned the sessions, the listing
waited for the very loop it blocked. The sessions live on a loop of the hub's, in a
thread of its own, which ``hub.close()`` stops with every server it started.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import Context, MCPServer
from toolpalette import Executor, Thinker, ToolHub, ToolSelector
from toolpalette.testing import await_until, leak_check

from .conftest import PROCESS_WAIT, SLOW_SERVER, alive, server_pids

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


# -- an async caller on another loop: cancellation both ways, a closed loop ------------------


def slow_hub(**options: Any) -> ToolHub:
    server = {"command": sys.executable, "args": [str(SLOW_SERVER)], "timeout": 120}
    return ToolHub(autoload=False, config={}, mcp_servers={"slow": server}, **options)


async def test_cancelling_an_async_caller_cancels_its_request_on_the_server(tmp_path: Path):
    marker = str(tmp_path / "c")
    async with leak_check(deadline=PROCESS_WAIT):
        hub = slow_hub()
        try:
            ex = Executor(hub.catalog())
            task = asyncio.ensure_future(ex.execute("wait", {"seconds": 60, "marker": marker}))
            await await_until(lambda: Path(marker + ".started").exists(), timeout=PROCESS_WAIT)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await await_until(lambda: Path(marker + ".cancelled").exists(), timeout=PROCESS_WAIT)
            # The session outlived the cancelled call: the next one runs on the same server.
            again = await ex.execute("wait", {"seconds": 0, "marker": str(tmp_path / "d")})
            assert again.structured == {"result": "done"}
            assert hub.mcp().connection("slow").starts == 1
        finally:
            await asyncio.to_thread(hub.close)


async def test_closing_the_hub_mid_call_answers_an_async_caller(tmp_path: Path):
    marker = str(tmp_path / "c")
    async with leak_check(deadline=PROCESS_WAIT):
        hub = slow_hub()
        try:
            ex = Executor(hub.catalog())
            task = asyncio.ensure_future(ex.execute("wait", {"seconds": 100, "marker": marker}))
            await await_until(lambda: Path(marker + ".started").exists(), timeout=PROCESS_WAIT)
            (pid,) = server_pids(str(SLOW_SERVER))
        finally:
            # Closing ends the call on the pool's loop: the caller, on this loop, is told.
            await asyncio.to_thread(hub.close)
        result = await asyncio.wait_for(task, HOST_DEADLINE)
        assert result.is_error
        assert not task.cancelled()
        assert not alive(pid)


@pytest.mark.parametrize("where", ["async", "sync"])
def test_a_call_after_close_is_an_error_and_leaves_nothing_pending(where: str):
    server = MCPServer("local")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    with leak_check(deadline=PROCESS_WAIT), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hub = ToolHub(autoload=False, config={}, mcp_servers={"s": server})
        ex = Executor(hub.catalog())
        assert ex.execute_sync("echo", {"text": "open"}).structured == {"result": "open"}
        hub.close()
        if where == "async":
            result = asyncio.run(asyncio.wait_for(ex.execute("echo", {"text": "x"}), 30))
        else:
            result = ex.execute_sync("echo", {"text": "x"})
        assert result.is_error
        gc.collect()
    never_awaited = [w for w in caught if "never awaited" in str(w.message)]
    assert never_awaited == []
