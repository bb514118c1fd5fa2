"""The client pool: one connection per MCP server, shared by every thinker of a hub.

The ``mcp`` SDK is asyncio-based, and a session belongs to the event loop (and the
task) that opened it. The pool therefore owns one event loop, run by a daemon thread
it starts on first use; every session lives there. A call from any other loop awaits a
future that loop resolves, and a call from sync code blocks on it, so thinkers on
different loops, threads and ``execute_sync`` share one connection per server.
Cancelling the caller (the pipeline's timeout, or its abort signal) cancels the
request on the pool's loop, and the SDK then sends ``notifications/cancelled``.

A connection is opened on first use. When the server goes away (its process exits,
its HTTP stream ends), every call in flight is answered at once with a clear error,
and the next call starts it again, after a delay that doubles with each failed start
(:data:`BACKOFF_FIRST` to :data:`BACKOFF_MAX`). ``tools/list`` follows ``nextCursor``;
the listing is kept until the server says ``notifications/tools/list_changed`` or its
``ttlMs`` hint runs out (floored at :data:`MIN_TTL`; without a hint it is kept).

:meth:`ClientPool.close` ends every connection (stdio servers: stdin closed, then the
process tree terminated, then killed) and stops the loop; pools still open at
interpreter exit are closed by an ``atexit`` handler.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import tempfile
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import IO, Any, Final, TypeVar

from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette.errors import MCPServerError

__all__ = ["BACKOFF_FIRST", "BACKOFF_MAX", "MIN_TTL", "ClientPool", "Connection", "ServerGone"]

logger = logging.getLogger("toolpalette.mcp")

BACKOFF_FIRST: Final = 0.25
"""Seconds before the first restart of a server that stopped."""
BACKOFF_MAX: Final = 10.0
"""The longest wait between two starts of a server that keeps failing."""
MIN_TTL: Final = 1.0
"""A ``ttlMs`` hint shorter than this (seconds) is read as this."""
CLOSE_TIMEOUT: Final = 10.0
"""Seconds :meth:`ClientPool.close` waits for the servers to stop."""
_MAX_PAGES: Final = 1000

T = TypeVar("T")

_POOLS: weakref.WeakSet[ClientPool] = weakref.WeakSet()


class ServerGone(Exception):
    """The connection ended under a call (the server exited or hung up)."""


class ClientPool:
    """The connections of one hub: opened on first use, shared, restarted after a crash.

    Thread-safe. Every coroutine of a connection runs on the pool's own event loop.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._connections: dict[str, Connection] = {}
        self._closed = False
        _POOLS.add(self)

    # -- the loop ----------------------------------------------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The pool's event loop, started (in a daemon thread) on first use.

        Raises:
            RuntimeError: the pool is closed.
        """
        loop = self._loop
        if loop is not None:
            return loop
        with self._lock:
            if self._closed:
                raise RuntimeError("this MCP client pool is closed")
            if self._loop is None:
                ready = threading.Event()
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=_run_loop, args=(loop, ready), name="toolpalette-mcp", daemon=True
                )
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the pool's loop; the future cancels it when cancelled."""
        try:
            return asyncio.run_coroutine_threadsafe(coro, self.loop)
        except BaseException:
            coro.close()
            raise

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the pool's loop, from any loop; cancelling it cancels ``coro``."""
        loop = self.loop
        if asyncio.get_running_loop() is loop:
            # A task of its own even here: the SDK's cancel scopes must begin and end in one
            # task, and the pipeline may start a tool in one task and resume it in another.
            return await loop.create_task(coro)
        return await asyncio.wrap_future(self.submit(coro))

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the pool's loop and block until it ends (from sync code).

        Raises:
            TimeoutError: ``timeout`` passed (``coro`` is cancelled).
            RuntimeError: called on the pool's own loop, which cannot wait for itself.
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

    # -- connections ---------------------------------------------------------------------

    def connection(self, config: MCPServerConfig) -> Connection:
        """The connection to ``config``'s server (not opened until used).

        A configuration that changed under the same name replaces the old connection,
        which is closed.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("this MCP client pool is closed")
            existing = self._connections.get(config.name)
            if existing is not None and existing.config == config:
                return existing
            connection = Connection(self, config)
            self._connections[config.name] = connection
        if existing is not None and self._loop is not None:
            self.submit(existing.aclose())
        return connection

    def connections(self) -> list[Connection]:
        """Every connection of the pool, by server name."""
        with self._lock:
            return [self._connections[name] for name in sorted(self._connections)]

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """End every connection (and server process), then stop the loop. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            connections = list(self._connections.values())
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(_close_all(connections), loop)
        try:
            future.result(timeout)
        except Exception:
            logger.warning("MCP servers did not all stop within %g seconds", timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._connections)} server(s)"
        return f"<ClientPool {state}>"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _run_loop(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    loop.run_forever()


async def _close_all(connections: list[Connection]) -> None:
    await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)


@atexit.register
def _close_pools_at_exit() -> None:
    for pool in list(_POOLS):
        with contextlib.suppress(Exception):
            pool.close(timeout=5.0)


class Connection:
    """One server's session, kept open on the pool's loop and restarted after a crash.

    Every ``async`` method runs on the pool's loop (use ``pool.run`` or
    ``pool.run_async`` to call it from elsewhere).
    """

    def __init__(self, pool: ClientPool, config: MCPServerConfig) -> None:
        self.pool = pool
        self.config = config
        self.generation = 0
        """Grows whenever the server's tool listing may have changed (list_changed, ttl)."""
        self.starts = 0
        """How many times the server was started (or connected to)."""
        self.server_info: tuple[str, str] | None = None
        """The server's own ``(name, version)``, once connected."""
        self._client: Any = None
        self._gone = True
        self._failures = 0
        self._next_start = 0.0
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._opening: asyncio.Lock | None = None
        self._listing: list[Any] | None = None
        self._expires: float | None = None
        self._stderr: IO[bytes] | None = None
        self._closed = False

    # -- opening -----------------------------------------------------------------------

    async def client(self) -> Any:
        """The live SDK ``Client``, starting the server first if it is not running.

        Raises:
            MCPServerError: the server did not start, or did not answer in time.
        """
        if not self._gone and self._client is not None:
            return self._client
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if not self._gone and self._client is not None:
                return self._client
            if self._closed or self.pool.closed:
                raise MCPServerError(server=self.config.name, reason="the hub was closed")
            await self._stop_runner()
            delay = self._next_start - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                client = await self._start()
            except BaseException:
                self._failures += 1
                backoff = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (self._failures - 1))
                self._next_start = time.monotonic() + backoff
                raise
            return client

    async def _start(self) -> Any:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        stop = asyncio.Event()
        self._stop = stop
        self._runner = loop.create_task(self._run(ready, stop))
        self.starts += 1
        try:
            client = await asyncio.wait_for(asyncio.shield(ready), self.config.connect_timeout)
        except asyncio.TimeoutError:
            await self._stop_runner()
            raise MCPServerError(
                server=self.config.name,
                reason=f"did not answer within {self.config.connect_timeout:g} seconds"
                + self._stderr_tail(),
            ) from None
        except MCPServerError:
            raise
        except Exception as exc:
            await self._stop_runner()
            raise MCPServerError(
                server=self.config.name, reason=_describe(exc) + self._stderr_tail()
            ) from exc
        except asyncio.CancelledError:
            await self._stop_runner()
            raise
        self._gone = False
        info = getattr(client, "server_info", None)
        if info is not None:
            self.server_info = (str(info.name), str(getattr(info, "version", "") or ""))
        return client

    async def _run(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        """Hold the SDK client open in one task (its context must exit where it entered)."""
        try:
            async with self._open() as client:
                self._client = client
                if not ready.done():
                    ready.set_result(client)
                await self._watch(client, stop)
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
            elif not isinstance(exc, (asyncio.CancelledError, Exception)):
                raise
            else:
                logger.debug("MCP server %r: connection ended: %r", self.config.name, exc)
        finally:
            self._client = None
            self._gone = True

    async def _watch(self, client: Any, stop: asyncio.Event) -> None:
        """Wait until asked to stop; on modern sessions, also listen for list changes."""
        listener: asyncio.Task[None] | None = None
        if _listens(client):
            listener = asyncio.get_running_loop().create_task(self._listen(client))
        try:
            await stop.wait()
        finally:
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(BaseException):
                    await listener

    async def _listen(self, client: Any) -> None:
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self.listing_changed()
        except Exception as exc:  # an optional feature: without it, ttl and restarts refresh
            logger.debug("MCP server %r: no change events (%r)", self.config.name, exc)

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Any]:
        from mcp import Client

        config = self.config
        target: Any
        if config.server is not None:
            target = config.server
        else:
            target = _Watched(self._transport(), self._hung_up)
        client = Client(target, message_handler=self._on_message, cache=None)
        async with client:
            yield client

    def _transport(self) -> Any:
        config = self.config
        if config.command is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=config.process_env(),
                cwd=config.cwd,
            )
            if self._stderr is None:
                self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept for error reports
            return _StdioTransport(stdio_client, params, self._stderr)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert config.url is not None
        http = httpx2.AsyncClient(
            headers=config.http_headers(),
            timeout=httpx2.Timeout(config.connect_timeout, read=max(300.0, config.timeout)),
        )
        return _HttpTransport(streamable_http_client, config.url, http)

    def _hung_up(self) -> None:
        self._gone = True
        self.listing_changed()

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self.listing_changed()

    def _stderr_tail(self) -> str:
        stream = self._stderr
        if stream is None:
            return ""
        try:
            stream.seek(0, 2)
            size = stream.tell()
            stream.seek(max(0, size - 400))
            tail = stream.read().decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):
            return ""
        return f"; its last output: {tail[-1][:200]}" if tail else ""

    async def _stop_runner(self) -> None:
        runner, stop = self._runner, self._stop
        self._runner = self._stop = None
        self._gone = True
        if runner is None:
            return
        if stop is not None:
            stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(runner), CLOSE_TIMEOUT)
        except (asyncio.TimeoutError, Exception):
            runner.cancel()
            with contextlib.suppress(BaseException):
                await runner

    async def aclose(self) -> None:
        """End the session and stop the server; later calls fail."""
        self._closed = True
        await self._stop_runner()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- listing ---------------------------------------------------------------------------

    def listing_changed(self) -> None:
        """Forget the listing: the next :meth:`tools` asks the server again."""
        self._expires = 0.0
        self.generation += 1

    def check_expiry(self) -> None:
        """Count a listing whose ``ttlMs`` ran out as changed (once), so caches look again."""
        expires = self._expires
        if expires is not None and expires != 0.0 and time.monotonic() >= expires:
            self.listing_changed()

    def fresh(self) -> bool:
        """Whether the kept listing may be used without asking the server again."""
        return self._listing is not None and (
            self._expires is None or time.monotonic() < self._expires
        )

    async def tools(self) -> list[Any]:
        """The server's tools (SDK ``Tool`` objects), every page, kept while fresh.

        Raises:
            MCPServerError: the server could not be reached, or its listing is malformed.
        """
        if self.fresh():
            assert self._listing is not None
            return self._listing
        client = await self.client()
        tools: list[Any] = []
        cursor: str | None = None
        ttl: float | None = None
        seen: set[str] = set()
        try:
            for _ in range(_MAX_PAGES):
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                if ttl is None and "ttl_ms" in page.model_fields_set:
                    ttl = max(MIN_TTL, page.ttl_ms / 1000)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
                if cursor in seen:
                    raise MCPServerError(
                        server=self.config.name, reason="its tools/list cursors go round in a loop"
                    )
                seen.add(cursor)
        except MCPServerError:
            raise
        except Exception as exc:
            raise MCPServerError(
                server=self.config.name, reason=f"tools/list failed: {_describe(exc)}"
            ) from exc
        changed = self._listing is not None and _names(self._listing) != _names(tools)
        self._listing = tools
        self._expires = time.monotonic() + ttl if ttl is not None else None
        if changed:
            self.generation += 1
        return tools

    # -- calling ---------------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: dict[str, Any], abort: threading.Event | None = None
    ) -> Any:
        """Call one tool; the SDK ``CallToolResult``.

        Cancelling this coroutine cancels the request (the SDK then sends
        ``notifications/cancelled``); so does setting ``abort``, which is watched from
        the pool's loop for callers that cannot cancel it (a sync call's worker).

        Raises:
            MCPServerError: the server could not be started.
            ServerGone: the connection ended during the call (it restarts on the next).
            mcp.MCPError: the server answered with a JSON-RPC error.
        """
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = await self.client()
        watch = _watch_abort(abort) if abort is not None else None
        try:
            result = await client.call_tool(name, arguments)
        except MCPError as exc:
            closed = exc.error.code == CONNECTION_CLOSED
            if closed and (self._gone or exc.error.message == "Connection closed"):
                self._hung_up()
                raise ServerGone(f"MCP server {self.config.name!r} stopped during a call") from exc
            raise
        finally:
            if watch is not None:
                watch.cancel()
        self._failures = 0
        return result

    @property
    def connected(self) -> bool:
        """Whether a session is open, as far as the pool knows.

        A server that dies is noticed when its transport hangs up, a moment after the
        process ends; a call made in between is answered ``ServerGone`` at once, and
        the call after it starts the server again.
        """
        return not self._gone and self._client is not None

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("idle" if self._gone else "open")
        return f"<Connection {self.config.name!r} {state}>"


ABORT_POLL: Final = 0.1
"""Seconds between two looks at a call's abort event (see :func:`_watch_abort`)."""


class _AbortWatch:
    """Cancels the current task once a threading.Event is set, looking every ABORT_POLL."""

    __slots__ = ("_event", "_handle", "_loop", "_task")

    def __init__(self, event: threading.Event) -> None:
        self._event = event
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._handle: asyncio.TimerHandle | None = self._loop.call_later(ABORT_POLL, self._look)

    def _look(self) -> None:
        if self._event.is_set():
            self._handle = None
            if self._task is not None:
                self._task.cancel()
        else:
            self._handle = self._loop.call_later(ABORT_POLL, self._look)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


def _watch_abort(event: threading.Event) -> _AbortWatch:
    return _AbortWatch(event)


def _listens(client: Any) -> bool:
    """Whether the session is of the 2026-07-28 era and the server announces list changes."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    try:
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return False
        tools = client.server_capabilities.tools
    except Exception:
        return False
    return bool(tools is not None and getattr(tools, "list_changed", False))


def _names(tools: list[Any]) -> list[tuple[str, Any, Any]]:
    return [(t.name, t.input_schema, t.description) for t in tools]


def _describe(exc: BaseException) -> str:
    """A short account of why a connection failed, for the host (never for a model)."""
    inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
    while len(inner) == 1:  # an exception group around one failure
        exc = inner[0]
        inner = getattr(exc, "exceptions", ())
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in ("mcp", "httpx2"):
        return "the MCP client is not installed: pip install 'toolpalette[mcp]'"
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({exc.filename or exc})"
    if isinstance(exc, OSError):
        return f"it could not be started ({exc.strerror or type(exc).__name__})"
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _StdioTransport:
    """The SDK's stdio transport with the server's stderr kept in a file."""

    def __init__(self, factory: Callable[..., Any], params: Any, errlog: IO[bytes]) -> None:
        self._cm = factory(params, errlog=errlog)

    async def __aenter__(self) -> Any:
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._cm.__aexit__(*exc)


class _HttpTransport:
    """The SDK's streamable HTTP transport over an HTTP client this transport closes."""

    def __init__(self, factory: Callable[..., Any], url: str, http: Any) -> None:
        self._http = http
        self._cm = factory(url, http_client=http)

    async def __aenter__(self) -> Any:
        await self._http.__aenter__()
        try:
            return await self._cm.__aenter__()
        except BaseException:
            await self._http.__aexit__(None, None, None)
            raise

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._cm.__aexit__(*exc)
        finally:
            await self._http.__aexit__(None, None, None)


class _Watched:
    """A transport whose read stream tells the connection when the server hangs up."""

    def __init__(self, inner: Any, on_hang_up: Callable[[], None]) -> None:
        self._inner = inner
        self._on_hang_up = on_hang_up

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        return _WatchedStream(read, self._on_hang_up), write

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class _WatchedStream:
    """Delegates to the SDK's read stream; calls back once it ends."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        self._on_end()
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise

    async def receive(self) -> Any:
        return await self._inner.receive()

    async def aclose(self) -> None:
        await self._inner.aclose()
