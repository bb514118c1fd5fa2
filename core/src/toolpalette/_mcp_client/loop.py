"""The event loop a hub's MCP sessions live on: a daemon thread running an anyio portal.

Why a loop of its own. The ``mcp`` SDK is anyio-based, and a session belongs to the
event loop (and the task) that opened it. Thinkers call from many loops and threads: a
host's own loop, ``asyncio.run`` in a sync call's worker, ``execute_sync``. And a
palette lists a server's tools from sync code (``begin_turn``), often called on a
host's loop: if that loop owned the sessions, the listing would wait for the very loop
it blocks, a deadlock. So every session of a hub lives on one loop, in a daemon thread
started on first use, and each caller waits from its own side: an async caller awaits
(`LoopThread.run_async()`), sync code blocks (`LoopThread.run()`), and sync
code on that loop itself is refused rather than left to wait for itself.

How anyio's blocking portal is used. The thread runs ``anyio.run`` around a
``BlockingPortal``, which holds the loop open until it is stopped. Stopping it (with
``cancel_remaining``) ends the loop the structured way: whatever still runs is
cancelled and awaited (a stdio transport's own cleanup then still ends its process),
and the loop is closed. Calls do not go through the portal's ``call``,
``start_task_soon`` or ``call_async``, for two reasons:

- each blocks the calling thread until the portal's loop has started the task, so the
  timeout of a sync caller (and of `LoopThread.close()`) would not hold while
  that loop is held up, by an in-process server's handler that blocks, say; and an
  async caller's own loop would stall with it;
- a round trip costs about twice asyncio's own (``call_async`` about 115 µs against
  61 µs for ``run_coroutine_threadsafe`` and ``wrap_future``, on the 2-core machine
  the benchmarks run on), and every remote call pays it.

So coroutines reach the portal's loop through ``call_soon_threadsafe``, which never
blocks the submitter. A sync caller blocks on asyncio's ``run_coroutine_threadsafe``
future. An async caller on another loop takes a leaner way (`_Hop`): one handle
each way and a future of its own loop, without the ``concurrent.futures`` future (a
lock and a condition) and the two chained callbacks of ``run_coroutine_threadsafe`` and
``wrap_future``, which cost twice as much: 29 against 54 µs of CPU a round trip on the
2-core machine the benchmarks run on, where every remote call pays it. Cancelling the
caller cancels the coroutine on the loop, either way. For the same reason the thread is
started here and not by ``anyio.from_thread.start_blocking_portal``, whose exit waits
for its thread without a bound: `LoopThread.close()` waits at most its ``timeout``
(it runs at interpreter exit too), and a loop still held up after it is left to its
daemon thread.

What a round trip still costs is two wake-ups of a thread (this loop's, then the
caller's), each a write to a loop's self-pipe and the thread's turn at the GIL: the
floor of a session one loop owns and callers on other loops share (see the
benchmark ``bench_mcp_client``, its "the hop to the pool's loop and back" row).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

__all__ = ["LoopThread"]

logger = logging.getLogger("toolpalette.mcp")

T = TypeVar("T")


class LoopThread:
    """One event loop in a daemon thread: started on first use, stopped by `close()`.

    Thread-safe.
    """

    def __init__(self, name: str = "toolpalette-mcp") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._portal: BlockingPortal | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    @property
    def started(self) -> bool:
        """Whether the loop was started (by a first use)."""
        return self._loop is not None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop, started (in its daemon thread) on first use.

        Raises:
            RuntimeError: the loop was closed, or the ``mcp`` extra is not installed.
        """
        loop = self._loop
        if loop is not None:
            return loop
        with self._lock:
            if self._closed:
                raise RuntimeError("this MCP client pool is closed")
            if self._loop is None:
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        try:
            import anyio  # noqa: F401 - the mcp extra's, imported once a server is used
        except ModuleNotFoundError as exc:
            raise RuntimeError(
                "the MCP client is not installed: pip install 'toolpalette[mcp]'"
            ) from exc
        started: concurrent.futures.Future[tuple[BlockingPortal, asyncio.AbstractEventLoop]]
        started = concurrent.futures.Future()
        thread = threading.Thread(target=_serve, args=(started,), name=self._name, daemon=True)
        thread.start()
        self._portal, self._loop = started.result()
        self._thread = thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the loop; cancelling the future cancels it."""
        try:
            loop = self.loop
        except BaseException:
            coro.close()
            raise
        return _submit(coro, loop)

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the loop, from any loop; cancelling this cancels ``coro``."""
        try:
            loop = self.loop
        except BaseException:
            coro.close()
            raise
        caller = asyncio.get_running_loop()
        if caller is loop:
            # A task of its own even here: the SDK's cancel scopes must begin and end in one
            # task, and the pipeline may start a tool in one task and resume it in another.
            return await loop.create_task(coro)
        return await _Hop(coro, loop, caller).result()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and block until it ends (from sync code).

        Raises:
            TimeoutError: ``timeout`` passed (``coro`` is cancelled).
            RuntimeError: called on the loop itself, which cannot wait for itself.
        """
        if self._loop is not None and _running_loop() is self._loop:
            coro.close()
            raise RuntimeError("a sync call on the MCP client pool's own loop would deadlock")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} seconds") from None

    def close(
        self,
        last: Callable[[], Coroutine[Any, Any, object]] | None = None,
        timeout: float = 10.0,
    ) -> None:
        """Refuse new work, run ``last()`` on the loop, then stop it. Idempotent.

        Waits at most ``timeout`` for ``last`` and as long again for the thread to end.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, portal, thread = self._loop, self._portal, self._thread
        if loop is None or portal is None or thread is None:
            return
        if last is not None:
            try:
                _submit(last(), loop).result(timeout)
            except Exception:
                logger.warning("MCP servers did not all stop within %g seconds", timeout)
        with contextlib.suppress(RuntimeError):  # the loop already ended
            _submit(portal.stop(cancel_remaining=True), loop)
        thread.join(timeout)

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("idle" if self._loop is None else "running")
        return f"<LoopThread {self._name!r} {state}>"


class _Hop(Generic[T]):
    """One coroutine run on ``loop`` for a caller on another loop: a handle each way.

    Made on the caller's loop. The coroutine becomes a task on ``loop``; its outcome comes
    back to a future of the caller's loop. Cancelling the caller cancels the task (or, if
    it has not started, closes the coroutine).
    """

    __slots__ = ("_caller", "_coro", "_done", "_loop", "_task")

    def __init__(
        self,
        coro: Coroutine[Any, Any, T],
        loop: asyncio.AbstractEventLoop,
        caller: asyncio.AbstractEventLoop,
    ) -> None:
        self._coro = coro
        self._loop = loop
        self._caller = caller
        self._done: asyncio.Future[T] = caller.create_future()
        self._task: asyncio.Task[T] | None = None
        try:
            loop.call_soon_threadsafe(self._start)
        except BaseException:  # the loop is closed
            coro.close()
            raise

    async def result(self) -> T:
        """The coroutine's result (or exception), once it has run on the loop."""
        try:
            return await self._done
        except asyncio.CancelledError:
            with contextlib.suppress(RuntimeError):  # the loop ended: nothing runs there
                self._loop.call_soon_threadsafe(self._cancel)
            raise

    def _start(self) -> None:  # on the loop
        if self._done.cancelled():  # the caller gave up before it started
            self._coro.close()
            return
        task = self._task = self._loop.create_task(self._coro)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[T]) -> None:  # on the loop
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody waits
            self._caller.call_soon_threadsafe(self._settle, task)

    def _settle(self, task: asyncio.Task[T]) -> None:  # on the caller's loop
        done = self._done
        if done.done():
            return
        if task.cancelled():
            # Not the caller's doing (that cancelled ``done`` first): the pool's loop is
            # ending. A ``CancelledError`` here would read as the caller's own task cancelled.
            done.set_exception(RuntimeError("the MCP client pool closed during the call"))
            return
        error = task.exception()
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(task.result())

    def _cancel(self) -> None:  # on the loop, after _start
        if self._task is not None:
            self._task.cancel()


def _submit(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop
) -> concurrent.futures.Future[T]:
    """``run_coroutine_threadsafe``, closing ``coro`` when it cannot be submitted."""
    try:
        return asyncio.run_coroutine_threadsafe(coro, loop)
    except BaseException:
        coro.close()
        raise


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _serve(
    started: concurrent.futures.Future[tuple[BlockingPortal, asyncio.AbstractEventLoop]],
) -> None:
    """The thread's body: the portal holds the loop open until it is stopped."""
    import anyio
    from anyio.from_thread import BlockingPortal

    async def hold() -> None:
        async with BlockingPortal() as portal:
            started.set_result((portal, asyncio.get_running_loop()))
            await portal.sleep_until_stopped()

    try:
        anyio.run(hold)
    except BaseException as exc:
        if not started.done():
            started.set_exception(exc)
        else:
            logger.debug("the MCP client loop ended: %r", exc)
