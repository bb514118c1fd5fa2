"""A sync tool from an async caller: one handoff to a worker, one wake-up of the loop.

The deadlines of a loop's sync calls share one timer, armed for the earliest; these
tests pin that mechanism (counted, never timed) and that every deadline still holds.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from toolpalette import Executor, ToolContext, ToolRegistry
from toolpalette.testing import FakeTool, WorkerPool, await_until

GRACE = 2.0  # generous: a correctness deadline, not a performance claim


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so every held worker thread of a test ends."""
    event = threading.Event()
    yield event
    event.set()


def held(name: str, release: threading.Event, timeout: float | None = None) -> FakeTool:
    """A sync tool that runs until ``release`` is set or its abort event is."""

    def run(value: Any, ctx: ToolContext) -> str:
        while not (release.is_set() or ctx.abort.is_set()):
            time.sleep(0.01)
        return "released"

    return FakeTool(name, result=run, timeout=timeout)


class CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts what is scheduled on it."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def call_soon_threadsafe(self, *args: Any, **kwargs: Any) -> asyncio.Handle:
        self.counts["call_soon_threadsafe"] += 1
        return super().call_soon_threadsafe(*args, **kwargs)

    def call_soon(self, *args: Any, **kwargs: Any) -> asyncio.Handle:
        self.counts["call_soon"] += 1
        return super().call_soon(*args, **kwargs)

    def call_at(self, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        self.counts["call_at"] += 1
        return super().call_at(*args, **kwargs)


def test_a_sync_call_wakes_the_loop_once_and_arms_no_timer_of_its_own() -> None:
    executor = Executor(ToolRegistry([FakeTool("add", result=3)]), pool=WorkerPool(2))
    loop = CountingLoop()

    async def calls() -> tuple[list[int], Counter[str]]:
        await executor.execute("add", {})  # the first call arms the loop's deadline timer
        loop.counts.clear()
        statuses = [(await executor.execute("add", {})).status for _ in range(50)]
        return statuses, loop.counts.copy()

    try:
        statuses, counts = loop.run_until_complete(calls())
    finally:
        loop.close()
    assert statuses == [200] * 50
    # One wake-up from the worker per call; no timer per call; no second turn of the
    # loop to resume the caller (an asyncio future would schedule one with call_soon).
    assert counts == Counter({"call_soon_threadsafe": 50})


async def test_each_deadline_holds_whatever_the_order_the_calls_came_in(
    release: threading.Event,
) -> None:
    timeouts = {"a": 0.4, "b": 0.1, "c": 0.25, "d": 0.1}
    tools = [held(name, release, timeout) for name, timeout in timeouts.items()]
    executor = Executor(ToolRegistry(tools), pool=WorkerPool(4), timeout=60)

    async def timed(name: str) -> tuple[int, float]:
        started = time.monotonic()
        result = await executor.execute(name, {})
        return result.status, time.monotonic() - started

    answers = await asyncio.gather(*(timed(name) for name in timeouts))
    for (status, took), timeout in zip(answers, timeouts.values(), strict=True):
        assert status == 504
        assert timeout <= took < timeout + GRACE  # never early, never forgotten


async def test_a_short_deadline_behind_a_long_one_fires_on_time(release: threading.Event) -> None:
    long, short = held("long", release, timeout=60), held("short", release, timeout=0.2)
    executor = Executor(ToolRegistry([long, short]), pool=WorkerPool(2))
    first = asyncio.ensure_future(executor.execute("long", {}))
    await await_until(lambda: long.call_count == 1)
    started = time.monotonic()
    result = await executor.execute("short", {})
    assert result.status == 504
    assert time.monotonic() - started < 0.2 + GRACE
    release.set()
    assert (await first).status == 200


class Payload(dict[str, Any]):
    """A tool result that a test can hold a weak reference to."""


async def test_a_finished_call_keeps_nothing_of_its_result(release: threading.Event) -> None:
    made: list[weakref.ref[Payload]] = []

    def answer(value: Any) -> Payload:
        payload = Payload(ok=True)
        made.append(weakref.ref(payload))
        return payload

    long = held("long", release)
    executor = Executor(
        ToolRegistry([long, FakeTool("quick", result=answer)]), pool=WorkerPool(2), timeout=60
    )
    first = asyncio.ensure_future(executor.execute("long", {}))  # its deadline comes first
    await await_until(lambda: long.call_count == 1)
    for _ in range(3):
        assert (await executor.execute("quick", {})).text == '{"ok":true}'
    # Neither the pending deadlines, nor the worker now idle, hold a result.
    await await_until(lambda: all(ref() is None for ref in made))
    release.set()
    assert (await first).status == 200
