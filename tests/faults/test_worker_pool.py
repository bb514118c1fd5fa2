"""Parallel sync calls on a small pool: calls beyond the free workers wait for one.

503 is only for a call that never got a worker within its deadline, or for a pool whose
every slot is held by an abandoned call (no live call would ever free one).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from toolpalette import Executor, Thinker, ToolHub, ToolRegistry, ToolSelector, tool
from toolpalette.testing import FakeTool, LeakCheck, WorkerPool, await_until, wait_until


class Gate:
    """A sync tool body that holds its worker until the test opens the gate."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def __call__(self, value: Any = None, ctx: Any = None) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            self.open.wait(30)
            return "done"
        finally:
            with self.lock:
                self.running -= 1


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.open.set()  # whatever happened, no worker stays held


async def test_sixteen_parallel_calls_on_six_workers_all_answer(
    gate: Gate, faults_leaks: LeakCheck
) -> None:
    pool = WorkerPool(max_workers=6)
    look = FakeTool("look", result=gate, read_only=True)
    executor = Executor(ToolRegistry([look]), pool=pool, timeout=30)
    batch = asyncio.ensure_future(executor.execute_many([("look", {})] * 16))
    await await_until(lambda: gate.running == 6 and pool.waiting == 10)
    gate.open.set()
    results = await asyncio.wait_for(batch, 30)
    assert [r.status for r in results] == [200] * 16
    assert gate.most == 6
    await await_until(lambda: pool.busy == 0)


def test_execute_sync_callers_wait_for_a_worker_too(gate: Gate, faults_leaks: LeakCheck) -> None:
    pool = WorkerPool(max_workers=1)
    executor = Executor(ToolRegistry([FakeTool("look", result=gate)]), pool=pool, timeout=30)
    results: list[int] = []
    callers = [
        threading.Thread(target=lambda: results.append(executor.execute_sync("look", {}).status))
        for _ in range(3)
    ]
    for caller in callers:
        caller.start()
    wait_until(lambda: pool.busy == 1 and pool.waiting == 2)
    gate.open.set()
    for caller in callers:
        caller.join(30)
    assert results == [200, 200, 200]


async def test_a_call_that_gets_no_worker_before_its_deadline_is_busy(
    gate: Gate, faults_leaks: LeakCheck
) -> None:
    pool = WorkerPool(max_workers=1)
    slow = Executor(ToolRegistry([FakeTool("slow", result=gate)]), pool=pool, timeout=30)
    quick = Executor(ToolRegistry([FakeTool("quick", result="ok")]), pool=pool, timeout=0.2)
    holding = asyncio.ensure_future(slow.execute("slow", {}))
    await await_until(lambda: pool.busy == 1)
    result = await quick.execute("quick", {})
    assert (result.status, result.code) == (503, "busy")
    assert pool.waiting == 0  # it left the queue: it will never run
    gate.open.set()
    assert (await holding).status == 200
    assert (await quick.execute("quick", {})).status == 200


async def test_waiting_calls_are_refused_once_every_slot_is_stuck(
    gate: Gate, faults_leaks: LeakCheck
) -> None:
    pool = WorkerPool(max_workers=1, max_abandoned=0)
    hung = Executor(ToolRegistry([FakeTool("hung", result=gate)]), pool=pool, timeout=0.3)
    waiter = Executor(ToolRegistry([FakeTool("next", result="ok")]), pool=pool, timeout=30)
    first = asyncio.ensure_future(hung.execute("hung", {}))
    await await_until(lambda: pool.busy == 1)
    queued = asyncio.ensure_future(waiter.execute("next", {}))
    await await_until(lambda: pool.waiting == 1)
    assert (await first).status == 504  # abandoned, and it keeps its slot
    result = await asyncio.wait_for(queued, 5)  # refused then, not at its own deadline
    assert (result.status, result.code) == (503, "busy")
    gate.open.set()
    await await_until(lambda: pool.busy == 0)
    assert (await waiter.execute("next", {})).status == 200


@tool(read_only=True)
def hold() -> str:
    """Hold a worker until released."""
    return HOLD()


HOLD = Gate()


@pytest.fixture
def held() -> Iterator[Gate]:
    global HOLD
    HOLD = Gate()
    yield HOLD
    HOLD.open.set()


class Holder(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(hold)


async def test_the_host_config_sizes_the_thinkers_pool(held: Gate, faults_leaks: LeakCheck) -> None:
    hub = ToolHub(autoload=False, config={"worker_threads": 3})
    holder = faults_leaks.watch(hub.bind(Holder))
    holder.begin_turn()
    calls = asyncio.ensure_future(holder.call_many([("hold", {})] * 5))
    await await_until(lambda: held.running == 3)
    held.open.set()
    results = await asyncio.wait_for(calls, 30)
    assert [r.status for r in results] == [200] * 5
    assert held.most == 3


def test_the_pool_size_must_be_a_positive_integer() -> None:
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="positive integer"):
            Executor(ToolRegistry(), worker_threads=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="worker_threads"):
            ToolHub(autoload=False, config={"worker_threads": bad})
    assert (
        Executor(ToolRegistry(), worker_threads=2).pool
        is Executor(ToolRegistry(), worker_threads=2).pool
    )
