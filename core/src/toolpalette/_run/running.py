"""Running one tool call under a deadline and the caller's abort signal.

Async tools start *eagerly*: their first step runs at once in the caller's task (in a
context of their own), so a tool that never suspends costs no task, no timer and no
loop round trip. A tool that suspends continues in a task watched by a single
``loop.call_later`` timer; at the deadline the task is cancelled and the caller gets
control back at once, even if the tool swallows the cancellation (the leftover task is
tracked until it ends). Sync tools run in the :class:`~toolpalette._run.workers.WorkerPool`:
from an event loop, one handoff to a worker and one wake-up of the loop, under a deadline
kept by one timer per loop (see "sync tools" below); from a thread without a loop, the
thread blocks on a lock the worker releases.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
import math
import threading
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from functools import partial
from typing import Any, Final, final

from toolpalette._run.abort import AbortSignal
from toolpalette._run.watchdog import UNNAMED, board
from toolpalette._run.watchdog import local as _local
from toolpalette._run.workers import Job, PoolBusy, WorkerPool

__all__ = [
    "BUSY",
    "OK",
    "PENDING",
    "RAISED",
    "TIMEOUT",
    "Aborted",
    "Outcome",
    "leftover_tasks",
    "run_async",
    "run_sync",
]

logger = logging.getLogger("toolpalette.executor")


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


OK: Final = _Marker("OK")
"""The tool returned; the payload is its value."""
RAISED: Final = _Marker("RAISED")
"""The tool raised; the payload is the exception."""
TIMEOUT: Final = _Marker("TIMEOUT")
"""The deadline passed; the call was abandoned."""
BUSY: Final = _Marker("BUSY")
"""The worker pool refused the call."""
PENDING: Final = _Marker("PENDING")
"""An async tool suspended in its first step; it continues in a task."""
_DONE: Final = _Marker("DONE")


class Aborted:
    """The caller's abort signal fired; ``reason`` is the caller's text."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


@final
class Outcome:
    """How a run ended: ``kind`` is OK, RAISED, TIMEOUT, BUSY, PENDING or an :class:`Aborted`."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: Any, value: Any = None) -> None:
        self.kind = kind
        """OK, RAISED, TIMEOUT, BUSY, PENDING (an async tool suspended) or an Aborted."""
        self.value = value
        """The tool's value (OK), its exception (RAISED), the suspended state (PENDING)."""

    def __repr__(self) -> str:
        return f"Outcome({self.kind!r}, {type(self.value).__name__})"


_LEFTOVER: set[asyncio.Task[Any]] = set()
_COUNTS = {"abandoned_tasks_total": 0}


def leftover_tasks() -> int:
    """Async tool tasks abandoned at their deadline (or by an abort) that are still running."""
    return len(_LEFTOVER)


def abandoned_tasks_total() -> int:
    """Async tool tasks abandoned since the process started."""
    return _COUNTS["abandoned_tasks_total"]


# -- async tools ---------------------------------------------------------------------


class _Carried(Exception):
    """Carries a tool's own ``SystemExit`` or ``CancelledError`` out of its task.

    asyncio re-raises ``SystemExit`` from a task into the loop, and turns a task's own
    ``CancelledError`` into a cancelled task (losing the original on Python 3.10).
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(type(original).__name__)
        self.original = original


@final
class Suspended:
    """An async tool that suspended in its first step: what :func:`finish_async` resumes."""

    __slots__ = ("context", "coro", "first", "name")

    def __init__(self, coro: Any, first: Any, context: contextvars.Context) -> None:
        self.coro = coro
        """The tool's coroutine, one step in."""
        self.first = first
        """What its first step yielded (the future it waits on)."""
        self.context = context
        """The context it runs in, its own copy."""
        self.name = UNNAMED
        """The tool's name, for the loop-stall watchdog."""


class _Resume:
    """Continues a coroutine that already ran its first step, inside its own context.

    Each step is marked on the thread's watchdog board (``watchdog.py``) while it runs.
    """

    __slots__ = ("_state",)

    def __init__(self, state: Suspended) -> None:
        self._state = state

    def __await__(self) -> Generator[Any, Any, Any]:
        state = self._state
        coro, run, name = state.coro, state.context.run, state.name
        value, state.first = state.first, None
        marks = board()  # a task runs on its loop's thread: one board for every step
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # thrown in by the task (e.g. cancellation)
                outer, marks.name = marks.name, name
                marks.steps += 1
                try:
                    value = run(coro.throw, exc)
                except StopIteration as stop:
                    return stop.value
                except SystemExit as exit_:
                    raise _Carried(exit_) from None
                finally:
                    marks.name = outer
            else:
                outer, marks.name = marks.name, name
                marks.steps += 1
                try:
                    value = run(coro.send, sent)
                except StopIteration as stop:
                    return stop.value
                except (SystemExit, asyncio.CancelledError) as own:  # not our cancel
                    raise _Carried(own) from None
                finally:
                    marks.name = outer


async def _resume(state: Suspended) -> Any:
    return await _Resume(state)


async def _await_any(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _wake(waiter: asyncio.Future[Any], signal: Any) -> None:
    if not waiter.done():
        waiter.set_result(signal)


def _wake_on_done(waiter: asyncio.Future[Any], _task: object) -> None:
    if not waiter.done():
        waiter.set_result(_DONE)


def _wake_threadsafe(
    loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[Any], reason: str
) -> None:
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
        loop.call_soon_threadsafe(_wake, waiter, Aborted(reason))


def _forget(task: asyncio.Task[Any]) -> None:
    _LEFTOVER.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved


def abandon_task(task: asyncio.Task[Any], abort_event: threading.Event | None) -> None:
    """Cancel ``task`` and track it until it really ends (it may swallow the cancel)."""
    if abort_event is not None:
        abort_event.set()
    if task.done():
        _forget(task)
        return
    task.cancel()
    _COUNTS["abandoned_tasks_total"] += 1
    _LEFTOVER.add(task)
    task.add_done_callback(_forget)


def start_async(awaitable: Any, name: str = UNNAMED) -> Outcome:
    """Run an async tool's first step now, in a context of its own.

    Returns an OK or RAISED outcome when the tool finished without suspending (no
    task, no timer), else a PENDING one whose value :func:`finish_async` continues.
    A plain function, not a coroutine: the common case costs no coroutine frame.
    ``name`` is the tool's, for the watchdog.
    """
    coro = awaitable if type(awaitable) is types.CoroutineType else _await_any(awaitable)
    context = contextvars.copy_context()
    try:
        marks = _local.board
    except AttributeError:
        marks = board()
    outer, marks.name = marks.name, name  # a tool's step that calls a tool nests
    marks.steps += 1
    try:
        first = context.run(coro.send, None)
    except StopIteration as stop:
        return Outcome(OK, stop.value)
    except KeyboardInterrupt:
        raise  # on the loop's thread this may be a real Ctrl-C: the process decides
    except BaseException as exc:
        return Outcome(RAISED, exc)
    finally:
        marks.name = outer
    suspended = Suspended(coro, first, context)
    suspended.name = name
    return Outcome(PENDING, suspended)


async def finish_async(
    state: Suspended,
    timeout: float | None,
    abort: AbortSignal | None,
    abort_event: threading.Event | None,
) -> Outcome:
    """Continue a suspended tool in a task, under ``timeout`` and ``abort``.

    A ``timeout`` of None waits without a deadline (used for approvals). On the
    caller's own cancellation the task is abandoned and ``CancelledError`` propagates.
    """
    loop = asyncio.get_running_loop()
    task = loop.create_task(_resume(state))
    signal = await _wait(loop, task, timeout, abort, abort_event)
    if signal is not _DONE:
        abandon_task(task, abort_event)
        return Outcome(signal)
    if task.cancelled():  # the tool cancelled itself: not our deadline, not the caller
        try:
            task.result()
        except asyncio.CancelledError as exc:
            return Outcome(RAISED, exc)
    error = task.exception()
    if isinstance(error, _Carried):
        return Outcome(RAISED, error.original)
    return Outcome(RAISED, error) if error is not None else Outcome(OK, task.result())


async def run_async(
    awaitable: Any,
    timeout: float | None,
    abort: AbortSignal | None,
    abort_event: threading.Event | None,
) -> Outcome:
    """Run an async tool's awaitable: eagerly, then under ``timeout`` and ``abort``."""
    outcome = start_async(awaitable)
    if outcome.kind is PENDING:
        return await finish_async(outcome.value, timeout, abort, abort_event)
    return outcome


async def _wait(
    loop: asyncio.AbstractEventLoop,
    task: asyncio.Task[Any],
    timeout: float | None,
    abort: AbortSignal | None,
    abort_event: threading.Event | None,
) -> Any:
    waiter: asyncio.Future[Any] = loop.create_future()
    task.add_done_callback(partial(_wake_on_done, waiter))
    timer = loop.call_later(timeout, _wake, waiter, TIMEOUT) if timeout is not None else None
    unsubscribe = abort.subscribe(partial(_wake_threadsafe, loop, waiter)) if abort else None
    try:
        return await waiter
    except asyncio.CancelledError:
        abandon_task(task, abort_event)
        raise
    finally:
        if timer is not None:
            timer.cancel()
        if unsubscribe is not None:
            unsubscribe()


# -- sync tools ----------------------------------------------------------------------
#
# A sync tool called from an event loop costs one handoff to a worker and one wake-up of
# the loop. The call's :class:`_Handoff` is both the pool's job and what the caller's
# task awaits: a future-like object (asyncio's protocol for foreign futures, the
# ``_asyncio_future_blocking`` attribute) that keeps the task's wake-up callback. The
# worker stores the outcome on it and schedules one callback with
# ``call_soon_threadsafe``; that callback, on the loop, settles the call and resumes the
# task right there (an asyncio future would schedule the task's step for one more turn
# of the loop). The deadline is not a timer per call: each loop keeps its calls'
# deadlines (:class:`_Deadlines`) under one timer, armed for the earliest.


_CANCELLED: Final = _Marker("CANCELLED")
"""The caller's task was cancelled while it waited."""


@final
class _Handoff(Job):
    """One sync call from an event loop: the pool's job and the future its task awaits.

    ``kind`` is written on the loop's thread only, once: by :meth:`_arrive` (the worker's
    outcome), the deadline (TIMEOUT), the caller's abort (an :class:`Aborted`) or the
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
        super().__init__(fn)
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
        self._wakeup, self._context = fn, context or contextvars.copy_context()

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
    """A pool job whose caller is a thread blocked in :meth:`wait` (no event loop)."""

    __slots__ = ("_box", "_lock")

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(fn)
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


# -- from sync code ------------------------------------------------------------------


def run_apart(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion from sync code, even on a thread whose loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: list[Outcome] = []

    def run() -> None:
        try:
            box.append(Outcome(OK, asyncio.run(coro)))
        except BaseException as exc:  # handed to the caller's thread, raised there
            box.append(Outcome(RAISED, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join()
    if box[0].kind is RAISED:
        raise box[0].value
    return box[0].value


def run_to_end(call: Callable[[], Any]) -> Any:
    """Run an async tool to completion on a loop of this (worker) thread."""
    return asyncio.run(_await_any(call()))
