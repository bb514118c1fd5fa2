"""The worker pool that runs sync tools: idle expiry, reuse, a thread that cannot start.

WorkerPool is internal (an Executor's ``pool``; ``toolpalette.testing.WorkerPool``
gives a test its own): these are its unit tests, so they import its module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from toolpalette._run import workers as _workers
from toolpalette._run.workers import Job, PoolBusy, WorkerPool
from toolpalette.testing import wait_until


class Call(Job):
    """A job that hands its outcome to ``then`` (a job's delivery is its subclass's)."""

    __slots__ = ("then",)

    def __init__(self, fn: Callable[[], Any], then: Callable[[bool, Any], Any] | None = None):
        self.fn = fn
        self.then = then

    def deliver(self, ok: bool, value: Any) -> None:
        if self.then is not None:
            self.then(ok, value)


def test_idle_workers_expire(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_workers, "IDLE_EXPIRY", 0.05)
    pool = WorkerPool(max_workers=3)
    done = threading.Barrier(4, timeout=5)
    for _ in range(3):
        pool.submit(Call(done.wait))
    done.wait()
    assert pool.threads == 3
    wait_until(lambda: pool.threads == 0)


def test_an_idle_worker_is_reused():
    pool = WorkerPool(max_workers=2)
    results: list[Any] = []
    for i in range(5):
        event = threading.Event()

        def then(ok: bool, value: Any, event: threading.Event = event) -> None:
            results.append(value)
            event.set()

        pool.submit(Call(lambda i=i: i, then))
        assert event.wait(5)
    assert results == [0, 1, 2, 3, 4]
    wait_until(lambda: pool.busy == 0)
    assert pool.threads == 1


def test_a_thread_that_cannot_start_is_a_busy_pool(monkeypatch: pytest.MonkeyPatch):
    pool = WorkerPool(max_workers=2)

    def refuse() -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(pool, "_start_thread", refuse)
    with pytest.raises(PoolBusy):
        pool.submit(Call(lambda: 1))
    assert (pool.busy, pool.threads) == (0, 0)


def test_abandoning_twice_or_after_the_end_counts_nothing_more():
    pool = WorkerPool(max_workers=1)
    delivered = threading.Event()
    job = Call(lambda: 1, lambda ok, value: delivered.set())
    pool.submit(job)
    assert delivered.wait(5)
    wait_until(lambda: job.finished)
    pool.abandon(job)
    pool.abandon(job)
    assert (pool.abandoned, pool.abandoned_total, pool.busy) == (0, 0, 0)
