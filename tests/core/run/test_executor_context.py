"""A call leaves its caller in the caller's own context, whatever the tool and the context.

A task awaiting a sync tool is woken by the worker's handoff; it must go on in its own
``contextvars`` context, or a variable set before the call could not be reset after it
(``ContextVar.reset`` refuses a token from another context) and what the task sets
after the call would be lost to its next step. A new task's context is often empty,
and an empty context is falsy: the case that once woke the task in a copy.
"""

from __future__ import annotations

import asyncio
import contextvars

import pytest
from toolpalette import Executor, ToolRegistry, tool

marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


@tool(read_only=True)
def sync_add(a: int, b: int) -> int:
    """Add two integers in a worker thread."""
    return a + b


@tool(read_only=True)
async def async_add(a: int, b: int) -> int:
    """Add two integers, suspending once."""
    await asyncio.sleep(0)
    return a + b


@pytest.mark.parametrize("name", ["sync_add", "async_add"])
def test_calls_from_an_empty_context_leave_the_caller_in_its_own(name: str):
    executor = Executor(ToolRegistry([sync_add, async_add]))

    async def caller() -> list[str]:
        seen = []
        first = await executor.execute(name, {"a": 1, "b": 2})  # nothing set yet
        assert first.text == "3", first.text
        for round_ in range(3):
            token = marker.set(f"round {round_}")
            result = await executor.execute(name, {"a": 1, "b": 2})
            assert result.text == "3", result.text
            seen.append(marker.get())
            marker.reset(token)  # raises if a call left the task in another context
        return seen

    # A context with nothing set in it, as a task started from a fresh one has.
    empty = contextvars.Context()
    assert empty.run(asyncio.run, caller()) == ["round 0", "round 1", "round 2"]
