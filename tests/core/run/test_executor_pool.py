"""The worker pool, the abort signal and the approval pause, piece by piece."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from toolpalette import AbortSignal, ToolContext, ToolRegistry
from toolpalette._run import workers as _workers
from toolpalette._run.executor import Executor
from toolpalette._run.workers import Job, PoolBusy, WorkerPool
from toolpalette.testing import FakeTool


def _wait_for(predicate: Any, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_idle_workers_expire(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_workers, "IDLE_EXPIRY", 0.05)
    pool = WorkerPool(max_workers=3)
    done = threading.Barrier(4, timeout=5)
    for _ in range(3):
        pool.submit(Job(done.wait, lambda ok, value: None))
    done.wait()
    assert pool.threads == 3
    assert _wait_for(lambda: pool.threads == 0)


def test_an_idle_worker_is_reused():
    pool = WorkerPool(max_workers=2)
    results: list[Any] = []
    for i in range(5):
        event = threading.Event()
        pool.submit(Job(lambda i=i: i, lambda ok, value, e=event: (results.append(value), e.set())))
        assert event.wait(5)
    assert results == [0, 1, 2, 3, 4]
    assert _wait_for(lambda: pool.busy == 0)
    assert pool.threads == 1


def test_a_thread_that_cannot_start_is_a_busy_pool(monkeypatch: pytest.MonkeyPatch):
    pool = WorkerPool(max_workers=2)

    def refuse() -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(pool, "_start_thread", refuse)
    with pytest.raises(PoolBusy):
        pool.submit(Job(lambda: 1, lambda ok, value: None))
    assert (pool.busy, pool.threads) == (0, 0)


def test_abandoning_twice_or_after_the_end_counts_nothing_more():
    pool = WorkerPool(max_workers=1)
    delivered = threading.Event()
    job = Job(lambda: 1, lambda ok, value: delivered.set())
    pool.submit(job)
    assert delivered.wait(5)
    assert _wait_for(lambda: job.finished)
    pool.abandon(job)
    pool.abandon(job)
    assert (pool.abandoned, pool.abandoned_total, pool.busy) == (0, 0, 0)


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
