"""The bounded worker pool sync tools run in.

A sync tool cannot be stopped from outside its thread, so a call that outlives its
deadline is *abandoned*: the caller gets its answer, the tool's abort event is set, and
the thread finishes on its own with its late result dropped. The pool bounds both the
calls in progress and the abandoned threads, and refuses work at once (:class:`PoolBusy`)
rather than queueing it behind a hung tool: it never deadlocks.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = ["Job", "PoolBusy", "WorkerPool"]

logger = logging.getLogger("toolpalette.executor")

IDLE_EXPIRY: Final = 60.0
"""Seconds an idle worker thread waits for work before it exits."""


class PoolBusy(Exception):
    """Every worker is taken (or too many are abandoned); the call is refused at once."""


class Job:
    """One sync call handed to a worker: the function, and how to deliver its outcome.

    ``deliver(ok, value)`` runs on the worker thread with ``(True, result)`` or
    ``(False, exception)``, unless the job was abandoned first.
    """

    __slots__ = ("abandoned", "deliver", "finished", "fn", "released")

    def __init__(self, fn: Callable[[], Any], deliver: Callable[[bool, Any], None]) -> None:
        self.fn = fn
        self.deliver = deliver
        self.abandoned = False
        """Set by the caller that stopped waiting; the outcome is then dropped."""
        self.released = False
        """Whether abandoning this job gave its slot back to the pool."""
        self.finished = False
        """Whether the worker has accounted for the job's end (its slot is free)."""


class WorkerPool:
    """Threads for sync tools: at most ``max_workers`` calls in progress at once.

    An abandoned call gives its slot back while fewer than ``max_abandoned`` threads are
    abandoned; beyond that it keeps the slot until it ends, so threads never exceed
    ``max_workers + max_abandoned``. Worker threads are daemons: a hung tool never
    keeps the process from exiting.
    """

    def __init__(self, max_workers: int | None = None, max_abandoned: int | None = None) -> None:
        self.max_workers = max_workers or min(32, (os.cpu_count() or 1) + 4)
        """Calls that may run at once."""
        self.max_abandoned = max_abandoned if max_abandoned is not None else self.max_workers
        """Abandoned threads tolerated before abandoned calls keep their slots."""
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Job] = queue.SimpleQueue()
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

    def submit(self, job: Job) -> None:
        """Hand ``job`` to a worker now.

        Raises:
            PoolBusy: every slot is taken; nothing was queued.
        """
        with self._lock:
            if self._busy >= self.max_workers:
                raise PoolBusy
            self._busy += 1
            if self._idle:
                self._idle -= 1
            else:
                try:
                    self._start_thread()
                except RuntimeError:  # the interpreter cannot start another thread
                    self._busy -= 1
                    raise PoolBusy from None
                self._threads += 1
            self._queue.put(job)

    def abandon(self, job: Job) -> None:
        """Stop waiting for ``job``: its outcome is dropped; its slot is freed if allowed."""
        with self._lock:
            if job.abandoned:
                return
            job.abandoned = True
            if job.finished:  # it ended as the caller gave up: nothing is left running
                return
            self.abandoned_total += 1
            if self.abandoned < self.max_abandoned:
                job.released = True
                self.abandoned += 1
                self._busy -= 1

    def _start_thread(self) -> None:
        thread = threading.Thread(target=self._work, name="toolpalette-worker", daemon=True)
        thread.start()

    def _work(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=IDLE_EXPIRY)
            except queue.Empty:
                if self._retire_idle():
                    return
                continue
            ok, outcome = _run(job)
            # Account first, deliver last: the caller then wakes to a worker that is
            # about to block, not one still holding the GIL for its bookkeeping.
            retire = self._finish(job)
            if not job.abandoned:
                _deliver(job, ok, outcome)
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
            self._busy -= 1
            self._idle += 1
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


def _run(job: Job) -> tuple[bool, Any]:
    try:
        return True, job.fn()
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from a tool included
        return False, exc


def _deliver(job: Job, ok: bool, outcome: Any) -> None:
    try:
        job.deliver(ok, outcome)
    except Exception:  # pragma: no cover - delivery targets are ours and do not raise
        logger.exception("delivering a tool result failed")
