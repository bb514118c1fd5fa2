"""OpenTelemetry for calls and MCP requests: one span per call, durations, nothing when absent.

With OpenTelemetry's API installed (``opentelemetry-api``, the ``otel`` extra) and a
provider configured by the host, every call through an executor is one span named
``execute_tool {gen_ai.tool.name}`` (the GenAI semantic conventions, kind INTERNAL):
``gen_ai.operation.name`` ``execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.type``
(``extension`` for an MCP server's tool, else ``function``), ``gen_ai.tool.call.id``,
and on failure ``error.type`` (the pipeline's code) and an error status. The span
covers the whole call (look-up, validation, policy, run, render) and is current while
the tool runs, in a worker thread too, so what the tool traces (its own spans, an MCP
request, which carries the trace on in ``params._meta``) nests under it. Durations go
to ``gen_ai.execute_tool.duration``, and MCP requests' to
``mcp.server.operation.duration`` (:func:`timed_request`, for ``toolpalette.mcp``) and
``mcp.client.operation.duration`` (for ``_mcp_client``); the MCP spans themselves are
the ``mcp`` SDK's. A name the registry does not know is never repeated: its span is
``execute_tool`` with ``gen_ai.tool.name`` ``_OTHER``. The call's arguments and its
result's text are recorded only when the host opts in
(:func:`configure_telemetry`, or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``).

What it costs, decided as early as possible:

- Whether the API is installed is decided when this module is imported (with the
  executor), by ``importlib.util.find_spec``, which imports nothing; ``TOOLPALETTE_OTEL=0``
  switches everything off. Absent or off, a call pays one read of :data:`on`.
- Installed, nothing is imported until something else has imported OpenTelemetry (a
  host setting up its SDK, the ``mcp`` SDK) or a provider is named (in the environment
  or to :func:`configure_telemetry`): nobody can have configured one before that.
- Imported with no provider set (the API's no-op default) a call records nothing: a
  no-op span would only carry its parent's context, which is current already. Whether
  a provider is set is read from the API's module globals, because its public getters
  look the environment up on every call (about 2 µs each).

How a call gets its span without the untraced path paying a frame for it: the
executor asks :func:`wanted` first; when a span is wanted it hands the call to
:func:`execute`, which starts the span, makes it current, marks the context (a claim)
and calls the executor's ``execute`` again, which finds the claim, clears it (so the
calls a tool makes get spans of their own) and runs the call as usual. A sync tool's
work is :func:`carried` into its worker thread in the call's context. The calls of a
batch get their spans through its steps (:func:`execute_many`).
"""

from __future__ import annotations

import contextvars
import functools
import importlib.util
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, final

from toolpalette._run.call import Prepared, Refusal
from toolpalette._run.many import Prepare, Report, Run, run_many
from toolpalette._tools.registry import lookup

if TYPE_CHECKING:
    from toolpalette._run.abort import AbortSignal
    from toolpalette._tools.registry import ToolRegistry
    from toolpalette._tools.result import ToolResult
    from toolpalette._tools.tool import ToolContext

__all__ = [
    "SWITCH_ENV",
    "VALUES_ENV",
    "carried",
    "configure_telemetry",
    "execute",
    "execute_many",
    "execute_sync",
    "live",
    "on",
    "timed_request",
    "wanted",
]

T = TypeVar("T")

SWITCH_ENV: Final = "TOOLPALETTE_OTEL"
"""``0`` (or ``off``, ``false``, ``no``): no span and no metric, nothing imported."""
VALUES_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' opt-in for content: ``true`` records arguments and results."""
SCOPE: Final = "toolpalette"
"""The instrumentation scope of every span and instrument."""

TOOL_BUCKETS: Final = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)
"""``gen_ai.execute_tool.duration``'s bucket advice (the GenAI conventions')."""
MCP_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
"""The MCP conventions' bucket advice for both operation durations."""
UNKNOWN: Final = "_OTHER"
"""``gen_ai.tool.name`` of a call to a name the registry does not know (never repeated)."""
INVALID_PARAMS: Final = -32602
"""JSON-RPC's code for params that do not validate (also MCP's unknown tool)."""

_OFF: Final = frozenset({"0", "off", "false", "no"})
_VALUES_ON: Final = frozenset({"1", "true", "yes", "on", "span_only", "span_and_event"})
_PROVIDER_ENV: Final = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
_API: Final = ("opentelemetry.trace", "opentelemetry.metrics")


class _Executing(Protocol):
    """What a traced call needs of the executor that runs it (``Executor``'s public face)."""

    registry: ToolRegistry
    context: ToolContext | None

    async def execute(
        self,
        name: object,
        input: Any,
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
        call_id: str | None = None,
    ) -> ToolResult: ...

    def execute_sync(
        self,
        name: object,
        input: Any,
        *,
        context: ToolContext | None = None,
        abort: AbortSignal | None = None,
        call_id: str | None = None,
    ) -> ToolResult: ...


@final
class _Settings:
    """What the host asked for (or the environment said), read by the next :class:`_Otel`."""

    __slots__ = ("meter_provider", "named", "record_values", "tracer_provider")

    def __init__(
        self, record_values: bool, tracer_provider: Any, meter_provider: Any, named: bool
    ) -> None:
        self.record_values = record_values
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.named = named
        """Whether a provider was named: given here, or in the environment."""


on: bool = False
"""Whether calls may be traced at all: the API is installed and not switched off."""
_settings = _Settings(False, None, None, False)
_otel: _Otel | None = None
_claim: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "toolpalette_telemetry_claim", default=False
)


def configure_telemetry(
    *,
    enabled: bool | None = None,
    record_values: bool | None = None,
    tracer_provider: Any = None,
    meter_provider: Any = None,
) -> None:
    """Turn toolpalette's OpenTelemetry spans and metrics on or off, and say what they hold.

    With ``opentelemetry-api`` installed (``pip install 'toolpalette[otel]'``) they are
    on by default and go to the global providers the host set up with OpenTelemetry's
    SDK; without one set, nothing is recorded. Each call of this function sets every
    option; an option left out takes the environment's value (or the global provider).

    Args:
        enabled: emit spans and metrics; None: unless ``TOOLPALETTE_OTEL=0``.
        record_values: also record each call's arguments and its result's text
            (``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``), which may
            hold personal data or secrets; None: only when
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``.
        tracer_provider: where the spans go, instead of the global tracer provider.
        meter_provider: where the durations go, instead of the global meter provider.

    Raises:
        RuntimeError: ``enabled=True`` and ``opentelemetry-api`` is not installed.
    """
    global on, _settings, _otel
    environ = os.environ
    installed = _installed()
    if enabled and not installed:
        raise RuntimeError("OpenTelemetry is not installed: pip install 'toolpalette[otel]'")
    if record_values is None:
        record_values = environ.get(VALUES_ENV, "").strip().lower() in _VALUES_ON
    named = tracer_provider is not None or meter_provider is not None
    _settings = _Settings(
        record_values,
        tracer_provider,
        meter_provider,
        named or any(name in environ for name in _PROVIDER_ENV),
    )
    _otel = None
    if enabled is None:
        enabled = environ.get(SWITCH_ENV, "").strip().lower() not in _OFF
    on = installed and enabled


def _installed() -> bool:
    """Whether OpenTelemetry's package is there, found without importing it."""
    try:
        return importlib.util.find_spec("opentelemetry") is not None
    except (ImportError, ValueError):  # a module standing in for it, without a spec
        return False


def live() -> _Otel | None:
    """What records this call's span or durations, or None when nothing would be recorded."""
    otel = _otel
    if otel is not None:
        if otel.settled:
            return otel
        if otel.unset():  # the API's no-op default: the one check on every call
            return None
        return otel if otel.refresh() else None
    if not _settings.named and _API[0] not in sys.modules and _API[1] not in sys.modules:
        return None  # nobody imported the API yet, so nobody can have set a provider
    otel = _load()
    return otel if otel is not None and (otel.settled or otel.refresh()) else None


def _load() -> _Otel | None:
    global _otel, on
    try:
        otel = _Otel(_settings)
    except ImportError:  # a namespace package without the API in it: as if absent
        on = False
        return None
    _otel = otel
    return otel


def wanted() -> bool:
    """Whether the call the executor is starting gets a span of its own (when :data:`on`).

    False for the call :func:`execute` or :func:`execute_sync` already started a span
    for: its claim is cleared here, so the calls its tool makes are traced again.
    """
    otel = _otel
    if (otel is None or not otel.settled) and live() is None:
        return False
    if _claim.get():
        _claim.set(False)
        return False
    return True


def carried(work: partial[T]) -> partial[T]:
    """``work``, to run in a worker thread in this context (the call's span current there)."""
    if live() is None:
        return work
    return partial(contextvars.copy_context().run, work)


async def execute(
    executor: _Executing,
    name: object,
    input: Any,
    context: ToolContext | None,
    abort: AbortSignal | None,
    call_id: str | None,
) -> ToolResult:
    """``executor.execute(...)`` inside its ``execute_tool`` span (see the module docstring)."""
    call = _begin(executor, name, input, context, call_id)
    token = call.enter() if call is not None else None
    claim = _claim.set(True)
    try:
        result = await executor.execute(name, input, context=context, abort=abort, call_id=call_id)
    except BaseException as exc:
        if call is not None:
            call.fail(type(exc).__qualname__)
        raise
    finally:
        _claim.reset(claim)
        if call is not None:
            call.leave(token)
    if call is not None:
        call.end(result)
    return result


def execute_sync(
    executor: _Executing,
    name: object,
    input: Any,
    context: ToolContext | None,
    abort: AbortSignal | None,
    call_id: str | None,
) -> ToolResult:
    """``executor.execute_sync(...)`` inside its ``execute_tool`` span."""
    call = _begin(executor, name, input, context, call_id)
    token = call.enter() if call is not None else None
    claim = _claim.set(True)
    try:
        result = executor.execute_sync(name, input, context=context, abort=abort, call_id=call_id)
    except BaseException as exc:
        if call is not None:
            call.fail(type(exc).__qualname__)
        raise
    finally:
        _claim.reset(claim)
        if call is not None:
            call.leave(token)
    if call is not None:
        call.end(result)
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
    otel = live()
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


def timed_request(
    side: str, request: Awaitable[T], method: str, target: str | None, era: object
) -> Awaitable[T]:
    """``request`` (one MCP request), timed on ``mcp.{side}.operation.duration``.

    ``side`` is ``"server"`` (a request a palette answers) or ``"client"`` (one a
    connection sends); ``target`` is the tool or prompt the request names, if any;
    ``era`` the protocol version, or the SDK client whose session's version it is.
    Returned as it is when no duration would be recorded.
    """
    if not on:
        return request
    otel = live()
    if otel is None or not otel.metrics:
        return request
    histogram = otel.server_duration if side == "server" else otel.client_duration
    return otel.timed(histogram, request, method, target, _version(era))


def _begin(
    executor: _Executing,
    name: object,
    input: Any,
    context: ToolContext | None,
    call_id: str | None,
) -> _Call | None:
    """The span of a call :func:`wanted` said is traced (None if that changed since)."""
    otel = live()
    if otel is None:
        return None
    if call_id is None:  # as the tool's context gets it: the call's own id, else the run's
        ctx = context if context is not None else executor.context
        call_id = ctx.call_id if ctx is not None else None
    return otel.begin(executor.registry, name, call_id, input)


def _version(era: object) -> str | None:
    """The protocol version ``era`` is or has (None before a client's handshake)."""
    if era is None or isinstance(era, str):
        return era
    try:
        return str(era.protocol_version)  # type: ignore[attr-defined]
    except Exception:  # a client not connected yet says so by raising
        return None


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


def _request_error(exc: BaseException) -> dict[str, str]:
    """``error.type`` (and the JSON-RPC code) of a request that raised."""
    from pydantic import ValidationError

    code = getattr(getattr(exc, "error", None), "code", None)  # the SDK's MCPError
    if isinstance(exc, ValidationError):  # params the SDK could not validate
        code = INVALID_PARAMS
    if isinstance(code, int):
        return {"error.type": str(code), "rpc.response.status_code": str(code)}
    return {"error.type": type(exc).__qualname__}


@final
class _Otel:
    """The tracer and instruments, made when first needed; which of them record now."""

    __slots__ = (
        "_explicit_metrics",
        "_explicit_traces",
        "_metrics_globals",
        "_trace_globals",
        "attach",
        "client_duration",
        "detach",
        "error_status",
        "in_context",
        "internal",
        "metrics",
        "record_values",
        "server_duration",
        "settled",
        "tool_duration",
        "tracer",
        "traces",
    )

    def __init__(self, settings: _Settings) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry import metrics, trace
        from opentelemetry.metrics import _internal as metrics_internal

        ours = _our_version()
        tracer_provider = settings.tracer_provider
        meter_provider = settings.meter_provider
        if tracer_provider is None:
            trace.get_tracer_provider()  # sets the provider the environment names, if any
        if meter_provider is None:
            metrics.get_meter_provider()
        self.tracer = (tracer_provider or trace).get_tracer(SCOPE, ours)
        meter = (meter_provider or metrics).get_meter(SCOPE, ours)
        self.tool_duration = meter.create_histogram(
            "gen_ai.execute_tool.duration",
            unit="s",
            description="Duration of tool executions.",
            explicit_bucket_boundaries_advisory=TOOL_BUCKETS,
        )
        self.server_duration = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="Duration of MCP requests as the server saw them.",
            explicit_bucket_boundaries_advisory=MCP_BUCKETS,
        )
        self.client_duration = meter.create_histogram(
            "mcp.client.operation.duration",
            unit="s",
            description="Duration of MCP requests as the client saw them.",
            explicit_bucket_boundaries_advisory=MCP_BUCKETS,
        )
        self.attach = otel_context.attach
        self.detach = otel_context.detach
        self.in_context = trace.set_span_in_context
        self.internal = trace.SpanKind.INTERNAL
        self.error_status = trace.StatusCode.ERROR
        self.record_values = settings.record_values
        self._explicit_traces = tracer_provider is not None
        self._explicit_metrics = meter_provider is not None
        self._trace_globals = (
            trace if hasattr(trace, "_TRACER_PROVIDER") else _Asked(trace.get_tracer_provider)
        )
        self._metrics_globals = (
            metrics_internal
            if hasattr(metrics_internal, "_METER_PROVIDER")
            else _Asked(metrics.get_meter_provider)
        )
        self.traces = self.metrics = self.settled = False
        self.refresh()

    def unset(self) -> bool:
        """Whether no provider is given or set, and nothing can be recorded: the quick look."""
        return (
            self._trace_globals._TRACER_PROVIDER is None
            and self._metrics_globals._METER_PROVIDER is None
            and not self._explicit_traces
            and not self._explicit_metrics
        )

    def refresh(self) -> bool:
        """Whether spans or durations are recorded now; settled once both are for good.

        A global provider is set once for the life of the process, so once both are
        set nothing needs checking again. Until then this runs on every call: two reads
        of the API's module globals.
        """
        traces = self._explicit_traces or self._trace_globals._TRACER_PROVIDER is not None
        metrics = self._explicit_metrics or self._metrics_globals._METER_PROVIDER is not None
        if not (traces or metrics):
            return False
        self.traces, self.metrics, self.settled = traces, metrics, traces and metrics
        return True

    def begin(self, registry: ToolRegistry, name: object, call_id: Any, raw: Any) -> _Call:
        """Start one call's span (when spans are recorded) and its clock."""
        provider = lookup(registry, name)
        if provider is None:
            attributes = {"gen_ai.tool.name": UNKNOWN}
            span_name = "execute_tool"
        else:
            attributes = {"gen_ai.tool.name": str(name), "gen_ai.tool.type": _tool_type(provider)}
            span_name = f"execute_tool {name}"
        span = None
        if self.traces:
            on_span: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", **attributes}
            if isinstance(call_id, str):
                on_span["gen_ai.tool.call.id"] = call_id
            if self.record_values:
                on_span["gen_ai.tool.call.arguments"] = _text(raw)
            span = self.tracer.start_span(span_name, kind=self.internal, attributes=on_span)
        return _Call(self, span, attributes)

    async def timed(
        self,
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


@final
class _Call:
    """One traced call: its span (None when only durations are recorded) and its clock."""

    __slots__ = ("attributes", "otel", "span", "started")

    def __init__(self, otel: _Otel, span: Any, attributes: dict[str, str]) -> None:
        self.otel = otel
        self.span = span
        self.attributes = attributes
        """The duration's attributes (``error.type`` added on failure)."""
        self.started = time.perf_counter()

    def enter(self) -> Any:
        """Make the span current in this context; the token :meth:`leave` takes."""
        span = self.span
        return None if span is None else self.otel.attach(self.otel.in_context(span))

    def leave(self, token: Any) -> None:
        """Make current again what was before :meth:`enter`."""
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

    call: _Call


@final
class _Batch:
    """The spans of one batch's calls, from preparation to the end of each run."""

    __slots__ = ("_ids", "_next", "_open", "_otel", "_registry")

    def __init__(
        self, otel: _Otel, registry: ToolRegistry, calls: list[Any], ctx: ToolContext | None
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
        self._open: set[_Call] = set()

    def preparing(self, step: Prepare) -> Prepare:
        async def prepare(
            name: object, raw: Any, ctx: ToolContext | None, abort: AbortSignal | None
        ) -> Prepared:
            index, self._next = self._next, self._next + 1
            call_id = self._ids[index] if index < len(self._ids) else None
            call = self._otel.begin(self._registry, name, call_id, raw)
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


@functools.cache
def _our_version() -> str | None:
    """The version of toolpalette, for the instrumentation scope (read once: a scan)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolpalette")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return None


@final
class _Asked:
    """The global providers as the API's public getters tell them (about 2 µs a look).

    For an API that keeps them elsewhere than in the module globals read otherwise.
    """

    __slots__ = ("_get",)

    def __init__(self, get: Callable[[], Any]) -> None:
        self._get = get

    @property
    def _TRACER_PROVIDER(self) -> Any:
        provider = self._get()
        return None if "Proxy" in type(provider).__name__ else provider

    _METER_PROVIDER = _TRACER_PROVIDER


def _is_error(result: Any) -> bool:
    """Whether an MCP result (a model, or its wire form) says the tool failed."""
    if isinstance(result, Mapping):
        return result.get("isError") is True
    return getattr(result, "is_error", False) is True


configure_telemetry()
