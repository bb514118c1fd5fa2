"""The abort signal and the approval pause, piece by piece (the pool: test_workers.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from toolpalette import AbortSignal, Executor, ToolContext, ToolRegistry
from toolpalette.testing import FakeTool


def test_abort_signal_callbacks():
    signal = AbortSignal()
    seen: list[str] = []
    unsubscribe = signal.subscribe(seen.append)
    gone = signal.subscribe(lambda reason: seen.append("never"))
    gone()
    gone()  # unsubscribing twice is harmless
    assert repr(signal) == "<AbortSignal armed>"
    assert signal.reason is None
    signal.abort("first")
    signal.abort("second")
    assert seen == ["first"]
    assert signal.reason == "first"
    late: list[str] = []
    signal.subscribe(late.append)()  # already fired: called at once
    assert late == ["first"]
    unsubscribe()


async def test_an_abort_ends_a_pending_approval():
    approving = asyncio.Event()

    async def approve(provider: Any, value: Any, context: Any) -> bool:
        approving.set()
        await asyncio.sleep(3600)
        return True

    tool = FakeTool("t", result="ran")
    executor = Executor(ToolRegistry([tool]), policy=lambda p, v: "ask", approve=approve)
    signal = AbortSignal()
    call = asyncio.ensure_future(executor.execute("t", {}, abort=signal))
    await approving.wait()
    signal.abort("Nobody answered.")
    result = await call
    assert (result.status, result.text) == (499, "Nobody answered.")
    assert tool.call_count == 0


@pytest.mark.parametrize("error", [RuntimeError("approver bug"), SystemExit(1)])
async def test_a_failing_approver_denies(error: BaseException):
    reports: list[Any] = []

    async def approve(provider: Any, value: Any, context: Any) -> bool:
        await asyncio.sleep(0)
        raise error

    executor = Executor(
        ToolRegistry([FakeTool("t", result="ran")]),
        policy=lambda p, v: "ask",
        approve=approve,
        on_tool_error=reports.append,
        context=ToolContext(run_id="r"),
    )
    result = await executor.execute("t", {})
    assert (result.status, result.code) == (403, "denied")
    assert executor.reports.join()
    assert reports[0].error is error


async def test_execute_many_applies_the_policy_per_call():
    def policy(provider: Any, value: Any) -> str:
        return "deny" if value.get("secret") else "allow"

    executor = Executor(ToolRegistry([FakeTool("t", result="ran")]), policy=policy)
    results = await executor.execute_many([("t", {}), ("t", {"secret": True}), ("t", {})])
    assert [r.status for r in results] == [200, 403, 200]
