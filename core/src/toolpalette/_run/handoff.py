"""Sync tools in the worker pool: the future an event loop awaits, and the blocked wait."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import math
import threading
from collections.abc import Callable, Generator
from typing import Any, Final, final

from toolpalette._run.abort import AbortSignal
from toolpalette._run.running import BUSY, OK, RAISED, TIMEOUT, Aborted, Marker, Outcome
from toolpalette._run.workers import Job, PoolBusy, WorkerPool

__all__ = ["run_blocking", "run_sync"]


_CANCELLED: Final = Marker("CANCELLED")
"""The caller's task was cancelled while it waited."""


@final
class _Handoff(Job):
    """One sync call from an event loop: the pool's job and the future its task awaits.

    ``kind`` is written on the loop's thread only, once: by `_arrive()` (the worker's
    outcome), the deadline (TIMEOUT), the caller's abort (an `Aborted`) or the
    task's cancellation, whichever comes first; the others then change nothing.
    """

    __slots__ = (
        "_asyncio_future_blocking",
        "_context",
        "_loop",
        "_wakeup",
        "deadline",
        "kind",
        "ok",
        "outcome",
        "timeout",
        "value",
    )

    def __init__(self, fn: Callable[[], Any], loop: asyncio.AbstractEventLoop) -> None:
        self.fn = fn
        self._loop = loop
        self._asyncio_future_blocking = False
        self._wakeup: Callable[[Any], Any] | None = None
        self._context: contextvars.Context | None = None
        self.kind: Any = None
        """None while the call runs, then OK, RAISED, TIMEOUT, an Aborted or CANCELLED."""
        self.value: Any = None
        self.ok = False
        self.outcome: Any = None
        """What the worker delivered (its own slots: the worker never writes ``kind``)."""
        self.deadline = 0.0
        self.timeout = 0.0

    # -- the worker's side ----------------------------------------------------------

    def deliver(self, ok: bool, value: Any) -> None:
        """On the worker: keep the outcome and wake the loop, once."""
        self.ok, self.outcome = ok, value
        try:  # not contextlib.suppress: this is the worker's way back, on every call
            self._loop.call_soon_threadsafe(self._arrive)
        except RuntimeError:  # a closed loop: nobody is waiting any more
            return

    def _arrive(self) -> None:
        """On the loop: the worker's outcome settles the call unless something came first."""
        if self.kind is None:
            self.kind, self.value = (OK if self.ok else RAISED), self.outcome
            wakeup, context = self._wakeup, self._context
            if wakeup is not None and context is not None:
                self._wakeup = None
                context.run(wakeup, self)  # the task's next step, now: no second turn

    # -- the loop's side: deadline, abort, cancellation --------------------------------

    def stop(self, kind: Any) -> None:
        """On the loop: end the wait with ``kind`` (TIMEOUT, an Aborted), if still open."""
        if self.kind is None:
            self.kind = kind
            wakeup = self._wakeup
            if wakeup is not None:
                self._wakeup = None
                self._loop.call_soon(wakeup, self, context=self._context)

    def abort(self, reason: str) -> None:
        """The caller's abort signal fired, on any thread."""
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            self._loop.call_soon_threadsafe(self.stop, Aborted(reason))

    # -- what asyncio's Task asks of a future ------------------------------------------

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def add_done_callback(
        self, fn: Callable[[Any], Any], *, context: contextvars.Context | None = None
    ) -> None:
        if self._wakeup is not None:
            raise RuntimeError("a sync call's handoff is awaited by one task only")
        if context is None:  # not `or`: the task's context, empty, is falsy but its own
            context = contextvars.copy_context()
        self._wakeup, self._context = fn, context

    def remove_done_callback(self, fn: Callable[[Any], Any]) -> int:
        if self._wakeup is not None and self._wakeup == fn:
            self._wakeup = None
            return 1
        return 0

    def done(self) -> bool:
        return self.kind is not None

    def cancelled(self) -> bool:
        return self.kind is _CANCELLED

    def cancel(self, msg: Any = None) -> bool:
        if self.kind is not None:
            return False
        self.value = msg
        self.stop(_CANCELLED)
        return True

    def result(self) -> Any:
        if self.kind is _CANCELLED:
            raise asyncio.CancelledError(*(() if self.value is None else (self.value,)))
        return self.kind

    def __await__(self) -> Generator[Any, None, Any]:
        if self.kind is None:
            self._asyncio_future_blocking = True
            yield self
        return self.result()

    __iter__ = __await__


_PER_THREAD = threading.local()


class _Deadlines:
    """The deadlines of one event loop's sync calls, kept by one timer for the earliest.

    Calls with one timeout reach their deadlines in the order they started, so each
    timeout keeps a FIFO of calls (usually one or two timeouts per loop); the earliest
    deadline is at the head of one of them. A call that ends is dropped from the head
    of its FIFO when it is there, and FIFOs are compacted when calls that ended pile up
    behind a long one, so memory follows the calls in flight. Used on the loop's thread
    only.
    """

    __slots__ = ("armed", "fifos", "live", "loop", "timer")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.fifos: dict[float, collections.deque[_Handoff]] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.armed = math.inf
        """The time the timer is armed for (inf: not armed)."""
        self.live = 0
        """Calls added and not yet ended."""

    def add(self, handoff: _Handoff, timeout: float) -> None:
        handoff.timeout = timeout
        handoff.deadline = deadline = self.loop.time() + timeout
        fifo = self.fifos.get(timeout)
        if fifo is None:
            fifo = self.fifos[timeout] = collections.deque()
        elif len(fifo) > 2 * self.live + 64:
            fifo = self.fifos[timeout] = collections.deque(h for h in fifo if h.kind is None)
        fifo.append(handoff)
        self.live += 1
        if deadline < self.armed:
            self._arm(deadline)

    def end(self, handoff: _Handoff) -> None:
        """The call stopped waiting; drop it, and any ended calls, from its FIFO's head."""
        if handoff.kind is None:
            handoff.kind = _CANCELLED  # its coroutine was closed: nobody waits for it
        self.live -= 1
        fifo = self.fifos.get(handoff.timeout)
        while fifo and fifo[0].kind is not None:
            fifo.popleft()

    def _arm(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.armed = when
        self.timer = self.loop.call_at(when, self._expire)

    def _expire(self) -> None:
        """The timer fired: stop every call due by now, and arm for the next deadline."""
        due, self.armed, self.timer = self.armed, math.inf, None
        earliest = math.inf
        for timeout, fifo in list(self.fifos.items()):
            while fifo and (fifo[0].kind is not None or fifo[0].deadline <= due):
                fifo.popleft().stop(TIMEOUT)
            if fifo:
                earliest = min(earliest, fifo[0].deadline)
            else:
                del self.fifos[timeout]
        if earliest < math.inf:
            self._arm(earliest)


def _deadlines(loop: asyncio.AbstractEventLoop) -> _Deadlines:
    """This loop's deadlines (a loop runs on one thread, so they are kept per thread)."""
    deadlines: _Deadlines | None = getattr(_PER_THREAD, "deadlines", None)
    if deadlines is None or deadlines.loop is not loop:
        deadlines = _PER_THREAD.deadlines = _Deadlines(loop)
    return deadlines


async def run_sync(
    fn: Callable[[], Any],
    pool: WorkerPool,
    timeout: float,
    abort: AbortSignal | None,
    abort_event: threading.Event | None,
) -> Outcome:
    """Run a sync tool in ``pool`` and await it without blocking the loop.

    The deadline and the abort are in place before the job goes to the pool: after
    that the loop has nothing left to do but sleep, leaving the GIL to the worker.
    """
    loop = asyncio.get_running_loop()
    handoff = _Handoff(fn, loop)
    deadlines = _deadlines(loop)
    deadlines.add(handoff, timeout)
    unsubscribe = abort.subscribe(handoff.abort) if abort is not None else None
    try:
        pool.submit(handoff)
        await handoff
    except PoolBusy:
        handoff.kind = BUSY
    except asyncio.CancelledError:
        _abandon_job(pool, handoff, abort_event)
        raise
    finally:
        if unsubscribe is not None:
            unsubscribe()
        deadlines.end(handoff)
    kind, value = handoff.kind, handoff.value
    # The deadline FIFO may hold the spent handoff a while: not the call's input or result.
    handoff.fn, handoff.value, handoff.outcome = _spent, None, None
    if kind is OK or kind is RAISED:
        return Outcome(BUSY) if handoff.refused else Outcome(kind, value)
    if kind is BUSY:
        return Outcome(BUSY)
    return _ended(pool, handoff, kind, abort_event)


def _spent() -> None:
    """What a spent handoff holds instead of its call (never run)."""


def _ended(pool: WorkerPool, job: Job, signal: Any, abort_event: threading.Event | None) -> Outcome:
    """The outcome of a pool job whose caller stopped waiting before it ended.

    A job whose deadline passed before any worker took it is BUSY (it never ran: "too
    many calls", not "too slow").
    """
    started = _abandon_job(pool, job, abort_event)
    return Outcome(BUSY if signal is TIMEOUT and not started else signal)


def _abandon_job(pool: WorkerPool, job: Job, abort_event: threading.Event | None) -> bool:
    if abort_event is not None:
        abort_event.set()
    return pool.abandon(job)


@final
class _Blocking(Job):
    """A pool job whose caller is a thread blocked in `wait()` (no event loop)."""

    __slots__ = ("_box", "_lock")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self._lock = threading.Lock()
        self._lock.acquire()
        self._box: dict[str, Any] = {}

    def put(self, signal: Any) -> None:
        if self._box.setdefault("signal", signal) is signal:  # first writer wins
            self._lock.release()

    def deliver(self, ok: bool, value: Any) -> None:
        self.put(Outcome(OK if ok else RAISED, value))

    def abort(self, reason: str) -> None:
        self.put(Aborted(reason))

    def wait(self, timeout: float) -> Any:
        if self._lock.acquire(timeout=timeout):
            return self._box["signal"]
        self.put(TIMEOUT)
        return self._box["signal"]


def run_blocking(
    fn: Callable[[], Any],
    pool: WorkerPool,
    timeout: float,
    abort: AbortSignal | None,
    abort_event: threading.Event | None,
) -> Outcome:
    """Run ``fn`` in ``pool`` and block this thread until it ends, times out or aborts."""
    job = _Blocking(fn)
    try:
        pool.submit(job)
    except PoolBusy:
        return Outcome(BUSY)
    unsubscribe = abort.subscribe(job.abort) if abort else None
    try:
        signal = job.wait(timeout)
    finally:
        if unsubscribe is not None:
            unsubscribe()
    if isinstance(signal, Outcome):
        return Outcome(BUSY) if job.refused else signal
    return _ended(pool, job, signal, abort_event)
