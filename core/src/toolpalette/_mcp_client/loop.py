"""The event loop a hub's MCP sessions live on: a daemon thread running an anyio portal.

Why a loop of its own. The ``mcp`` SDK is anyio-based, and a session belongs to the
event loop (and the task) that opened it. Thinkers call from many loops and threads: a
host's own loop, ``asyncio.run`` in a sync call's worker, ``execute_sync``. And a
palette lists a server's tools from sync code (``begin_turn``), often called on a
host's loop: if that loop owned the sessions, the listing would wait for the very loop
it blocks, a deadlock. So every session of a hub lives on one loop, in a daemon thread
started on first use, and each caller waits from its own side: an async caller awaits
(:meth:`LoopThread.run_async`), sync code blocks (:meth:`LoopThread.run`), and sync
code on that loop itself is refused rather than left to wait for itself.

How anyio's blocking portal is used. The thread runs ``anyio.run`` around a
``BlockingPortal``, which holds the loop open until it is stopped. Stopping it (with
``cancel_remaining``) ends the loop the structured way: whatever still runs is
cancelled and awaited (a stdio transport's own cleanup then still ends its process),
and the loop is closed. Calls do not go through the portal's ``call``,
``start_task_soon`` or ``call_async``, for two reasons:

- each blocks the calling thread until the portal's loop has started the task, so the
  timeout of a sync caller (and of :meth:`LoopThread.close`) would not hold while
  that loop is held up, by an in-process server's handler that blocks, say; and an
  async caller's own loop would stall with it;
- a round trip costs about twice asyncio's own (``call_async`` about 115 µs against
  61 µs for ``run_coroutine_threadsafe`` and ``wrap_future``, on the 2-core machine
  the benchmarks run on), and every remote call pays it.

So coroutines are submitted with asyncio's ``run_coroutine_threadsafe`` onto the
portal's loop, which never blocks the submitter; cancelling the caller's future
cancels the coroutine there. For the same reason the thread is started here and not
by ``anyio.from_thread.start_blocking_portal``, whose exit waits for its thread
without a bound: :meth:`LoopThread.close` waits at most its ``timeout`` (it runs at
interpreter exit too), and a loop still held up after it is left to its daemon thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

__all__ = ["LoopThread"]

logger = logging.getLogger("toolpalette.mcp")

T = TypeVar("T")


class LoopThread:
    """One event loop in a daemon thread: started on first use, stopped by :meth:`close`.

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
        """Whether :meth:`close` was called."""
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
        loop = self.loop
        if asyncio.get_running_loop() is loop:
            # A task of its own even here: the SDK's cancel scopes must begin and end in one
            # task, and the pipeline may start a tool in one task and resume it in another.
            return await loop.create_task(coro)
        return await asyncio.wrap_future(self.submit(coro))

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
