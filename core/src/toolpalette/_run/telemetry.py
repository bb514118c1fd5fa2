"""OpenTelemetry's settings and loading: whether telemetry is on, its tracer and instruments."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any, Final, final

__all__ = [
    "MCP_BUCKETS",
    "SCOPE",
    "SWITCH_ENV",
    "TOOL_BUCKETS",
    "VALUES_ENV",
    "Otel",
    "configure_telemetry",
    "live",
    "loaded",
    "on",
]

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
_OFF: Final = frozenset({"0", "off", "false", "no"})
_VALUES_ON: Final = frozenset({"1", "true", "yes", "on", "span_only", "span_and_event"})
_PROVIDER_ENV: Final = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
_API: Final = ("opentelemetry.trace", "opentelemetry.metrics")


@final
class _Settings:
    """What the host asked for (or the environment said), read by the next `Otel`."""

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
loaded: Otel | None = None
"""The tracer and instruments, once made (`live()` makes them); None until then."""
_settings = _Settings(False, None, None, False)


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
    global on, _settings, loaded
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
    loaded = None
    if enabled is None:
        enabled = environ.get(SWITCH_ENV, "").strip().lower() not in _OFF
    on = installed and enabled


def _installed() -> bool:
    """Whether OpenTelemetry's package is there, found without importing it."""
    try:
        return importlib.util.find_spec("opentelemetry") is not None
    except (ImportError, ValueError):  # a module standing in for it, without a spec
        return False


def live() -> Otel | None:
    """What records this call's span or durations, or None when nothing would be recorded."""
    otel = loaded
    if otel is not None:
        if otel.settled:
            return otel
        if (  # the API's no-op default: the one check on every call, read inline
            otel._trace_globals._TRACER_PROVIDER is None
            and otel._metrics_globals._METER_PROVIDER is None
            and not otel._explicit
        ):
            return None
        return otel if otel.refresh() else None
    if not _settings.named and _API[0] not in sys.modules and _API[1] not in sys.modules:
        return None  # nobody imported the API yet, so nobody can have set a provider
    otel = _load()
    return otel if otel is not None and (otel.settled or otel.refresh()) else None


def _load() -> Otel | None:
    global loaded, on
    try:
        otel = Otel(_settings)
    except ImportError:  # a namespace package without the API in it: as if absent
        on = False
        return None
    loaded = otel
    return otel


@final
class Otel:
    """The tracer and instruments, made when first needed; which of them record now."""

    __slots__ = (
        "_explicit",
        "_explicit_metrics",
        "_explicit_traces",
        "_metrics_globals",
        "_trace_globals",
        "attach",
        "client_duration",
        "current_span",
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
        self.current_span = trace.get_current_span
        self.internal = trace.SpanKind.INTERNAL
        self.error_status = trace.StatusCode.ERROR
        self.record_values = settings.record_values
        self._explicit_traces = tracer_provider is not None
        self._explicit_metrics = meter_provider is not None
        self._explicit = self._explicit_traces or self._explicit_metrics
        """Whether a provider was given (then `live()` asks `refresh()` every call)."""
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


configure_telemetry()
