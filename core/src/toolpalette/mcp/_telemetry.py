"""Each request a palette answers, timed on OpenTelemetry's ``mcp.server.operation.duration``.

The spans are the ``mcp`` SDK's own: its OpenTelemetry middleware is the first of every
low-level ``Server``'s, so it wraps every request (the ``tools/list`` and ``tools/call``
our tools middleware answers itself included) in a ``{mcp.method.name} {target}`` span
that continues the client's trace from ``params._meta``; the call's ``execute_tool``
span nests under it. :func:`timed`, appended after it, records each request's duration
(when telemetry is on and a meter provider is set: ``toolpalette._run.mcp_timing``).
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from toolpalette._run import mcp_timing as _mcp_timing

__all__ = ["timed"]


async def timed(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
    """A server middleware: the rest of the chain, timed (the tool or prompt named, if any)."""
    name = ctx.params.get("name") if ctx.params else None
    target = name if isinstance(name, str) and ctx.method in _NAMED else None
    request = call_next(ctx)
    return await _mcp_timing.timed_request(
        "server", request, ctx.method, target, ctx.protocol_version
    )


_NAMED = frozenset({"tools/call", "prompts/get"})
