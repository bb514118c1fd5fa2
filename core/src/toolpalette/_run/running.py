"""How a call's run ends (the outcome markers), and async tools under a deadline.

Every way of running a tool reports how it ended as an :class:`Outcome`: its ``kind``
(:data:`OK`, :data:`RAISED`, :data:`TIMEOUT`, :data:`BUSY`, :data:`PENDING` or an
:class:`Aborted`) and its ``value``. Sync tools run in the worker pool
(``handoff.py``); this module runs async ones.

Async tools start *eagerly*: their first step runs at once in the caller's task (in a
context of their own), so a tool that never suspends costs no task, no timer and no
loop round trip. A tool that suspends continues in a task watched by a single
``loop.call_later`` timer; at the deadline the task is cancelled and the caller gets
control back at once, even if the tool swallows the cancellation (the leftover task is
tracked until it ends). :func:`run_apart` and :func:`run_to_end` run a coroutine from
code with no loop of its own (the blocking path, a worker thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from functools import partial
from typing import Any, Final, NamedTuple, final

from toolpalette._run.abort import AbortSignal
from toolpalette._run.watchdog import UNNAMED, board
from toolpalette._run.watchdog import local as _local

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
"""An async tool suspended in its first step; it continues in a task."""
_DONE: Final = Marker("DONE")


class Aborted:
    """The caller's abort signal fired; ``reason`` is the caller's text."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Outcome(NamedTuple):
    """How a run ended: ``kind`` is OK, RAISED, TIMEOUT, BUSY, PENDING or an :class:`Aborted`."""

    kind: Any
    """OK, RAISED, TIMEOUT, BUSY, PENDING (an async tool suspended) or an Aborted."""
    value: Any = None
    """The tool's value (OK), its exception (RAISED), the suspended state (PENDING)."""


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
