"""Each call is one ``execute_tool`` span and one duration, by the GenAI conventions.

Spans and durations are read back with the OpenTelemetry SDK's in-memory exporter and
reader, given to ``toolpalette.configure_telemetry`` (the process's global providers are
left alone). Whether anything of OpenTelemetry is imported at all is checked in fresh
interpreters.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import toolpalette
from toolpalette import Executor, ToolContext, ToolRegistry, tool
from toolpalette.errors import ToolError

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="needs opentelemetry-sdk")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

CANARY = "CNRY-5d81c0"
RUN = ToolContext(run_id="run-1", call_id="run-call")


class Recorded:
    """What one test's calls recorded: finished spans, and durations by attributes."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = sdk_trace.TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self, name_prefix: str = "execute_tool") -> list[Any]:
        return [s for s in self.exporter.get_finished_spans() if s.name.startswith(name_prefix)]

    def durations(self, metric: str = "gen_ai.execute_tool.duration") -> list[dict[str, Any]]:
        """Each data point of ``metric``: its attributes, with ``count`` added."""
        data = self.reader.get_metrics_data()
        points = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for found in scope.metrics:
                    if found.name == metric:
                        points += [
                            {**p.attributes, "count": p.count} for p in found.data.data_points
                        ]
        return points

    def everything(self) -> str:
        """Every attribute of every span and data point, as one text (for the canary)."""
        spans = [
            {"name": s.name, "attributes": dict(s.attributes or {}), "status": s.status.description}
            for s in self.exporter.get_finished_spans()
        ]
        points = [self.durations(m) for m in ("gen_ai.execute_tool.duration",)]
        return json.dumps([spans, points], default=str)


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    found = Recorded()
    toolpalette.configure_telemetry(
        tracer_provider=found.tracer_provider, meter_provider=found.meter_provider
    )
    try:
        yield found
    finally:
        toolpalette.configure_telemetry()


@tool(read_only=True)
async def echo(text: str) -> str:
    """Say the text back."""
    return text


@tool(read_only=True)
def shout(text: str) -> str:
    """Say the text back, louder (in a worker thread)."""
    return text.upper()


@tool(read_only=True, timeout=0.05)
async def dawdle() -> str:
    """Take longer than allowed."""
    await asyncio.sleep(30)
    return "late"


@tool(read_only=True)
def explode(text: str) -> str:
    """Fail with an unexpected error that quotes the input."""
    raise RuntimeError(f"cannot handle {text}")


@tool(read_only=True)
def refuse(text: str) -> str:
    """Fail with a message for the model that quotes the input."""
    raise ToolError(f"no {text} today")


@tool
def delete_row(row: int) -> str:
    """Delete a row (mutating)."""
    return f"deleted {row}"


def registry() -> ToolRegistry:
    return ToolRegistry([echo, shout, dawdle, explode, refuse, delete_row])


async def test_a_call_is_one_internal_execute_tool_span_and_one_duration(recorded: Recorded):
    result = await Executor(registry()).execute("echo", {"text": "hi"}, call_id="call_7")
    assert result.text == "hi"
    (span,) = recorded.spans()
    assert span.name == "execute_tool echo"
    assert span.kind is SpanKind.INTERNAL
    assert span.status.status_code is StatusCode.UNSET
    assert dict(span.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_7",
    }
    assert recorded.durations() == [
        {"gen_ai.tool.name": "echo", "gen_ai.tool.type": "function", "count": 1}
    ]


class Deferring(toolpalette.Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> toolpalette.ToolSelector:
        return toolpalette.ToolSelector().tool(echo, deferred=True)


async def test_a_call_decided_at_call_time_is_one_span_too(recorded: Recorded):
    # Admitted at call time, the call runs in an executor made for it: still one span.
    thinker = toolpalette.ToolHub(autoload=False).bind(Deferring)
    result = await thinker.call("echo", {"text": "hi"}, deferred=True, call_id="c1")
    assert result.text == "hi"
    (span,) = recorded.spans()
    assert span.name == "execute_tool echo"
    assert span.attributes["gen_ai.tool.call.id"] == "c1"
    assert recorded.durations() == [
        {"gen_ai.tool.name": "echo", "gen_ai.tool.type": "function", "count": 1}
    ]


async def test_the_call_id_defaults_to_the_runs_as_the_tools_context_does(recorded: Recorded):
    await Executor(registry(), context=RUN).execute("echo", {"text": "hi"})
    (span,) = recorded.spans()
    assert span.attributes["gen_ai.tool.call.id"] == "run-call"


FAILURES = [
    # name, input, executor options, status, code
    ("made_up_tool", {}, {}, 404, "unknown_tool"),
    ("echo", {"text": 7}, {}, 400, "invalid_input"),
    ("echo", {"text": "x"}, {"offered": ["shout"]}, 403, "not_offered"),
    ("delete_row", {"row": 1}, {"read_only": True}, 403, "read_only"),
    ("echo", {"text": "x"}, {"policy": lambda provider, value: "deny"}, 403, "denied"),
    ("dawdle", {}, {}, 504, "timeout"),
    ("explode", {"text": "x"}, {}, 500, "internal_error"),
    ("refuse", {"text": "x"}, {}, 422, "tool_error"),
]


@pytest.mark.parametrize(
    ("name", "value", "options", "status", "code"),
    FAILURES,
    ids=[f"{f[3]}-{f[4]}" for f in FAILURES],
)
async def test_a_failed_call_says_its_code_in_error_type_and_an_error_status(
    recorded: Recorded, name: str, value: Any, options: dict[str, Any], status: int, code: str
):
    result = await Executor(registry(), **options).execute(name, value)
    assert (result.status, result.code) == (status, code)
    (span,) = recorded.spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == f"{status} {code}"
    assert span.attributes["error.type"] == code
    (point,) = recorded.durations()
    assert point["error.type"] == code
    if code == "unknown_tool":  # a name the model made up is never repeated
        assert span.name == "execute_tool"
        assert span.attributes["gen_ai.tool.name"] == point["gen_ai.tool.name"] == "_OTHER"
        assert "made_up_tool" not in recorded.everything()
    else:
        assert span.name == f"execute_tool {name}"


async def test_no_argument_or_result_value_is_recorded_by_default(recorded: Recorded):
    executor = Executor(registry(), context=RUN)
    ok = await executor.execute("echo", {"text": CANARY})
    assert ok.text == CANARY
    await executor.execute("shout", json.dumps({"text": CANARY}))
    await executor.execute("explode", {"text": CANARY})
    refused = await executor.execute("refuse", {"text": CANARY})
    assert CANARY in refused.text  # the tool's own message reaches the model...
    await executor.execute("echo", {"text": CANARY, "extra": CANARY})
    executor.execute_sync("shout", {"text": CANARY})
    await executor.execute_many([("echo", {"text": CANARY}), ("shout", {"text": CANARY})])
    assert len(recorded.spans()) == 8
    assert CANARY not in recorded.everything()  # ...but never a span or a duration


async def test_the_host_opts_in_to_arguments_and_results(recorded: Recorded):
    toolpalette.configure_telemetry(
        record_values=True,
        tracer_provider=recorded.tracer_provider,
        meter_provider=recorded.meter_provider,
    )
    executor = Executor(registry())
    await executor.execute("echo", {"text": CANARY})
    await executor.execute("shout", json.dumps({"text": "bytes"}).encode())
    await executor.execute("explode", {"text": "boom"})
    echoed, shouted, exploded = recorded.spans()
    assert json.loads(echoed.attributes["gen_ai.tool.call.arguments"]) == {"text": CANARY}
    assert echoed.attributes["gen_ai.tool.call.result"] == CANARY
    assert json.loads(shouted.attributes["gen_ai.tool.call.arguments"]) == {"text": "bytes"}
    assert shouted.attributes["gen_ai.tool.call.result"] == "BYTES"
    assert "gen_ai.tool.call.result" not in exploded.attributes  # only a successful result


def _parent_of(spans: list[Any], name: str) -> int | None:
    (found,) = [s for s in spans if s.name == name]
    return found.parent.span_id if found.parent is not None else None


async def test_the_span_is_current_while_the_tool_runs_in_every_way_a_call_runs(
    recorded: Recorded,
):
    tracer = recorded.tracer_provider.get_tracer("a-pack")
    threads: set[str] = set()

    @tool(read_only=True)
    def traced_sync(label: str) -> str:
        """Trace inside a worker thread."""
        threads.add(threading.current_thread().name)
        with tracer.start_as_current_span(f"inside {label}"):
            return label

    @tool(read_only=True)
    async def traced_async(label: str) -> str:
        """Trace inside the caller's task, across a suspension."""
        await asyncio.sleep(0)
        with tracer.start_as_current_span(f"inside {label}"):
            return label

    executor = Executor(ToolRegistry([traced_sync, traced_async]))
    await executor.execute("traced_sync", {"label": "sync"})
    await executor.execute("traced_async", {"label": "async"})
    executor.execute_sync("traced_sync", {"label": "blocking sync"})
    executor.execute_sync("traced_async", {"label": "blocking async"})
    await executor.execute_many(
        [("traced_sync", {"label": "batch sync"}), ("traced_async", {"label": "batch async"})]
    )
    assert threading.current_thread().name not in threads  # the sync tool ran in a worker
    spans = recorded.exporter.get_finished_spans()
    tools = {s.context.span_id: s for s in spans if s.name.startswith("execute_tool")}
    insides = [s for s in spans if s.name.startswith("inside")]
    assert len(insides) == 6
    for inside in insides:
        assert inside.parent is not None, inside.name
        assert inside.parent.span_id in tools, inside.name
        assert inside.context.trace_id == tools[inside.parent.span_id].context.trace_id


async def test_a_call_a_tool_makes_gets_a_span_of_its_own_under_the_callers(recorded: Recorded):
    inner = Executor(registry())

    @tool(read_only=True)
    async def delegate(text: str) -> str:
        """Call another tool through another executor."""
        return (await inner.execute("echo", {"text": text})).text

    outer = Executor(ToolRegistry([delegate]))
    tracer = recorded.tracer_provider.get_tracer("the-host")
    with tracer.start_as_current_span("agent turn") as turn:
        assert (await outer.execute("delegate", {"text": "x"})).text == "x"
    spans = recorded.exporter.get_finished_spans()
    by_name = {s.name: s for s in spans}
    assert by_name["execute_tool delegate"].parent.span_id == turn.get_span_context().span_id
    assert (
        by_name["execute_tool echo"].parent.span_id
        == by_name["execute_tool delegate"].context.span_id
    )
    assert len({s.context.trace_id for s in spans}) == 1


async def test_each_call_of_a_batch_is_a_span_with_its_call_id(recorded: Recorded):
    results = await Executor(registry()).execute_many(
        [
            ("echo", {"text": "a"}, "call_a"),
            ("nope", {}, "call_b"),
            ("shout", {"text": "c"}, "call_c"),
            ("echo", {"text": 3}, "call_d"),
        ]
    )
    assert [r.code for r in results] == ["ok", "unknown_tool", "ok", "invalid_input"]
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in recorded.spans()}
    assert set(spans) == {"call_a", "call_b", "call_c", "call_d"}
    assert spans["call_a"].name == "execute_tool echo"
    assert spans["call_b"].attributes["error.type"] == "unknown_tool"
    assert spans["call_c"].status.status_code is StatusCode.UNSET
    assert spans["call_d"].attributes["error.type"] == "invalid_input"
    assert sum(p["count"] for p in recorded.durations()) == 4


async def test_the_callers_cancellation_ends_the_span_as_an_error(recorded: Recorded):
    started = asyncio.Event()

    @tool(read_only=True)
    async def wait_forever() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.sleep(30)
        return "never"

    task = asyncio.ensure_future(Executor(ToolRegistry([wait_forever])).execute("wait_forever", {}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (span,) = recorded.spans()
    assert span.attributes["error.type"] == "CancelledError"
    assert span.status.status_code is StatusCode.ERROR


async def test_switched_off_nothing_is_recorded(recorded: Recorded):
    toolpalette.configure_telemetry(
        enabled=False,
        tracer_provider=recorded.tracer_provider,
        meter_provider=recorded.meter_provider,
    )
    await Executor(registry()).execute("echo", {"text": "hi"})
    assert recorded.exporter.get_finished_spans() == ()
    assert recorded.durations() == []


def _fresh(script: str, **env: str) -> dict[str, Any]:
    """Run ``script`` in a fresh interpreter; what it printed last, as JSON."""
    import os

    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "TOOLPALETTE_OTEL": "", **env},
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


CALLS = """
    import asyncio, json, sys
    {before}
    import toolpalette
    from toolpalette import Executor, ToolRegistry, tool

    @tool(read_only=True)
    def shout(text: str) -> str:
        '''Shout.'''
        return text.upper()

    @tool(read_only=True)
    async def echo(text: str) -> str:
        '''Echo.'''
        return text

    executor = Executor(ToolRegistry([shout, echo]))
    texts = [executor.execute_sync("shout", {{"text": "a"}}).text]
    texts.append(asyncio.run(executor.execute("echo", {{"text": "b"}})).text)
    texts += [r.text for r in asyncio.run(executor.execute_many([("echo", {{"text": "c"}})]))]
    imported = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
    print(json.dumps({{"texts": texts, "imported": imported}}))
"""


def test_without_opentelemetry_installed_nothing_of_it_is_imported():
    # A None entry in sys.modules is how an uninstalled package looks to find_spec.
    found = _fresh(CALLS.format(before="sys.modules['opentelemetry'] = None"))
    assert found == {"texts": ["A", "b", "c"], "imported": ["opentelemetry"]}


def test_switched_off_by_the_environment_nothing_of_it_is_imported():
    found = _fresh(CALLS.format(before=""), TOOLPALETTE_OTEL="0")
    assert found == {"texts": ["A", "b", "c"], "imported": []}


def test_installed_but_unused_nothing_of_it_is_imported():
    # Nobody imported OpenTelemetry, so nobody can have set a provider: nothing to record.
    found = _fresh(CALLS.format(before=""))
    assert found == {"texts": ["A", "b", "c"], "imported": []}


def test_turning_it_on_without_opentelemetry_says_what_to_install():
    found = _fresh(
        """
        import json, sys
        sys.modules["opentelemetry"] = None
        import toolpalette
        try:
            toolpalette.configure_telemetry(enabled=True)
        except RuntimeError as exc:
            print(json.dumps({"error": str(exc)}))
        """
    )
    assert "pip install 'toolpalette[otel]'" in found["error"]


def test_the_global_providers_set_by_the_host_are_used_once_set():
    found = _fresh(
        """
        import json
        import toolpalette
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
        from toolpalette import Executor, ToolRegistry, tool

        @tool(read_only=True)
        def shout(text: str) -> str:
            '''Shout.'''
            return text.upper()

        executor = Executor(ToolRegistry([shout]))
        executor.execute_sync("shout", {"text": "before the provider"})
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        executor.execute_sync("shout", {"text": "after"})
        names = [s.name for s in exporter.get_finished_spans()]
        print(json.dumps({"names": names}))
        """
    )
    assert found == {"names": ["execute_tool shout"]}
