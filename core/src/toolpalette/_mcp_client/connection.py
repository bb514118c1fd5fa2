"""One server's session: opened on first use, watched, restarted after a crash, closed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Final

from toolpalette._mcp_client import listing as _listing
from toolpalette._mcp_client import tasks as _tasks
from toolpalette._mcp_client import transports as _transports
from toolpalette._mcp_client.abort_watch import AbortWatch
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.loop import LoopThread
from toolpalette._mcp_client.stdio import ServerLog
from toolpalette._run import mcp_timing as _mcp_timing
from toolpalette.errors import MCPServerError

__all__ = [
    "BACKOFF_FIRST",
    "BACKOFF_MAX",
    "CLOSE_TIMEOUT",
    "Connection",
    "Progress",
    "ServerGone",
]

logger = logging.getLogger("toolpalette.mcp")

BACKOFF_FIRST: Final = 0.25
"""Seconds before the first restart of a server that stopped."""
BACKOFF_MAX: Final = 10.0
"""The longest wait between two starts of a server that keeps failing."""
CLOSE_TIMEOUT: Final = 10.0
"""Seconds a session is given to end before its task is cancelled (and a pool to close)."""

Progress = Callable[[float, "float | None", "str | None"], None]
"""Where a call's progress reports go: ``(done, total, message)``, as the server sent them."""


class ServerGone(Exception):
    """The connection ended under a call (the server exited or hung up)."""


class Connection:
    """One server's session, kept open on the pool's loop and restarted after a crash.

    Every ``async`` method runs on `loop` (``connection.loop.run(...)`` or
    ``run_async(...)`` from elsewhere).
    """

    def __init__(self, loop: LoopThread, config: MCPServerConfig) -> None:
        self.loop = loop
        """The event loop the session lives on (the pool's)."""
        self.config = config
        self.listing = _listing.Listing()
        """The server's tools as last listed, kept while fresh."""
        self.starts = 0
        """How many times the server was started (or connected to)."""
        self.server_info: tuple[str, str] | None = None
        """The server's own ``(name, version)``, once connected."""
        self.mismatches: dict[str, str] = {}
        """Tools offered from a listing kept on disk that the live listing contradicted at
        their first call: the offered name, and how it differed (at most
        `MAX_TOOLS`)."""
        self._client: Any = None
        self._gone = True
        self._failures = 0
        self._next_start = 0.0
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._opening: asyncio.Lock | None = None
        self._log = ServerLog()
        self._closed = False
        self._task_progress: dict[str, Progress] = {}
        self._tokens = 0

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
            if self._closed or self.loop.closed:
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
                + self._log.tail(),
            ) from None
        except MCPServerError:
            raise
        except Exception as exc:
            await self._stop_runner()
            raise MCPServerError(
                server=self.config.name, reason=_transports.describe(exc) + self._log.tail()
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

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Any]:
        from mcp import Client
        from mcp.client.extension import advertise

        target = _transports.target(self.config, self._log, self._hung_up, lambda: self._client)
        # Declared for every request of the 2026-07-28 era (the session writes each
        # request's capabilities); before it, a task's call declares it in its ``_meta``.
        tasks = [advertise(_tasks.EXTENSION)]
        client = Client(target, message_handler=self._on_message, cache=None, extensions=tasks)
        async with client:
            _unchecked(client)
            yield client

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
                    self.listing.changed()
        except Exception as exc:  # an optional feature: without it, ttl and restarts refresh
            logger.debug("MCP server %r: no change events (%r)", self.config.name, exc)

    def _hung_up(self) -> None:
        self._gone = True
        self.listing.changed()

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ProgressNotification, ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self.listing.changed()
        elif isinstance(message, ProgressNotification):
            # A task's progress, sent under the token of a call already answered.
            params = message.params
            relay = self._task_progress.get(str(params.progress_token))
            if relay is not None:
                relay(params.progress, params.total, params.message)

    # -- closing -----------------------------------------------------------------------

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
        self._log.close()

    # -- using ---------------------------------------------------------------------------

    async def tools(self) -> _listing.Fetched:
        """Fetch the server's listing now (every page, within the bounds) and keep it.

        Raises:
            MCPServerError: the server could not be reached, or its listing is malformed.
        """
        fetched = await _listing.fetch(await self.client(), self.config.name)
        self.listing.keep(fetched.tools, fetched.ttl)
        return fetched

    async def live_tools(self) -> list[Any]:
        """The tools (SDK ``Tool`` objects) of a live listing, listing them when needed.

        The listing kept while fresh, else a new one (starting the server if needed).

        Raises:
            MCPServerError: the server could not be reached, or its listing is malformed.
        """
        tools = self.listing.tools
        if tools is not None and self.listing.fresh() and not self._gone:
            return tools
        return (await self.tools()).tools

    def mismatch(self, name: str, reason: str) -> None:
        """Record that the live listing contradicts tool ``name`` as kept; list again."""
        if name in self.mismatches or len(self.mismatches) < _listing.MAX_TOOLS:
            self.mismatches[name] = reason
        logger.warning("MCP server %r: tool %r was refused: %s", self.config.name, name, reason)
        self.listing.changed()

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        abort: threading.Event | None = None,
        progress: Progress | None = None,
        *,
        task_support: str = "forbidden",
        answer: _tasks.Answerer | None = None,
        deadline: float | None = None,
    ) -> Any:
        """Call one tool; the SDK ``CallToolResult``.

        Cancelling this coroutine cancels the request (the SDK then sends
        ``notifications/cancelled``); so does setting ``abort``, which is watched from
        the loop for callers that cannot cancel it (a sync call's worker). With
        ``progress``, the request asks the server for progress reports (a progress
        token), and each report is passed to ``progress(done, total, message)`` on the
        pool's loop as it arrives.

        A tool whose ``task_support`` is ``optional`` or ``required`` runs as a task when
        the server runs tasks (`tasks.call`): its input requests go to ``answer``, its
        status messages to ``progress`` beside its progress reports, its polls end by
        ``deadline`` (``time.monotonic()``), and cancelling the call cancels the task.

        Raises:
            MCPServerError: the server could not be started.
            ServerGone: the connection ended during the call (it restarts on the next).
            mcp.MCPError: the server answered with a JSON-RPC error.
            ToolError: the task was cancelled on the server, or asked what nobody answers.
        """
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = await self.client()
        watch = AbortWatch(abort) if abort is not None else None
        wire = _tasks.wire_of(client) if task_support in ("optional", "required") else None
        token: str | None = None
        try:
            if wire is None:
                reports = _reporter(progress) if progress is not None else None
                sent = client.call_tool(name, arguments, progress_callback=reports)
            else:
                self._tokens += 1
                token = f"toolpalette-task-{self._tokens}"
                if progress is not None:
                    self._task_progress[token] = progress
                sent = _tasks.call(
                    client,
                    wire,
                    name,
                    arguments,
                    server=self.config.name,
                    progress_token=token,
                    answer=answer,
                    deadline=deadline,
                    status=progress,
                    progress=_reporter(progress) if progress is not None else None,
                )
            result = await _mcp_timing.timed_request("client", sent, "tools/call", name, client)
        except MCPError as exc:
            closed = exc.error.code == CONNECTION_CLOSED
            if closed and (self._gone or exc.error.message == "Connection closed"):
                self._hung_up()
                raise ServerGone(f"MCP server {self.config.name!r} stopped during a call") from exc
            raise
        finally:
            if watch is not None:
                watch.cancel()
            if token is not None:
                self._task_progress.pop(token, None)
        self._failures = 0
        return result

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """Send one request of a method the SDK may not know (an extension's); its result.

        ``params`` is a ``RequestParams`` model (its fields are the request's params).

        Raises:
            MCPServerError: the server could not be started.
            mcp.MCPError: the server answered with a JSON-RPC error.
        """
        import mcp_types as types
        from pydantic import TypeAdapter

        client = await self.client()
        request = types.Request[Any, str](method=method, params=params)
        result = await client.session.send_request(request, TypeAdapter(dict[str, Any]), timeout)
        self._failures = 0
        return result

    async def read_resource(self, uri: str, timeout: float | None = None) -> Any:
        """``resources/read`` of ``uri``; the SDK's ``ReadResourceResult``.

        Raises:
            MCPServerError: the server could not be started.
            mcp.MCPError: the server answered with a JSON-RPC error.
        """
        client = await self.client()
        with anyio_fail_after(timeout):
            return await client.read_resource(uri)

    def capabilities(self) -> Any:
        """The server's capabilities from the handshake (or discovery); None if unknown."""
        client = self._client
        if client is None:
            return None
        try:
            return client.server_capabilities
        except Exception:
            return None

    @property
    def connected(self) -> bool:
        """Whether a session is open, as far as the connection knows.

        A server that dies is noticed when its transport hangs up, a moment after the
        process ends; a call made in between is answered ``ServerGone`` at once, and
        the call after it starts the server again.
        """
        return not self._gone and self._client is not None

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("idle" if self._gone else "open")
        return f"<Connection {self.config.name!r} {state}>"


@contextlib.contextmanager
def anyio_fail_after(timeout: float | None) -> Iterator[None]:
    """``anyio.fail_after(timeout)``, or nothing when ``timeout`` is None."""
    if timeout is None:
        yield
        return
    import anyio

    with anyio.fail_after(timeout):
        yield


def _reporter(
    progress: Progress,
) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    """The SDK's progress callback (a coroutine function) around ``progress``."""

    async def report(done: float, total: float | None, message: str | None) -> None:
        progress(done, total, message)

    return report


def _unchecked(client: Any) -> None:
    """Turn off the SDK's own check of results against output schemas (see the docstring).

    ``ClientSession.validate_tool_result`` is the SDK's public method for that check,
    and it offers no switch: the session's instance gets one that accepts every result.
    """

    async def accept(_name: str, _result: Any) -> None:
        return None

    setattr(client.session, "validate_tool_result", accept)  # noqa: B010 - a method, replaced


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
