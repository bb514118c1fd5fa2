"""The worker pool that runs sync tools: idle expiry, reuse, a thread that cannot start.

WorkerPool is internal (an Executor's ``pool``; ``toolpalette.testing.WorkerPool``
gives a test its own): these are its unit tests, so they import its module.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from toolpalette._run import workers as _workers
from toolpalette._run.workers import Job, PoolBusy, WorkerPool
from toolpalette.testing import wait_until


def test_idle_workers_expire(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_workers, "IDLE_EXPIRY", 0.05)
    pool = WorkerPool(max_workers=3)
    done = threading.Barrier(4, timeout=5)
    for _ in range(3):
        pool.submit(Job(done.wait, lambda ok, value: None))
    done.wait()
    assert pool.threads == 3
    wait_until(lambda: pool.threads == 0)


def test_an_idle_worker_is_reused():
    pool = WorkerPool(max_workers=2)
    results: list[Any] = []
    for i in range(5):
        event = threading.Event()
        pool.submit(Job(lambda i=i: i, lambda ok, value, e=event: (results.append(value), e.set())))
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
        pool.submit(Job(lambda: 1, lambda ok, value: None))
    assert (pool.busy, pool.threads) == (0, 0)


def test_abandoning_twice_or_after_the_end_counts_nothing_more():
    pool = WorkerPool(max_workers=1)
    delivered = threading.Event()
    job = Job(lambda: 1, lambda ok, value: delivered.set())
    pool.submit(job)
    assert delivered.wait(5)
    wait_until(lambda: job.finished)
    pool.abandon(job)
    pool.abandon(job)
    assert (pool.abandoned, pool.abandoned_total, pool.busy) == (0, 0, 0)
