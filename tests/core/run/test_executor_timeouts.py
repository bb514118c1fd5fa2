"""Deadlines, abandoned work, the bounded worker pool and the caller's abort."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from toolpalette import AbortSignal, Executor, ToolContext, ToolRegistry
from toolpalette.testing import FakeTool, WorkerPool, await_until

GRACE = 2.0  # generous: a correctness deadline, not a performance claim
RUN = ToolContext(run_id="run")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so every hung worker thread of a test ends."""
    event = threading.Event()
    yield event
    event.set()


def hanging_sync(release: threading.Event, *, honour_abort: bool = False) -> FakeTool:
    def run(value: Any, ctx: ToolContext) -> str:
        while not release.is_set():
            if honour_abort and ctx.abort.is_set():
                return "stopped"
            time.sleep(0.01)
        return "late"

    return FakeTool("hang", result=run)


async def hang_forever(value: Any) -> str:
    await asyncio.sleep(3600)
    return "never"


async def _timed(executor: Executor, name: str, **kwargs: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = await executor.execute(name, {}, **kwargs)
    return result, time.monotonic() - started


async def test_hanging_sync_tool_times_out_without_blocking_the_loop(release: threading.Event):
    pool = WorkerPool(max_workers=2)
    executor = Executor(ToolRegistry([hanging_sync(release)]), timeout=0.3, pool=pool)
    lags: list[float] = []

    async def heartbeat() -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.01)
            lags.append(time.monotonic() - before - 0.01)

    beat = asyncio.ensure_future(heartbeat())
    result, elapsed = await _timed(executor, "hang")
    beat.cancel()
    assert (result.status, result.code) == (504, "timeout")
    assert "0.3 seconds" in result.text
    assert elapsed < 0.3 + GRACE
    assert max(lags) < 1.0  # the loop kept running while the tool hung (it never returns)
    assert pool.abandoned == 1
    assert pool.abandoned_total == 1
    assert executor.stats()["abandoned_threads"] == 1


async def test_a_sync_tool_that_honours_abort_ends_and_frees_its_thread(release: threading.Event):
    pool = WorkerPool(max_workers=2)
    tool = hanging_sync(release, honour_abort=True)
    executor = Executor(ToolRegistry([tool]), timeout=0.2, pool=pool)
    result = await executor.execute("hang", {})
    assert result.status == 504
    assert tool.calls[0].context.abort.is_set()
    await await_until(lambda: pool.abandoned == 0)  # the thread returned; its result dropped
    assert pool.abandoned_total == 1


async def test_a_late_sync_result_is_dropped():
    gate = threading.Event()

    def late(value: Any) -> str:
        gate.wait(5)
        return "late result"

    pool = WorkerPool(max_workers=1)
    executor = Executor(ToolRegistry([FakeTool("late", result=late)]), timeout=0.1, pool=pool)
    assert (await executor.execute("late", {})).status == 504
    gate.set()
    await await_until(lambda: pool.abandoned == 0)
    follow = await Executor(ToolRegistry([FakeTool("late", result="fresh")]), pool=pool).execute(
        "late", {}
    )
    assert follow.text == "fresh"


async def test_a_full_pool_answers_503_at_once_and_never_deadlocks(release: threading.Event):
    pool = WorkerPool(max_workers=2, max_abandoned=0)
    executor = Executor(ToolRegistry([hanging_sync(release)]), timeout=0.3, pool=pool)
    results = await asyncio.gather(*(executor.execute("hang", {}) for _ in range(5)))
    statuses = sorted(r.status for r in results)
    assert statuses == [503, 503, 503, 504, 504]
    busy = next(r for r in results if r.status == 503)
    assert busy.code == "busy"
    # Abandoned calls keep their slots (max_abandoned=0): the next call is refused at once.
    result, elapsed = await _timed(executor, "hang")
    assert result.status == 503
    assert elapsed < GRACE
    assert pool.threads <= pool.max_workers + pool.max_abandoned
    release.set()
    await await_until(lambda: pool.busy == 0)  # hung threads that end give their slots back


async def test_abandoned_threads_are_bounded(release: threading.Event):
    pool = WorkerPool(max_workers=1, max_abandoned=2)
    executor = Executor(ToolRegistry([hanging_sync(release)]), timeout=0.1, pool=pool)
    statuses = [(await executor.execute("hang", {})).status for _ in range(5)]
    assert statuses == [504, 504, 504, 503, 503]
    assert pool.abandoned == 2
    assert pool.threads == 3  # max_workers + max_abandoned, never more


async def test_a_hanging_async_tool_is_cancelled_at_the_deadline():
    executor = Executor(
        ToolRegistry([FakeTool("hang", result=hang_forever, is_async=True)]), timeout=0.2
    )
    baseline = executor.stats()["abandoned_tasks"]
    tasks_before = len(asyncio.all_tasks())
    result, elapsed = await _timed(executor, "hang")
    assert (result.status, result.code) == (504, "timeout")
    assert elapsed < 0.2 + GRACE
    await await_until(lambda: executor.stats()["abandoned_tasks"] == baseline)
    await await_until(lambda: len(asyncio.all_tasks()) == tasks_before)


async def test_an_async_tool_swallowing_cancellation_still_returns_on_time():
    stop = asyncio.Event()
    finished: list[str] = []

    async def stubborn(value: Any) -> str:
        while not stop.is_set():
            try:  # noqa: SIM105 - swallowing, spelled out, is what is under test
                await asyncio.sleep(0.02)
            except asyncio.CancelledError:
                pass  # the bad behaviour under test
        finished.append("done")
        return "late result"

    tool = FakeTool("stubborn", result=stubborn, is_async=True, timeout=0.2)
    executor = Executor(ToolRegistry([tool]))
    baseline = executor.stats()["abandoned_tasks"]
    result, elapsed = await _timed(executor, "stubborn")
    assert result.status == 504
    assert elapsed < 0.2 + GRACE
    assert executor.stats()["abandoned_tasks"] == baseline + 1  # tracked and counted
    stop.set()
    await await_until(lambda: executor.stats()["abandoned_tasks"] == baseline)
    assert finished == ["done"]  # it ended; its late result went nowhere


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_tool_calling_sys_exit_is_a_500_and_the_process_lives(is_async: bool):
    def leave(value: Any) -> str:
        sys.exit(3)

    async def aleave(value: Any) -> str:
        await asyncio.sleep(0)
        sys.exit(3)

    tool = FakeTool("leave", result=aleave if is_async else leave, is_async=is_async)
    result = await Executor(ToolRegistry([tool])).execute("leave", {})
    assert (result.status, result.code) == (500, "internal_error")


def test_keyboard_interrupt_raised_by_a_sync_tool_is_a_500():
    def interrupt(value: Any) -> str:
        raise KeyboardInterrupt

    result = Executor(ToolRegistry([FakeTool("ki", result=interrupt)])).execute_sync("ki", {})
    assert (result.status, result.code) == (500, "internal_error")


async def test_keyboard_interrupt_on_the_loop_thread_propagates():
    async def interrupt(value: Any) -> str:
        raise KeyboardInterrupt

    executor = Executor(ToolRegistry([FakeTool("ki", result=interrupt, is_async=True)]))
    with pytest.raises(KeyboardInterrupt):
        await executor.execute("ki", {})


async def test_the_tool_timeout_overrides_the_default():
    slow = FakeTool("slow", result=hang_forever, is_async=True, timeout=0.1)
    executor = Executor(ToolRegistry([slow]), timeout=60)
    result, elapsed = await _timed(executor, "slow")
    assert result.status == 504
    assert elapsed < 0.1 + GRACE


@pytest.mark.parametrize("is_async", [False, True])
async def test_caller_abort_ends_the_call_at_once_unreported(
    is_async: bool, release: threading.Event
):
    reports: list[Any] = []
    tool = FakeTool("hang", result=hang_forever, is_async=True) if is_async else None
    tool = tool or hanging_sync(release)
    executor = Executor(ToolRegistry([tool]), timeout=60, on_tool_error=reports.append, context=RUN)
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.1, signal.abort, "The user pressed stop.")
    result, elapsed = await _timed(executor, "hang", abort=signal)
    assert (result.status, result.code, result.text) == (499, "aborted", "The user pressed stop.")
    assert elapsed < GRACE
    executor.reports.join()
    assert reports == []
    if not is_async:
        assert tool.calls[0].context.abort.is_set()


async def test_an_abort_already_fired_never_runs_the_tool():
    tool = FakeTool("t", result="ran")
    signal = AbortSignal()
    signal.abort("Stopped before it began.")
    signal.abort("second reason is ignored")
    result = await Executor(ToolRegistry([tool])).execute("t", {}, abort=signal)
    assert (result.status, result.text) == (499, "Stopped before it began.")
    assert tool.call_count == 0
    assert signal.aborted
    assert "aborted" in repr(signal)


async def test_abort_from_another_thread(release: threading.Event):
    executor = Executor(ToolRegistry([hanging_sync(release)]), timeout=60)
    signal = AbortSignal()
    threading.Timer(0.1, signal.abort, args=("Cancelled from a thread.",)).start()
    result = await executor.execute("hang", {}, abort=signal)
    assert result.text == "Cancelled from a thread."


@pytest.mark.parametrize("is_async", [False, True])
async def test_caller_cancellation_propagates_and_abandons_the_tool(
    is_async: bool, release: threading.Event
):
    tool = FakeTool("hang", result=hang_forever, is_async=True) if is_async else None
    tool = tool or hanging_sync(release)
    reports: list[Any] = []
    executor = Executor(ToolRegistry([tool]), on_tool_error=reports.append, context=RUN)
    call = asyncio.ensure_future(executor.execute("hang", {}))
    await await_until(lambda: tool.call_count == 1)  # the tool is running
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert tool.calls[0].context.abort.is_set()
    executor.reports.join()
    assert reports == []


def test_execute_sync_times_out_and_aborts(release: threading.Event):
    executor = Executor(ToolRegistry([hanging_sync(release)]), timeout=0.2)
    started = time.monotonic()
    assert executor.execute_sync("hang", {}).status == 504
    assert time.monotonic() - started < 0.2 + GRACE
    signal = AbortSignal()
    threading.Timer(0.05, signal.abort, args=("Stop.",)).start()
    executor = Executor(ToolRegistry([hanging_sync(release)]), timeout=60)
    result = executor.execute_sync("hang", {}, abort=signal)
    assert (result.status, result.text) == (499, "Stop.")
