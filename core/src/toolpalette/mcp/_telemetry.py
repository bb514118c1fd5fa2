"""Each request a palette answers: its SERVER span and ``mcp.server.operation.duration``.

Both name only what the server lists (``_OTHER`` else); see docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import ValidationError

from toolpalette._run import mcp_timing as _mcp_timing

__all__ = ["OTHER", "ServerSpans", "Timed"]

OTHER: Final = "_OTHER"
"""The name put in place of a tool or prompt name the server does not list."""
_NAMED: Final = frozenset({"tools/call", "prompts/get"})

Lists = Callable[[str, str], bool]
"""Whether the server lists a name for a method (``tools/call`` or ``prompts/get``)."""


def target_of(ctx: ServerRequestContext[Any], lists: Lists) -> str | None:
    """The tool or prompt ``ctx``'s request names, as telemetry may say it, or None."""
    if ctx.method not in _NAMED:
        return None
    name = ctx.params.get("name") if ctx.params else None
    if not isinstance(name, str):
        return None
    return name if lists(ctx.method, name) else OTHER


class Timed:
    """A server middleware: the rest of the chain, timed (the tool or prompt named, if listed)."""

    def __init__(self, lists: Lists) -> None:
        self._lists = lists

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        target = target_of(ctx, self._lists)
        request = call_next(ctx)
        return await _mcp_timing.timed_request(
            "server", request, ctx.method, target, ctx.protocol_version
        )


class ServerSpans:
    """A server middleware: each request in a SERVER span holding no client text.

    The span continues the client's trace from ``params._meta``, is named
    ``{method} {target}``, and carries the MCP conventions' attributes; the target is
    a listed name or ``_OTHER``, the request id only a number.
    """

    def __init__(self, lists: Lists) -> None:
        self._lists = lists

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        target = target_of(ctx, self._lists)
        attributes: dict[str, Any] = {
            "mcp.method.name": ctx.method,
            "mcp.protocol.version": ctx.protocol_version,
        }
        request_id = ctx.request_id
        if isinstance(request_id, int) and not isinstance(request_id, bool):
            attributes["jsonrpc.request.id"] = str(request_id)
        if ctx.method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
        if target is not None:
            key = "gen_ai.tool.name" if ctx.method == "tools/call" else "gen_ai.prompt.name"
            attributes[key] = target
        name = f"{ctx.method} {target}" if target is not None else ctx.method
        with _TRACER.start_as_current_span(
            name,
            kind=SpanKind.SERVER,
            attributes=attributes,
            context=_parent(ctx.meta),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await call_next(ctx)
            except (MCPError, ValidationError) as exc:
                code = str(exc.error.code if isinstance(exc, MCPError) else INVALID_PARAMS)
                span.set_attributes({"error.type": code, "rpc.response.status_code": code})
                span.set_status(StatusCode.ERROR)  # its message may quote the client
                raise
            except Exception as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(StatusCode.ERROR)
                raise
            if ctx.method == "tools/call" and _failed(result):
                span.set_attribute("error.type", "tool_error")
                span.set_status(StatusCode.ERROR)
            return result


_TRACER: Final = trace.get_tracer("toolpalette.mcp")


def _parent(meta: Mapping[str, Any] | None) -> Context | None:
    """The client's trace context from ``params._meta`` (W3C), or None to nest as usual."""
    if not meta:
        return None
    try:
        found = propagate.extract(meta)
    except (ValueError, TypeError):
        return None
    return found if trace.get_current_span(found).get_span_context().is_valid else None


def _failed(result: Any) -> bool:
    if isinstance(result, dict):
        return result.get("isError") is True
    return getattr(result, "is_error", False) is True
