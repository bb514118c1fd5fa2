"""A tool's progress, forwarded to the MCP client as progress notifications."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext

__all__ = ["Progress"]

logger = logging.getLogger("toolpalette.mcp")


class Progress:
    """Forwards a call's progress reports, in order, as MCP progress notifications.

    Reports may come from a worker thread (a sync tool): they are queued onto the
    event loop and sent by one task, started at the first report; `close()` sends
    what is left before the call's result goes out. The SDK drops them when the
    client asked for no progress.
    """

    __slots__ = ("_loop", "_queue", "_sender", "_session")

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self._session = ctx.session
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[float, float | None, str | None] | None] | None = None
        self._sender: asyncio.Future[None] | None = None

    def report(self, done: float, total: float | None, message: str | None) -> None:
        self._loop.call_soon_threadsafe(self._put, (done, total, message))

    def _put(self, item: tuple[float, float | None, str | None]) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._sender = asyncio.ensure_future(self._send(self._queue))
        self._queue.put_nowait(item)

    async def _send(
        self, queue: asyncio.Queue[tuple[float, float | None, str | None] | None]
    ) -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            try:
                await self._session.report_progress(*item)
            except Exception:  # a closed stream: the result will not arrive either
                logger.debug("a progress notification could not be sent", exc_info=True)

    async def close(self) -> None:
        """Send the reports still queued, before the call's result goes out."""
        # Reports sent before the tool returned were queued on the loop before its result
        # resumed this call, so the queue holds every one of them by now.
        if self._queue is not None and self._sender is not None:
            with anyio.CancelScope(shield=True):
                self._queue.put_nowait(None)
                await self._sender
