"""How a call's run ends (the outcome markers), and async tools in tasks of their own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from functools import partial
from typing import Any, Final, NamedTuple

from toolpalette._run.abort import AbortSignal
from toolpalette._run.watchdog import UNNAMED, board

__all__ = [
    "BUSY",
    "OK",
    "PENDING",
    "RAISED",
    "TIMEOUT",
    "Aborted",
    "Marker",
    "Outcome",
    "abandon_task",
    "abandoned_tasks_total",
    "finish_async",
    "leftover_tasks",
    "run_apart",
    "run_async",
    "run_to_end",
    "start_async",
]

logger = logging.getLogger("toolpalette.executor")


class Marker:
    """One kind of outcome: compared by identity, named in reprs."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


OK: Final = Marker("OK")
"""The tool returned; the payload is its value."""
RAISED: Final = Marker("RAISED")
"""The tool raised; the payload is the exception."""
TIMEOUT: Final = Marker("TIMEOUT")
"""The deadline passed; the call was abandoned."""
BUSY: Final = Marker("BUSY")
"""The worker pool refused the call."""
PENDING: Final = Marker("PENDING")
"""An async tool's task did not end when started; the payload is the task."""
_DONE: Final = Marker("DONE")


class Aborted:
    """The caller's abort signal fired; ``reason`` is the caller's text."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Outcome(NamedTuple):
    """How a run ended: ``kind`` is OK, RAISED, TIMEOUT, BUSY, PENDING or an `Aborted`."""

    kind: Any
    """OK, RAISED, TIMEOUT, BUSY, PENDING (an async tool suspended) or an Aborted."""
    value: Any = None
    """The tool's value (OK), its exception (RAISED), its running task (PENDING)."""


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
    """Carries a tool's own ``SystemExit``, ``KeyboardInterrupt`` or ``CancelledError`` out.

    asyncio re-raises the first two from a task into the loop, and turns a task's own
    ``CancelledError`` into a cancelled task (losing the original on Python 3.10).
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(type(original).__name__)
        self.original = original


class _Marked(Coroutine[Any, Any, Any]):
    """A tool's coroutine as its task drives it, each step marked for the watchdog.

    Transparent to the tool: the task sends and throws (a cancellation, the tool's own
    timeout's) straight into it, so the tool runs in that one task from start to end.
    A coroutine object of its own rather than a wrapping coroutine: one call per step.
    """

    __slots__ = ("_coro", "_marks", "_name", "waiter")

    def __init__(self, coro: Any, name: str) -> None:
        self._coro = coro
        self._name = name
        self._marks = board()  # made on the loop's thread, where each step runs
        self.waiter: asyncio.Future[Any] | None = None
        """Told the moment the tool ends (``finish_async``'s): its caller wakes in the
        next loop round, not two rounds later through the task's done callbacks."""

    def send(self, value: Any) -> Any:
        marks = self._marks
        outer, marks.name = marks.name, self._name
        marks.steps += 1
        try:
            return self._coro.send(value)
        except (SystemExit, KeyboardInterrupt, asyncio.CancelledError) as own:
            self._ended()
            raise _Carried(own) from None  # the tool's own: nothing was thrown in
        except BaseException:
            self._ended()
            raise
        finally:
            marks.name = outer

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        marks = self._marks
        outer, marks.name = marks.name, self._name
        marks.steps += 1
        try:
            return self._coro.throw(typ if val is None else val)
        except (SystemExit, KeyboardInterrupt) as own:
            self._ended()
            raise _Carried(own) from None
        except BaseException:
            self._ended()
            raise
        finally:
            marks.name = outer

    def close(self) -> None:
        self._ended()
        self._coro.close()

    def _ended(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(_DONE)

    def __await__(self) -> Generator[Any, Any, Any]:
        raise TypeError("a tool's task drives it; it is not awaited")


async def _await_any(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _wake(waiter: asyncio.Future[Any], signal: Any) -> None:
    if not waiter.done():
        waiter.set_result(signal)


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


_EAGER: Final = sys.version_info >= (3, 12)
"""Whether a task can start eagerly (Python 3.12+): its first step runs at once."""


def _ended(task: asyncio.Task[Any]) -> Outcome:
    """How a task that ended on its own ended (not cancelled by its caller)."""
    try:
        error = task.exception()
    except asyncio.CancelledError as exc:  # the tool cancelled its own task: it raised that
        return Outcome(RAISED, exc)
    if error is None:
        return Outcome(OK, task.result())
    if isinstance(error, _Carried):
        if isinstance(error.original, KeyboardInterrupt):
            raise error.original  # on the loop's thread this may be a real Ctrl-C
        return Outcome(RAISED, error.original)
    return Outcome(RAISED, error)


def start_async(awaitable: Any, name: str = UNNAMED) -> Outcome:
    """Start an async tool in a task of its own, which runs it from start to end.

    On Python 3.12 and later the task starts eagerly: a tool that never suspends ends
    here, with an OK or RAISED outcome and no loop round trip. Otherwise (it suspended,
    or the task could not start eagerly) a PENDING outcome holds the task, for
    `finish_async()`. ``name`` is the tool's, for the watchdog.
    """
    coro = awaitable if type(awaitable) is types.CoroutineType else _await_any(awaitable)
    loop = asyncio.get_running_loop()
    marked = _Marked(coro, name)
    if _EAGER:
        eager = asyncio.Task
        task = eager(marked, loop=loop, eager_start=True)  # type: ignore[call-arg,unused-ignore]
    else:
        task = loop.create_task(marked)
    return _ended(task) if task.done() else Outcome(PENDING, task)


async def finish_async(
    task: asyncio.Task[Any],
    timeout: float | None,
    abort: AbortSignal | None,
    abort_event: threading.Event | None,
) -> Outcome:
    """Wait for a started tool's task under ``timeout`` and ``abort``.

    A ``timeout`` of None waits without a deadline (used for approvals). On the
    caller's own cancellation the task is cancelled (the host's cancellation reaches
    the tool) and ``CancelledError`` propagates.
    """
    loop = asyncio.get_running_loop()
    if not _EAGER:
        # The task's first step is queued; this caller's resumption queues behind it, so
        # a tool that never suspends has ended when the caller runs again: one loop
        # round, no waiter and no timer (the deadline is checked against the time taken).
        begun = loop.time()
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            abandon_task(task, abort_event)
            raise
        if task.done():
            return _ended(task)
        if timeout is not None:  # the first step's time counts against the deadline
            timeout = max(timeout - (loop.time() - begun), 0.0)
    signal = await _wait(loop, task, timeout, abort, abort_event)
    if signal is not _DONE:
        abandon_task(task, abort_event)
        return Outcome(signal)
    return _ended(task)


async def run_async(
    awaitable: Any,
    timeout: float | None,
    abort: AbortSignal | None,
    abort_event: threading.Event | None,
) -> Outcome:
    """Run an async tool's awaitable in its own task, under ``timeout`` and ``abort``."""
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
    marked = task.get_coro()
    assert isinstance(marked, _Marked)  # every tool task is start_async's
    marked.waiter = waiter  # told as the tool ends, inside its task's last step
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
