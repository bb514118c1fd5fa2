"""``ctx.report_progress``: a running tool's progress reaches the host's callback."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import toolpalette
from toolpalette import Thinker, ToolContext, ToolHub, ToolRegistry, ToolSelector

Report = tuple[float, "float | None", "str | None"]


@toolpalette.tool(read_only=True)
def count_sync(steps: int, ctx: ToolContext) -> str:
    """Count in a worker thread, reporting each step."""
    for done in range(1, steps + 1):
        ctx.report_progress(done, steps, f"step {done}")
    return f"counted {steps} on {threading.current_thread().name}"


@toolpalette.tool(read_only=True)
async def count_async(steps: int, ctx: ToolContext) -> str:
    """Count on the event loop, reporting each step (total unknown)."""
    for done in range(1, steps + 1):
        await asyncio.sleep(0)
        ctx.report_progress(done)
    return f"counted {steps}"


async def test_sync_and_async_tools_report_progress_to_the_callers_callback() -> None:
    from toolpalette import Executor

    executor = Executor(ToolRegistry([count_sync, count_async]))
    seen: list[Report] = []
    context = ToolContext(on_progress=lambda *report: seen.append(report))

    result = await executor.execute("count_sync", {"steps": 3}, context=context)
    assert not result.is_error, result.text
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]

    seen.clear()
    result = await executor.execute("count_async", {"steps": 2}, context=context)
    assert not result.is_error, result.text
    assert seen == [(1.0, None, None), (2.0, None, None)]


async def test_without_a_callback_reporting_is_harmless() -> None:
    from toolpalette import Executor

    result = await Executor(ToolRegistry([count_sync])).execute("count_sync", {"steps": 2})
    assert result.text.startswith("counted 2")


async def test_a_callback_that_raises_never_fails_the_call(caplog: Any) -> None:
    from toolpalette import Executor

    def broken(*_report: Any) -> None:
        raise RuntimeError("sink down")

    context = ToolContext(on_progress=broken)
    executor = Executor(ToolRegistry([count_async]))
    result = await executor.execute("count_async", {"steps": 2}, context=context)
    assert not result.is_error
    assert result.text == "counted 2"
    assert "progress callback raised" in caplog.text


class Counter(Thinker):
    read_only = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(count_sync)


async def test_a_thinker_call_delivers_progress_to_on_progress() -> None:
    hub = ToolHub(autoload=False)
    thinker = hub.bind(Counter)
    seen: list[Report] = []
    result = await thinker.call(
        "count_sync", {"steps": 2}, on_progress=lambda *report: seen.append(report)
    )
    assert not result.is_error, result.text
    assert seen == [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")]
    # the next call without a callback reports nowhere
    seen.clear()
    await thinker.call("count_sync", {"steps": 2})
    assert seen == []
