"""An HTTP MCP server's answers bounded as they arrive, under the SDK's client.

Each message, stream and wait (why: docs/architecture.md); it imports ``httpx2``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Final

import httpx2

from toolpalette._mcp_client.stdio import BOUND_PASSED, TOO_LARGE

__all__ = ["BoundedTransport", "Bounds"]

logger = logging.getLogger("toolpalette.mcp")

_CHUNK: Final = 64 * 1024


class Bounds:
    """What one server's HTTP answers may hold: a message, a stream, a wait."""

    __slots__ = ("idle", "message", "stream")

    def __init__(self, message: int, stream: int, idle: float) -> None:
        self.message = message
        """The most bytes of one message (a JSON body, one SSE event)."""
        self.stream = stream
        """The most bytes of one response (a whole SSE stream)."""
        self.idle = idle
        """The most seconds a request's response may take between two whole messages."""


class BoundedTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport whose responses never hold more than `Bounds` allow.

    A JSON body is read here, under the message bound and within ``idle`` seconds,
    before the SDK sees it; an SSE body is passed on one whole event at a time, each
    under the message bound, the stream under its total and, for a request's
    response, its idle bound. Past a bound, what was held is dropped and the request
    is answered with a JSON-RPC error (``data.reason`` `TOO_LARGE` for a
    message, `BOUND_PASSED` otherwise); the server's GET stream just ends (the
    SDK opens it again). Compressed answers are not asked for, and refused: their
    size would only be known after inflating them.
    """

    def __init__(self, bounds: Bounds, url: str) -> None:
        self._bounds = bounds
        self._inner = httpx2.AsyncHTTPTransport(proxy=_env_proxy(url))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["accept-encoding"] = "identity"
        request_id = _request_id(request)
        response = await self._inner.handle_async_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        refusal: Refusal | None = None
        if encoding not in ("", "identity"):
            refusal = _passed(f"an answer compressed as {encoding[:40]!r}, which was not asked for")
        elif kind == "text/event-stream":
            events = _Events(response, self._bounds, request_id, request.method != "GET")
            return httpx2.Response(
                response.status_code,
                headers=response.headers,
                stream=events,
                request=request,
                extensions=response.extensions,
            )
        else:
            body, refusal = await _read_body(response, self._bounds)
            if refusal is None:
                return httpx2.Response(
                    response.status_code,
                    headers=response.headers,
                    content=body,
                    request=request,
                    extensions=response.extensions,
                )
        await response.aclose()
        logger.warning("an MCP server's HTTP answer was refused: %s", refusal[0])
        if request_id is None:
            raise httpx2.RemoteProtocolError(f"the server sent {refusal[0]}", request=request)
        error = _error(request_id, *refusal)
        return httpx2.Response(
            200,
            headers={"content-type": "application/json"},
            content=json.dumps(error).encode(),
            request=request,
        )


async def _read_body(response: httpx2.Response, bounds: Bounds) -> tuple[bytes, Refusal | None]:
    """The whole body within the bounds, or why not (a reason and the limit passed)."""
    import anyio

    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > bounds.message:
        return b"", _over_message(bounds)
    held = bytearray()
    chunks = response.stream.__aiter__()  # type: ignore[union-attr]
    try:
        with anyio.move_on_after(bounds.idle) as waited:
            async for chunk in chunks:
                held += chunk
                if len(held) > bounds.message:
                    return b"", _over_message(bounds)
    finally:
        await _close(chunks)
    if waited.cancelled_caught:
        return b"", _passed(f"no whole answer within {bounds.idle:g} seconds")
    return bytes(held), None


Refusal = tuple[str, dict[str, Any]]
"""Why an answer was refused: what the server sent, and the ``data`` of the error."""


def _over_message(bounds: Bounds) -> Refusal:
    reason = f"an answer over the {bounds.message}-byte bound on a message"
    return reason, {"reason": TOO_LARGE, "limit": bounds.message}


def _passed(reason: str) -> Refusal:
    return reason, {"reason": BOUND_PASSED}


def _error(request_id: Any, reason: str, data: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC error that answers ``request_id`` for a bound passed."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": -32603, "message": f"the server sent {reason}", "data": data},
    }


class _Events(httpx2.AsyncByteStream):
    """An SSE body passed on whole events only, under the bounds (an ``AsyncByteStream``).

    Line ends are made LF (SSE allows CRLF, CR and LF alike), so an event ends at the
    first blank line; what comes before it is held until it does.
    """

    def __init__(
        self, response: httpx2.Response, bounds: Bounds, request_id: Any, answers: bool
    ) -> None:
        self._response = response
        self._bounds = bounds
        self._request_id = request_id
        self._answers = answers and request_id is not None
        self._iterator: AsyncGenerator[bytes, None] | None = None

    def __aiter__(self) -> AsyncIterator[bytes]:
        self._iterator = self._iterate()
        return self._iterator

    async def _iterate(self) -> AsyncGenerator[bytes, None]:
        chunks = self._response.stream.__aiter__()  # type: ignore[union-attr]
        try:
            async for whole in self._events(chunks):
                yield whole
        finally:
            await _close(chunks)

    async def _events(self, chunks: Any) -> AsyncIterator[bytes]:
        import anyio

        bounds = self._bounds
        held = bytearray()
        total = 0
        last_whole = time.monotonic()
        carry_cr = False
        while True:
            refusal: Refusal | None = None
            chunk: bytes | None = None
            wait = bounds.idle - (time.monotonic() - last_whole) if self._answers else None
            if wait is not None and wait <= 0:
                refusal = _passed(f"no whole message within {bounds.idle:g} seconds")
            else:
                with anyio.move_on_after(wait if wait is not None else float("inf")):
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        return
                if chunk is None:
                    refusal = _passed(f"no whole message within {bounds.idle:g} seconds")
            if chunk is not None:
                total += len(chunk)
                if carry_cr:
                    chunk = b"\r" + chunk
                carry_cr = chunk.endswith(b"\r")
                if carry_cr:
                    chunk = chunk[:-1]
                seen = max(0, len(held) - 1)
                held += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                if total > bounds.stream:
                    refusal = _passed(f"a stream over the {bounds.stream}-byte bound on one")
                else:
                    end = held.rfind(b"\n\n", seen)
                    if end >= 0:
                        whole = bytes(held[: end + 2])
                        del held[: end + 2]
                        longest = max(len(event) for event in whole.split(b"\n\n"))
                        if max(longest, len(held)) > bounds.message:
                            refusal = _over_message(bounds)
                        else:
                            last_whole = time.monotonic()
                            yield whole
                            continue
                    elif len(held) > bounds.message:
                        refusal = _over_message(bounds)
                    else:
                        continue
            assert refusal is not None
            held.clear()
            logger.warning("an MCP server's event stream was ended: it sent %s", refusal[0])
            if self._answers:
                error = json.dumps(_error(self._request_id, *refusal))
                yield f"event: message\ndata: {error}\n\n".encode()
            return

    async def aclose(self) -> None:
        if self._iterator is not None:
            with contextlib.suppress(RuntimeError):  # it is running: it ends on its own
                await self._iterator.aclose()
        await self._response.aclose()


async def _close(chunks: Any) -> None:
    close = getattr(chunks, "aclose", None)
    if close is not None:
        await close()


def _request_id(request: httpx2.Request) -> Any:
    """The id of the JSON-RPC request a POST carries, or None (a notification, a GET)."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (ValueError, TypeError, RuntimeError):
        return None
    if isinstance(message, dict) and "method" in message:
        request_id = message.get("id")
        if isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
            return request_id
    return None


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (as ``httpx2`` would choose one)."""
    scheme = url.partition(":")[0].lower()
    host = url.partition("://")[2].partition("/")[0].rpartition("@")[2]
    if urllib.request.proxy_bypass(host.partition(":")[0]):
        return None
    proxies = urllib.request.getproxies_environment()
    return proxies.get(scheme) or proxies.get("all")
