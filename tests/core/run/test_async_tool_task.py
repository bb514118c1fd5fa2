"""An async tool runs in one task of its own, from start to end: its scopes are its own."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from toolpalette import Executor, ToolRegistry, tool
from toolpalette.testing import await_until

needs_asyncio_timeout = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="asyncio.timeout is new in Python 3.11"
)

CALLER = contextvars.ContextVar("CALLER", default="unset")
INSIDE = contextvars.ContextVar("INSIDE", default="unset")


async def call(fn: Any, **kwargs: Any) -> Any:
    """Run the async tool ``fn`` once through the pipeline; its result's text."""
    result = await Executor(ToolRegistry([tool(read_only=True)(fn)])).execute(fn.__name__, kwargs)
    assert result.status == 200, result.text
    return result.text


async def test_the_tool_sees_one_task_across_its_awaits_and_not_the_callers() -> None:
    seen: list[asyncio.Task[Any] | None] = []

    async def tasks() -> str:
        """Which task it runs in, before and after suspending."""
        seen.append(asyncio.current_task())
        await asyncio.sleep(0)
        seen.append(asyncio.current_task())
        await asyncio.sleep(0.01)
        seen.append(asyncio.current_task())
        return "ok"

    assert await call(tasks) == "ok"
    assert len(seen) == 3
    assert seen[0] is seen[1] is seen[2]
    assert seen[0] is not asyncio.current_task()


async def test_the_tool_reads_the_callers_context_and_keeps_its_own_changes() -> None:
    async def context() -> str:
        """Reads a variable the caller set, and sets another across an await."""
        INSIDE.set("tool")
        await asyncio.sleep(0)
        return f"{CALLER.get()} {INSIDE.get()}"

    CALLER.set("host")
    assert await call(context) == "host tool"
    assert INSIDE.get() == "unset"


@needs_asyncio_timeout
async def test_an_asyncio_timeout_inside_the_tool_times_out_the_tool_not_its_caller() -> None:
    async def waits() -> str:
        """Gives up on a slow step under its own timeout."""
        try:
            async with asyncio.timeout(0.05):  # type: ignore[attr-defined,unused-ignore]
                await asyncio.sleep(30)
        except TimeoutError:
            return "gave up"
        return "finished"

    assert await call(waits) == "gave up"
    me = asyncio.current_task()
    assert me is not None
    assert me.cancelling() == 0
    await asyncio.sleep(0)  # a cancellation aimed at this task would land here


async def test_wait_for_inside_the_tool_times_out_the_tool_not_its_caller() -> None:
    async def waits() -> str:
        """Gives up on a slow step with wait_for."""
        try:
            await asyncio.wait_for(asyncio.sleep(30), timeout=0.05)
        except asyncio.TimeoutError:
            return "gave up"
        return "finished"

    assert await call(waits) == "gave up"
    await asyncio.sleep(0)


async def test_an_anyio_cancel_scope_inside_the_tool_stays_inside_it() -> None:
    anyio = pytest.importorskip("anyio", reason="anyio comes with the mcp extra")

    async def moves_on() -> str:
        """Moves on from a slow step after a while."""
        with anyio.move_on_after(0.05) as scope:
            await anyio.sleep(30)
        return "moved on" if scope.cancelled_caught else "finished"

    assert await call(moves_on) == "moved on"
    await asyncio.sleep(0)


@pytest.fixture
async def silent_server() -> AsyncIterator[str]:
    """A local HTTP server that accepts connections and never answers: its URL."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/"
    for writer in held:
        writer.close()
    server.close()
    await server.wait_closed()


async def test_an_httpx_timeout_inside_the_tool_is_the_tools_error(silent_server: str) -> None:
    httpx = pytest.importorskip("httpx", reason="httpx comes with the mcp extra")

    async def fetch(url: str) -> str:
        """Fetches a URL with a short timeout."""
        async with httpx.AsyncClient(timeout=0.1) as client:
            try:
                await client.get(url)
            except httpx.TimeoutException:
                return "timed out"
        return "answered"

    assert await call(fetch, url=silent_server) == "timed out"
    await asyncio.sleep(0)


async def test_the_hosts_cancellation_reaches_the_tool() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def hangs() -> str:
        """Waits until it is cancelled."""
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            stopped.set()
            raise
        return "never"

    executor = Executor(ToolRegistry([tool(read_only=True)(hangs)]))
    caller = asyncio.ensure_future(executor.execute("hangs", {}))
    await asyncio.wait_for(started.wait(), 10)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await await_until(stopped.is_set, timeout=10)
