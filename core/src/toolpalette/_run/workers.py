"""The bounded worker pool sync tools run in."""

from __future__ import annotations

import collections
import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = ["Job", "PoolBusy", "PoolThread", "WorkerPool", "default_workers", "shared_pool"]

logger = logging.getLogger("toolpalette.executor")

IDLE_EXPIRY: Final = 60.0
"""Seconds an idle worker thread waits for work before it exits."""


class PoolThread(threading.Thread):
    """A daemon thread a pool keeps for work to come; ``loop`` runs on it, given the thread.

    ``idle`` is True while the thread waits for its next piece of work and False while it
    does one (a tool, a report, a look). Only the thread itself writes it, just before it
    starts to wait and just after the wait ends: one attribute write each, the whole cost
    on the call path. ``toolpalette.testing.LeakCheck`` reads it to tell a pool's spare
    thread, which is not a leak, from one still running a tool, which is; it never reads
    another thread's frames for that (``_run/watchdog.py`` says why).
    """

    def __init__(self, loop: Callable[[PoolThread], object], name: str) -> None:
        super().__init__(target=loop, args=(self,), name=name, daemon=True)
        self.idle = False
        """Whether the thread is waiting for work; False until its loop first waits."""


class PoolBusy(Exception):
    """Every slot is held by an abandoned call, or no thread can start; refused at once."""


def default_workers() -> int:
    """The pool size when none is configured: ``min(32, CPUs + 4)``, as the stdlib's."""
    return min(32, (os.cpu_count() or 1) + 4)


def _positive(workers: object) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"the worker pool size must be a positive integer, not {workers!r}")
    return workers


_SHARED: dict[int, WorkerPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(max_workers: int | None = None) -> WorkerPool:
    """The process-wide pool of ``max_workers`` threads (default: `default_workers()`).

    Every executor asking for one size shares one pool, so the bounds hold for the
    process, not per executor.
    """
    size = default_workers() if max_workers is None else _positive(max_workers)
    with _SHARED_LOCK:
        pool = _SHARED.get(size)
        if pool is None:
            pool = _SHARED[size] = WorkerPool(size)
        return pool


class Job:
    """One sync call handed to a worker: the function, and how its outcome is delivered.

    A subclass sets `fn` and says how the outcome goes back in `deliver()`
    (the pipeline's: an event loop's handoff, or a blocked thread's wait), so a call
    costs one object, not a job and a callback. The pool's own bookkeeping lives in the
    other slots, set by `WorkerPool.submit()` and written under the pool's lock.
    """

    __slots__ = ("abandoned", "finished", "fn", "refused", "released", "waiting")

    fn: Callable[[], Any]
    """The call to run in a worker; what it returns or raises is delivered."""
    abandoned: bool
    """Set by the caller that stopped waiting; the outcome is then dropped."""
    released: bool
    """Whether abandoning this job gave its slot back to the pool."""
    finished: bool
    """Whether the worker has accounted for the job's end (its slot is free)."""
    waiting: bool
    """Whether the job waits for a free worker (it has not started)."""
    refused: bool
    """Whether the pool refused the job while it waited (delivered as a PoolBusy)."""

    def deliver(self, ok: bool, value: Any) -> None:
        """Hand over the outcome: ``(True, result)`` or ``(False, exception)``.

        Runs on the worker thread (or, for a job refused while it waited, on the thread
        that refused it), unless the job was abandoned first. It must not block: the
        worker takes its next job only after it.
        """
        raise NotImplementedError


class WorkerPool:
    """Threads for sync tools: at most ``max_workers`` calls in progress at once.

    An abandoned call gives its slot back while fewer than ``max_abandoned`` threads are
    abandoned; beyond that it keeps the slot until it ends, so threads never exceed
    ``max_workers + max_abandoned``. A job submitted while every slot is taken waits for
    one, first come first served. Worker threads are daemons: a hung tool never keeps
    the process from exiting.
    """

    def __init__(self, max_workers: int | None = None, max_abandoned: int | None = None) -> None:
        self.max_workers = default_workers() if max_workers is None else _positive(max_workers)
        """Calls that may run at once."""
        self.max_abandoned = max_abandoned if max_abandoned is not None else self.max_workers
        """Abandoned threads tolerated before abandoned calls keep their slots."""
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._waiting: collections.deque[Job] = collections.deque()
        self._stuck = 0
        self._busy = 0
        self._idle = 0
        self._threads = 0
        self.abandoned = 0
        """Abandoned threads still running (their tools have not returned yet)."""
        self.abandoned_total = 0
        """Calls abandoned since the pool was made."""

    @property
    def threads(self) -> int:
        """Worker threads alive (idle, busy and abandoned)."""
        return self._threads

    @property
    def busy(self) -> int:
        """Slots taken by calls in progress."""
        return self._busy

    @property
    def waiting(self) -> int:
        """Jobs waiting for a free worker."""
        return len(self._waiting)

    def submit(self, job: Job) -> None:
        """Hand ``job`` to a worker now, or queue it until one is free.

        Raises:
            PoolBusy: every slot is held by an abandoned call, or no thread can start;
                nothing was queued.
        """
        with self._lock:
            job.abandoned = job.released = job.finished = job.waiting = job.refused = False
            if self._busy < self.max_workers:
                self._dispatch(job)
            elif self._stuck >= self.max_workers:
                raise PoolBusy
            else:
                job.waiting = True
                self._waiting.append(job)

    def abandon(self, job: Job) -> bool:
        """Stop waiting for ``job``: its outcome is dropped; its slot is freed if allowed.

        Returns whether the job had started (False: it was still waiting for a worker,
        and now never runs).
        """
        with self._lock:
            if job.abandoned:
                return not (job.waiting or job.refused)
            job.abandoned = True
            if job.refused:  # refused while waiting: it never ran
                return False
            if job.waiting:
                self._waiting.remove(job)
                return False
            if job.finished:  # it ended as the caller gave up: nothing is left running
                return True
            self.abandoned_total += 1
            if self.abandoned < self.max_abandoned:
                job.released = True
                self.abandoned += 1
                self._busy -= 1
                self._dispatch_waiting()
            else:
                self._stuck += 1
                if self._stuck >= self.max_workers:
                    self._refuse_waiting()
            return True

    def _dispatch(self, job: Job) -> None:
        """Give ``job`` a slot and a thread (an idle one, else a new one); under the lock."""
        if self._idle:
            self._idle -= 1
        else:
            try:
                self._start_thread()
            except RuntimeError:  # the interpreter cannot start another thread
                raise PoolBusy from None
            self._threads += 1
        self._busy += 1
        job.waiting = False
        self._queue.put(job)

    def _dispatch_waiting(self) -> None:
        """Start waiting jobs while slots are free; under the lock."""
        while self._waiting and self._busy < self.max_workers:
            job = self._waiting.popleft()
            try:
                self._dispatch(job)
            except PoolBusy:
                self._refuse(job)

    def _refuse_waiting(self) -> None:
        """Every slot is stuck behind an abandoned call: nobody waiting will ever start."""
        while self._waiting:
            self._refuse(self._waiting.popleft())

    def _refuse(self, job: Job) -> None:
        job.waiting = False
        job.refused = True
        _deliver(job, False, PoolBusy())

    def _start_thread(self) -> None:
        PoolThread(self._work, "toolpalette-worker").start()

    def _work(self, me: PoolThread) -> None:
        get = self._queue.get
        while True:
            me.idle = True
            try:
                job = get(timeout=IDLE_EXPIRY)
            except queue.Empty:
                if self._retire_idle():
                    return
                continue
            me.idle = False
            try:
                ok, outcome = True, job.fn()
            except BaseException as exc:  # SystemExit and KeyboardInterrupt from a tool included
                ok, outcome = False, exc
            # Account first, deliver last: the caller then wakes to a worker that is
            # about to block, not one still holding the GIL for its bookkeeping.
            retire = self._finish(job)
            if not job.abandoned:
                _deliver(job, ok, outcome)
            del job, outcome  # a result is the caller's: never kept alive by an idle thread
            if retire:
                return

    def _finish(self, job: Job) -> bool:
        """Account for a finished job; returns whether this thread should exit."""
        with self._lock:
            job.finished = True
            if job.released:
                self.abandoned -= 1
                self._threads -= 1
                return True
            if job.abandoned:
                self._stuck -= 1
            self._busy -= 1
            self._idle += 1
            if self._waiting:
                self._dispatch_waiting()  # this thread, now idle, takes the next one
            return False

    def _retire_idle(self) -> bool:
        with self._lock:
            # Jobs are queued under the lock, so an empty queue here means no job is
            # on its way to this thread; a surplus idle thread may leave.
            if self._idle and self._queue.empty():
                self._idle -= 1
                self._threads -= 1
                return True
            return False


def _deliver(job: Job, ok: bool, outcome: Any) -> None:
    try:
        job.deliver(ok, outcome)
    except Exception:  # pragma: no cover - delivery targets are ours and do not raise
        logger.exception("delivering a tool result failed")
