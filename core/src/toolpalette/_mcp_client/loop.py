"""The event loop a hub's MCP sessions live on: a daemon thread running an anyio portal.

Why a loop of its own, and why not the portal's calls: docs/architecture.md.
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
