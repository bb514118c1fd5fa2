"""Each MCP request's duration, on ``mcp.server.operation.duration`` or the client's."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Mapping
from typing import Any, Final, TypeVar

from toolpalette._run import telemetry as _telemetry

__all__ = ["INVALID_PARAMS", "mark_sent", "timed_request"]

T = TypeVar("T")

_METRICS_API: Final = "opentelemetry.metrics"
_METER_PROVIDER_ENV: Final = "OTEL_PYTHON_METER_PROVIDER"
"""Where OpenTelemetry's API finds a meter provider when it is first asked for one."""

INVALID_PARAMS: Final = -32602
"""JSON-RPC's code for params that do not validate (also MCP's unknown tool)."""


def timed_request(
    side: str, request: Awaitable[T], method: str, target: str | None, era: object
) -> Awaitable[T]:
    """``request`` (one MCP request), timed on ``mcp.{side}.operation.duration``.

    ``side`` is ``"server"`` (a request a palette answers) or ``"client"`` (one a
    connection sends); ``target`` is the tool or prompt the request names, if any;
    ``era`` the protocol version, or the SDK client whose session's version it is.
    Returned as it is when no duration would be recorded.
    """
    if not _telemetry.on:
        return request
    if _METRICS_API not in sys.modules and not os.environ.get(_METER_PROVIDER_ENV):
        # Nobody imported the metrics API, so no meter provider is set: nothing would be
        # recorded. Asking `live()` would import it (~15-45 ms) on a server's first
        # answer, `initialize`, before any duration can be recorded.
        return request
    otel = _telemetry.live()
    if otel is None or not otel.metrics:
        return request
    histogram = otel.server_duration if side == "server" else otel.client_duration
    return _timed(histogram, request, method, target, _version(era))


def mark_sent(message: Any, era: object) -> None:
    """Say the protocol version on the SDK's client span of ``message``, a request being sent.

    Called by a transport's write stream as the SDK writes ``message``: the SDK writes a
    request inside its ``{mcp.method.name}`` CLIENT span, current in the writing task,
    which carries ``mcp.method.name`` and ``jsonrpc.request.id`` but not the
    ``mcp.protocol.version`` the MCP conventions recommend. ``era`` is the protocol
    version, or the SDK client whose session's version it is (nothing is said before
    the handshake). Anything but a request (a response, a notification) is left alone.
    """
    if not _telemetry.on:
        return
    otel = _telemetry.live()
    if otel is None or not otel.traces:
        return
    if getattr(message, "method", None) is None or getattr(message, "id", None) is None:
        return
    version = _version(era)
    if version is not None:
        otel.current_span().set_attribute("mcp.protocol.version", version)


async def _timed(
    histogram: Any,
    request: Awaitable[T],
    method: str,
    target: str | None,
    version: str | None,
) -> T:
    """Await ``request`` and record how long it took on ``histogram``."""
    attributes: dict[str, str] = {"mcp.method.name": method}
    if version is not None:
        attributes["mcp.protocol.version"] = version
    if method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
    if target is not None:
        key = "gen_ai.prompt.name" if method == "prompts/get" else "gen_ai.tool.name"
        attributes[key] = target
    started = time.perf_counter()
    try:
        result = await request
    except BaseException as exc:
        error = _request_error(exc)
        if error.get("error.type") == str(INVALID_PARAMS):
            attributes.pop("gen_ai.tool.name", None)  # not a tool: the name is not repeated
        attributes.update(error)
        raise
    else:
        if _is_error(result):
            attributes["error.type"] = "tool_error"
        return result
    finally:
        histogram.record(time.perf_counter() - started, attributes)


def _version(era: object) -> str | None:
    """The protocol version ``era`` is or has (None before a client's handshake)."""
    if era is None or isinstance(era, str):
        return era
    try:
        return str(era.protocol_version)  # type: ignore[attr-defined]
    except Exception:  # a client not connected yet says so by raising
        return None


def _request_error(exc: BaseException) -> dict[str, str]:
    """``error.type`` (and the JSON-RPC code) of a request that raised."""
    from pydantic import ValidationError

    code = getattr(getattr(exc, "error", None), "code", None)  # the SDK's MCPError
    if isinstance(exc, ValidationError):  # params the SDK could not validate
        code = INVALID_PARAMS
    if isinstance(code, int):
        return {"error.type": str(code), "rpc.response.status_code": str(code)}
    return {"error.type": type(exc).__qualname__}


def _is_error(result: Any) -> bool:
    """Whether an MCP result (a model, or its wire form) says the tool failed."""
    if isinstance(result, Mapping):
        return result.get("isError") is True
    return getattr(result, "is_error", False) is True
