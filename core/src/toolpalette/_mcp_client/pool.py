"""The client pool: one connection per MCP server, shared by every thinker of a hub."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar

from toolpalette._mcp_client import signals as _signals
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import CLOSE_TIMEOUT, Connection
from toolpalette._mcp_client.loop import LoopThread

__all__ = ["ClientPool"]

T = TypeVar("T")

_POOLS: weakref.WeakSet[ClientPool] = weakref.WeakSet()


class ClientPool:
    """The connections of one hub: opened on first use, shared, restarted after a crash.

    Thread-safe. Every coroutine of a connection runs on the pool's own event loop.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop = LoopThread()
        self._connections: dict[str, Connection] = {}
        _POOLS.add(self)

    # -- the loop ----------------------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the pool's loop; the future cancels it when cancelled."""
        return self._loop.submit(coro)

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the pool's loop, from any loop; cancelling it cancels ``coro``."""
        return await self._loop.run_async(coro)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the pool's loop and block until it ends (from sync code).

        Raises:
            TimeoutError: ``timeout`` passed (``coro`` is cancelled).
            RuntimeError: called on the pool's own loop, which cannot wait for itself.
        """
        return self._loop.run(coro, timeout)

    # -- connections ---------------------------------------------------------------------

    def connection(self, config: MCPServerConfig) -> Connection:
        """The connection to ``config``'s server (not opened until used).

        A configuration that changed under the same name replaces the old connection,
        which is closed.
        """
        if config.command is not None:
            _signals.install()
        with self._lock:
            if self._loop.closed:
                raise RuntimeError("this MCP client pool is closed")
            existing = self._connections.get(config.name)
            if existing is not None and existing.config == config:
                return existing
            connection = Connection(self._loop, config)
            self._connections[config.name] = connection
        if existing is not None and self._loop.started:
            self.submit(existing.aclose())
        return connection

    def connections(self) -> list[Connection]:
        """Every connection of the pool, by server name."""
        with self._lock:
            return [self._connections[name] for name in sorted(self._connections)]

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._loop.closed

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """End every connection (and server process), then stop the loop. Idempotent.

        Waits at most ``timeout`` for the servers to stop, and as long again for the loop.
        """
        with self._lock:
            connections = list(self._connections.values())
        self._loop.close(lambda: _close_all(connections), timeout)

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self._connections)} server(s)"
        return f"<ClientPool {state}>"


async def _close_all(connections: list[Connection]) -> None:
    await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)


@atexit.register
def _close_pools_at_exit() -> None:
    for pool in list(_POOLS):
        with contextlib.suppress(Exception):
            pool.close(timeout=5.0)
