"""How a connection reaches its server: stdio, streamable HTTP, or an in-process server.

Importing this module never imports the ``mcp`` SDK; `target()` does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.stdio import ServerLog
from toolpalette._run import mcp_timing as _mcp_timing

__all__ = ["describe", "target"]


def target(
    config: MCPServerConfig,
    log: ServerLog,
    on_hang_up: Callable[[], None],
    client: Callable[[], Any] = lambda: None,
) -> Any:
    """What the SDK's ``Client`` connects to for ``config``'s server.

    ``on_hang_up`` is called (on the pool's loop) once the transport's read stream
    ends. ``log`` receives a stdio server's stderr. ``client`` gives the SDK client
    connected through it (None before), whose protocol version the requests' spans say.

    Raises:
        ValueError: a ``${VAR}`` in the configuration is not set.
        ModuleNotFoundError: the ``mcp`` extra is not installed.
    """
    if config.server is not None:
        return config.server
    return _Watched(_transport(config, log), on_hang_up, client)


def _transport(config: MCPServerConfig, log: ServerLog) -> Any:
    if config.command is not None:
        if sys.platform == "win32":  # no process groups: the SDK's transport, unbounded
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=config.process_env(),
                cwd=config.cwd,
            )
            return stdio_client(params)
        from toolpalette._mcp_client.stdio import open_stdio

        return open_stdio(config, log, max_message=config.max_message)
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from toolpalette._mcp_client.http_bounds import BoundedTransport, Bounds

    assert config.url is not None
    idle = config.stream_idle if config.stream_idle is not None else config.timeout
    bounds = Bounds(config.max_message, config.max_stream, idle)
    http = httpx2.AsyncClient(
        headers=config.http_headers(),
        timeout=httpx2.Timeout(config.connect_timeout, read=max(300.0, config.timeout)),
        transport=BoundedTransport(bounds, config.url),
    )
    return _HttpTransport(
        streamable_http_client, config.url, http, max_sse_event_size=config.max_message
    )


def describe(exc: BaseException) -> str:
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


class _HttpTransport:
    """The SDK's streamable HTTP transport over an HTTP client this transport closes."""

    def __init__(self, factory: Callable[..., Any], url: str, http: Any, **options: Any) -> None:
        self._http = http
        self._cm = factory(url, http_client=http, **options)

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

    def __init__(
        self, inner: Any, on_hang_up: Callable[[], None], client: Callable[[], Any]
    ) -> None:
        self._inner = inner
        self._on_hang_up = on_hang_up
        self._client = client

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        return _WatchedStream(read, self._on_hang_up), _SentStream(write, self._client)

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


class _SentStream:
    """Delegates to the SDK's write stream; each request's span says the protocol version."""

    def __init__(self, inner: Any, client: Callable[[], Any]) -> None:
        self._inner = inner
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _SentStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    async def send(self, item: Any) -> None:
        _mcp_timing.mark_sent(getattr(item, "message", None), self._client())
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()
