"""A call's ``execute_tool`` span and duration, for a single call and for a batch's calls."""

from __future__ import annotations

import contextlib
import contextvars
import json
import time
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, Final, TypeVar, final

from toolpalette._run import telemetry as _telemetry
from toolpalette._run.call import Prepared, Refusal
from toolpalette._run.many import Prepare, Report, Run, run_many
from toolpalette._tools.registry import lookup

if TYPE_CHECKING:
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.telemetry import Otel
    from toolpalette._tools.registry import ToolRegistry
    from toolpalette._tools.result import ToolResult
    from toolpalette._tools.tool import ToolContext

__all__ = [
    "UNKNOWN",
    "Call",
    "Traced",
    "begin",
    "carried",
    "execute_many",
    "traced",
    "wanted",
]

T = TypeVar("T")

UNKNOWN: Final = "_OTHER"
"""``gen_ai.tool.name`` of a call to a name the registry does not know (never repeated)."""


def wanted() -> bool:
    """Whether the call the executor is starting gets a span (asked when ``telemetry.on``)."""
    otel = _telemetry.loaded
    return (otel is not None and otel.settled) or _telemetry.live() is not None


def carried(work: partial[T]) -> partial[T]:
    """``work``, to run in a worker thread in this context (the call's span current there)."""
    if _telemetry.live() is None:
        return work
    return partial(contextvars.copy_context().run, work)


@contextlib.contextmanager
def traced(
    registry: ToolRegistry,
    name: object,
    raw: Any,
    ctx: ToolContext | None,
    call_id: str | None,
) -> Iterator[Traced]:
    """One call's span, current while the call runs; the call ends it with `Traced.end()`.

    An exception out of the call fails the span.
    """
    otel = _telemetry.live()
    if call_id is None:  # as the tool's context gets it: the call's own id, else the run's
        call_id = ctx.call_id if ctx is not None else None
    call = begin(otel, registry, name, call_id, raw) if otel is not None else None
    token = call.enter() if call is not None else None
    try:
        yield Traced(call)
    except BaseException as exc:
        if call is not None:
            call.fail(type(exc).__qualname__)
        raise
    finally:
        if call is not None:
            call.leave(token)


@final
class Traced:
    """A call inside `traced()`: the span (None when nothing records any more)."""

    __slots__ = ("call",)

    def __init__(self, call: Call | None) -> None:
        self.call = call

    def end(self, result: ToolResult) -> ToolResult:
        """End the span with the call's result; returns the result."""
        if self.call is not None:
            self.call.end(result)
        return result


async def execute_many(
    registry: ToolRegistry,
    calls: list[Any],
    ctx: ToolContext | None,
    abort: AbortSignal | None,
    concurrency: int,
    *,
    prepare: Prepare,
    run: Run,
    report: Report,
) -> list[ToolResult]:
    """``many.run_many``, each call of the batch in a span of its own.

    A call's span starts when the call is prepared and ends when it is refused or its
    run ends; it is current while the call is prepared and while it runs.
    """
    otel = _telemetry.live()
    if otel is None:
        return await run_many(
            calls, ctx, abort, concurrency, prepare=prepare, run=run, report=report
        )
    batch = _Batch(otel, registry, calls, ctx)
    try:
        return await run_many(
            calls,
            ctx,
            abort,
            concurrency,
            prepare=batch.preparing(prepare),
            run=batch.running(run),
            report=report,
        )
    except BaseException as exc:
        batch.abandon(type(exc).__qualname__)
        raise


def begin(otel: Otel, registry: ToolRegistry, name: object, call_id: Any, raw: Any) -> Call:
    """Start one call's span (when ``otel`` records spans) and its clock."""
    provider = lookup(registry, name)
    if provider is None:
        attributes = {"gen_ai.tool.name": UNKNOWN}
        span_name = "execute_tool"
    else:
        attributes = {"gen_ai.tool.name": str(name), "gen_ai.tool.type": _tool_type(provider)}
        span_name = f"execute_tool {name}"
    span = None
    if otel.traces:
        on_span: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", **attributes}
        if isinstance(call_id, str):
            on_span["gen_ai.tool.call.id"] = call_id
        if otel.record_values:
            on_span["gen_ai.tool.call.arguments"] = _text(raw)
        span = otel.tracer.start_span(span_name, kind=otel.internal, attributes=on_span)
    return Call(otel, span, attributes)


def _tool_type(provider: Any) -> str:
    """``extension`` for an MCP server's tool (run by another process), else ``function``."""
    origin = getattr(provider, "origin", None)
    return "extension" if origin is not None and origin.server is not None else "function"


def _text(value: Any) -> str:
    """A call's input as the JSON text it was, or became (for an opted-in attribute)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return "(not JSON)"


@final
class Call:
    """One traced call: its span (None when only durations are recorded) and its clock."""

    __slots__ = ("attributes", "otel", "span", "started")

    def __init__(self, otel: Otel, span: Any, attributes: dict[str, str]) -> None:
        self.otel = otel
        self.span = span
        self.attributes = attributes
        """The duration's attributes (``error.type`` added on failure)."""
        self.started = time.perf_counter()

    def enter(self) -> Any:
        """Make the span current in this context; the token `leave()` takes."""
        span = self.span
        return None if span is None else self.otel.attach(self.otel.in_context(span))

    def leave(self, token: Any) -> None:
        """Make current again what was before `enter()`."""
        if token is not None:
            self.otel.detach(token)

    def end(self, result: ToolResult) -> None:
        """End the span with the call's result, and record its duration."""
        if result.is_error:
            self._close(result.code, f"{result.status} {result.code}")
            return
        span = self.span
        if span is not None and self.otel.record_values:
            span.set_attribute("gen_ai.tool.call.result", result.text)
        self._close(None, None)

    def fail(self, kind: str) -> None:
        """End the span of a call that raised ``kind`` (the caller's cancellation, say)."""
        self._close(kind, kind)

    def _close(self, error: str | None, description: str | None) -> None:
        took = time.perf_counter() - self.started
        span, otel = self.span, self.otel
        attributes = self.attributes
        if error is not None:
            attributes = {**attributes, "error.type": error}
        if span is not None:
            if error is not None:
                span.set_attribute("error.type", error)
                span.set_status(otel.error_status, description)
            span.end()
        if otel.metrics:
            otel.tool_duration.record(took, attributes)


class _Traced(tuple[Any, Any]):
    """A prepared call of a batch (as ``Prepared``), carrying its span to the run step."""

    call: Call


@final
class _Batch:
    """The spans of one batch's calls, from preparation to the end of each run."""

    __slots__ = ("_ids", "_next", "_open", "_otel", "_registry")

    def __init__(
        self, otel: Otel, registry: ToolRegistry, calls: list[Any], ctx: ToolContext | None
    ) -> None:
        default = ctx.call_id if ctx is not None else None
        # run_many prepares every call once, in order, before any runs: the n-th
        # preparation is the n-th call's.
        self._ids = [
            call[2] if isinstance(call, (tuple, list)) and len(call) > 2 else default
            for call in calls
        ]
        self._next = 0
        self._otel = otel
        self._registry = registry
        self._open: set[Call] = set()

    def preparing(self, step: Prepare) -> Prepare:
        async def prepare(
            name: object, raw: Any, ctx: ToolContext | None, abort: AbortSignal | None
        ) -> Prepared:
            index, self._next = self._next, self._next + 1
            call_id = self._ids[index] if index < len(self._ids) else None
            call = begin(self._otel, self._registry, name, call_id, raw)
            token = call.enter()
            try:
                prepared = await step(name, raw, ctx, abort)
            except Refusal as refusal:
                call.end(refusal.result)
                raise
            except BaseException as exc:
                call.fail(type(exc).__qualname__)
                raise
            finally:
                call.leave(token)
            self._open.add(call)
            traced = _Traced(prepared)
            traced.call = call
            return traced

        return prepare

    def running(self, step: Run) -> Run:
        async def run(
            name: object,
            prepared: Prepared,
            ctx: ToolContext | None,
            abort: AbortSignal | None,
            call_id: str | None,
        ) -> ToolResult:
            call = prepared.call if isinstance(prepared, _Traced) else None
            if call is None:
                return await step(name, prepared, ctx, abort, call_id)
            self._open.discard(call)
            token = call.enter()
            try:
                result = await step(name, prepared, ctx, abort, call_id)
            except Refusal as refusal:
                call.end(refusal.result)
                raise
            except BaseException as exc:
                call.fail(type(exc).__qualname__)
                raise
            finally:
                call.leave(token)
            call.end(result)
            return result

        return run

    def abandon(self, kind: str) -> None:
        """End the spans of prepared calls that never ran: the batch ended with ``kind``."""
        for call in list(self._open):
            call.fail(kind)
        self._open.clear()
