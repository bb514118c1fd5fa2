"""Async tools that block their loop or swallow cancellation still get their 504.

A blocking call inside an async tool holds the event loop's thread: no timer fires until
it lets go. The watchdog names the tool while it blocks, and a call that comes back past
its deadline is a 504 whatever it returned, with a failure report saying why.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from typing import Any

import pytest
from toolpalette import Executor, ToolContext, ToolErrorReport, ToolRegistry, tool
from toolpalette.testing import LeakCheck, await_until, wait_until

RUN = ToolContext(run_id="run")


@tool(timeout=0.3)
async def sleepy() -> str:
    """Block the loop with a blocking sleep in its first step."""
    time.sleep(1.0)
    return "woke up"


@tool(timeout=0.3)
async def sleepy_later() -> str:
    """Suspend once, then block the loop."""
    await asyncio.sleep(0)
    time.sleep(1.0)
    return "woke up"


@pytest.mark.parametrize("name", ["sleepy", "sleepy_later"])
async def test_an_async_tool_that_blocks_past_its_deadline_answers_504_and_is_named(
    name: str, caplog: pytest.LogCaptureFixture, faults_leaks: LeakCheck
) -> None:
    reports: list[ToolErrorReport] = []
    executor = Executor(
        ToolRegistry([sleepy, sleepy_later]), context=RUN, on_tool_error=reports.append
    )
    with caplog.at_level(logging.WARNING, logger="toolpalette.executor"):
        result = await executor.execute(name, {})
    assert (result.status, result.code) == (504, "timeout")
    assert "woke up" not in result.text
    stalls = [r for r in caplog.records if "held its event loop" in r.getMessage()]
    assert stalls
    assert repr(name) in stalls[0].getMessage()
    assert "time.sleep" in stalls[0].getMessage()  # the stack shows where it blocks
    wait_until(lambda: reports)
    assert isinstance(reports[0].error, TimeoutError)
    assert "event loop was blocked" in str(reports[0].error)


async def test_the_watchdog_names_the_tool_without_sampling_other_threads_frames(
    caplog: pytest.LogCaptureFixture, faults_leaks: LeakCheck, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Walking another thread's frame objects can crash CPython 3.11: the watchdog reads
    # its step boards and faulthandler's dump instead, so a stall is still named.
    def sampled() -> dict[int, Any]:
        raise AssertionError("the watchdog sampled another thread's frames")

    monkeypatch.setattr(sys, "_current_frames", sampled)
    with caplog.at_level(logging.WARNING, logger="toolpalette.executor"):
        result = await Executor(ToolRegistry([sleepy_later])).execute("sleepy_later", {})
    assert result.status == 504
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "failed a look" in m]
    stalls = [m for m in messages if "held its event loop" in m]
    assert stalls
    assert "'sleepy_later'" in stalls[0]
    assert "time.sleep" in stalls[0]


async def test_a_tool_that_blocks_after_calling_another_tool_is_the_one_named(
    caplog: pytest.LogCaptureFixture, faults_leaks: LeakCheck
) -> None:
    @tool
    async def quick() -> str:
        """Answer at once."""
        return "quick"

    @tool(timeout=0.3)
    async def caller() -> str:
        """Call another tool, then block."""
        inner = await executor.execute("quick", {})
        time.sleep(1.0)
        return inner.text

    executor = Executor(ToolRegistry([quick, caller]))
    with caplog.at_level(logging.WARNING, logger="toolpalette.executor"):
        result = await executor.execute("caller", {})
    assert result.status == 504
    stalls = [r.getMessage() for r in caplog.records if "held its event loop" in r.getMessage()]
    assert stalls
    assert "'caller'" in stalls[0]
    assert "'quick'" not in stalls[0]


async def test_a_short_block_within_the_deadline_still_answers(
    faults_leaks: LeakCheck,
) -> None:
    @tool(timeout=30)
    async def brief() -> str:
        """Block briefly."""
        time.sleep(0.15)
        return "ok"

    result = await Executor(ToolRegistry([brief])).execute("brief", {})
    assert (result.status, result.text) == (200, "ok")


async def test_an_async_tool_that_swallows_cancellation_gets_its_504_on_time(
    faults_leaks: LeakCheck,
) -> None:
    stop = asyncio.Event()
    still_running: list[bool] = []

    @tool(timeout=0.2)
    async def stubborn() -> str:
        """Ignore every cancellation until told to stop."""
        while not stop.is_set():
            try:
                await stop.wait()
            except asyncio.CancelledError:
                still_running.append(True)
        return "finally"

    executor = Executor(ToolRegistry([stubborn]))
    before = executor.stats()["abandoned_tasks"]  # the process's count, other tests' too
    result = await executor.execute("stubborn", {})
    assert (result.status, result.code) == (504, "timeout")
    await await_until(lambda: still_running)  # it swallowed the cancel; nobody waited for it
    assert executor.stats()["abandoned_tasks"] == before + 1
    stop.set()
    await await_until(lambda: executor.stats()["abandoned_tasks"] == before)
