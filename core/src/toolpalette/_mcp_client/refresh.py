"""One server's tools as a hub offers them: the last good listing, and the next one."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from typing import Final, Literal

from toolpalette._mcp_client import cached as _cached
from toolpalette._mcp_client import offered as _offered
from toolpalette._mcp_client.connection import BACKOFF_MAX as START_BACKOFF_MAX
from toolpalette._mcp_client.connection import Connection
from toolpalette._mcp_client.listing import Fetched
from toolpalette._mcp_client.offered import Offer
from toolpalette._mcp_client.transports import describe
from toolpalette._plugins.problems import Problem
from toolpalette.errors import MCPServerError

__all__ = ["BACKOFF_FIRST", "BACKOFF_MAX", "Mode", "ServerTools"]

logger = logging.getLogger("toolpalette.mcp")

BACKOFF_FIRST: Final = 1.0
"""Seconds after a failed listing before the next may start."""
BACKOFF_MAX: Final = 60.0
"""The longest wait between two listings of a server whose listings keep failing."""

Mode = Literal["use", "only", "live"]
"""How a listing is found: ``use`` the disk cache when fresh, else the server; ``only``
what is at hand (memory or disk), never starting a server; ``live`` from the server,
even over a fresh disk cache (``toolpalette check``)."""

_NOTHING: Final = Offer()


class ServerTools:
    """One server's tools: the last good listing, the listing in flight, the failures.

    Thread-safe: read from any thread; listings run on the pool's loop.
    """

    def __init__(self, connection: Connection, stored: _cached.Stored) -> None:
        self.connection = connection
        """The pool's connection to the server."""
        self.changes = 0
        """Grows whenever what `offer()` gives changes (new tools, or availability)."""
        self._stored = stored
        self._lock = threading.Lock()
        self._good: Offer | None = None
        self._generation = -1  # the connection's listing generation the good one was read at
        self._starts = 0  # the connection's starts then (a stored listing: before any)
        self._stored_until: float | None = None  # a stored listing: when it goes stale
        self._failure: Problem | None = None
        self._pending: concurrent.futures.Future[None] | None = None
        self._failures = 0
        self._next_try = 0.0
        self._asked = False  # whether a listing was ever started or read from the disk

    # -- reading what is offered -------------------------------------------------------

    def offer(self, mode: Mode = "use") -> Offer:
        """What the server offers now; waits only for a first listing (see the module doc)."""
        with self._lock:
            if not self._asked and mode != "live":
                self._read_stored()
            if mode == "only" and not self._asked:
                return _NOTHING
            pending = self._maybe_start(live=mode == "live")
            nothing_yet = self._good is None and self._failure is None
        if pending is not None and (nothing_yet or mode == "live") and not self._on_pool_loop():
            with contextlib.suppress(Exception):
                pending.result(self._deadline() + 5.0)
        return self.current()

    def current(self) -> Offer:
        """What the server offers now, without starting anything."""
        with self._lock:
            if self._failure is not None:
                return Offer((), (self._failure,))
            return self._good if self._good is not None else _NOTHING

    def poke(self) -> None:
        """Start the listing of a server that started since its tools came from the disk.

        Read with the hub's version, so that a long-lived host replaces a stored listing
        by the live one soon after the server first runs (in the background).
        """
        with self._lock:
            if self._stored_until is not None and self.connection.starts > self._starts:
                self._maybe_start(live=False)

    def problems(self) -> tuple[Problem, ...]:
        """The problems of what is offered now, and the tools a live listing contradicted.

        A failure, or the listing's refusals; then each tool offered from the disk that
        the live listing contradicted at its first call.
        """
        found = self.current().problems
        mismatches = dict(self.connection.mismatches)
        if not mismatches:
            return found
        return found + tuple(
            _offered.mismatch_problem(self.connection.config, name, reason)
            for name, reason in mismatches.items()
        )

    async def settled(self) -> None:
        """Await a listing in flight or due (within its deadline), from any loop."""
        with self._lock:
            if not self._asked:
                self._read_stored()
            pending = self._maybe_start(live=False)
        if pending is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(asyncio.wrap_future(pending))

    # -- listing -------------------------------------------------------------------------

    def _stale(self) -> bool:
        if self._good is None:
            return True
        connection = self.connection
        if self._stored_until is not None:  # a stored listing: good until the server runs
            return connection.starts > self._starts or time.monotonic() >= self._stored_until
        listing = connection.listing
        listing.check_expiry()
        return listing.generation != self._generation or not listing.fresh()

    def _maybe_start(self, *, live: bool) -> concurrent.futures.Future[None] | None:
        """The listing in flight, starting one when due and allowed (the lock is held)."""
        if self._pending is not None:
            return self._pending
        if not (self._stale() or (live and self._stored_until is not None)):
            return None
        if self._failure is not None and time.monotonic() < self._next_try:
            return None  # backed off: whoever asks, the next listing waits its turn
        try:
            self._pending = self.connection.loop.submit(self._list())
        except RuntimeError:  # the pool is closed
            return None
        self._asked = True
        return self._pending

    def _read_stored(self) -> None:
        """Take the disk's listing as the good one, when a fresh one is there."""
        found = _cached.load(self._stored, self.connection)
        self._asked = found is not None
        if found is not None:
            self._good, self._stored_until = found
            self._starts = self.connection.starts
            self.changes += 1

    def _deadline(self) -> float:
        config = self.connection.config
        if self.connection.connected:
            return config.timeout
        return config.connect_timeout + START_BACKOFF_MAX + config.timeout

    async def _list(self) -> None:
        """Read the server's listing and make its tools; on the pool's loop."""
        connection = self.connection
        config = connection.config
        generation = connection.listing.generation
        deadline = self._deadline()
        try:
            try:
                fetched = await asyncio.wait_for(connection.tools(), deadline)
            except asyncio.TimeoutError:
                raise MCPServerError(
                    server=config.name,
                    reason=f"its tools/list did not answer within {deadline:g} seconds",
                ) from None
            loop = asyncio.get_running_loop()
            made = await loop.run_in_executor(None, self._made, fetched)
        except asyncio.CancelledError:
            with self._lock:
                self._pending = None
            raise
        except Exception as exc:
            reason = exc.reason if isinstance(exc, MCPServerError) else describe(exc)
            self._failed(reason)
            return
        with self._lock:
            changed = (
                self._good is None
                or self._failure is not None
                or self._good.providers != made.providers
                or self._good.problems != made.problems
            )
            self._good, self._generation, self._starts = made, generation, connection.starts
            self._stored_until = None
            self._failure, self._failures, self._pending = None, 0, None
            if changed:
                self.changes += 1

    def _made(self, fetched: Fetched) -> Offer:
        """The tools of a listing, stored on disk for the next process (a worker's work)."""
        made = _offered.offer(self.connection, fetched)
        with contextlib.suppress(Exception):
            _cached.store(self._stored, made, fetched.ttl)
        return made

    def _failed(self, reason: str) -> None:
        with self._lock:
            self._failures += 1
            wait = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (self._failures - 1))
            self._next_try = time.monotonic() + wait
            problem = _offered.server_problem(self.connection.config, reason)
            if problem != self._failure:
                self.changes += 1
            self._failure, self._pending = problem, None
        logger.debug("%s (next listing in %g seconds at the earliest)", problem.reason, wait)

    def _on_pool_loop(self) -> bool:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return False
        loop = self.connection.loop
        return loop.started and running is loop.loop
