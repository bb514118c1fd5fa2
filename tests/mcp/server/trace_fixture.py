"""The telemetry scenario: a client's trace through a served palette into another server.

Run by ``test_telemetry.py`` in a fresh interpreter (``python trace_fixture.py``), since
it sets OpenTelemetry's global providers, which stay set for the life of a process:

- an SDK ``Client``, inside a span of its own, calls a palette served in-process by
  ``toolpalette.mcp.server`` (JSON-RPC over memory streams in the handshake era, the
  SDK's direct dispatch in the 2026-07-28 era);
- the palette's tool is an MCP tool of a peer: another palette, run as a process over
  stdio (``python -c "import trace_fixture; trace_fixture.serve_peer()"``), whose pack
  tool opens a span of its own. The peer writes its spans to a JSON-lines file.

It prints one JSON object: every span of both processes, and the served palette's
durations.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import toolpalette
import toolpalette.mcp
from toolpalette import Thinker, ToolSelector

HERE = Path(__file__).parent
SPANS_FILE_ENV = "TOOLPALETTE_TEST_SPANS"


@toolpalette.tool(read_only=True)
def shout(text: str) -> str:
    """Say the text back, louder."""
    from opentelemetry import trace

    with trace.get_tracer("a-pack").start_as_current_span("pack work"):
        return text.upper()


class Peer(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(shout)


class Served(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("peer")


def as_record(span: Any, process: str) -> dict[str, Any]:
    parent = span.parent
    return {
        "process": process,
        "name": span.name,
        "kind": span.kind.name,
        "trace": format(span.context.trace_id, "032x"),
        "span": format(span.context.span_id, "016x"),
        "parent": format(parent.span_id, "016x") if parent is not None else None,
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
    }


def serve_peer() -> None:
    """The peer: the ``shout`` palette over stdio, each finished span a line of the file."""
    from mcp.server.stdio import stdio_server
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    path = Path(os.environ[SPANS_FILE_ENV])

    class ToFile(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            with path.open("a", encoding="utf-8") as out:
                for span in spans:
                    out.write(json.dumps(as_record(span, "peer")) + "\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ToFile()))
    trace.set_tracer_provider(provider)
    palette = toolpalette.mcp.server(toolpalette.ToolHub(autoload=False), Peer)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await palette.run(read, write, palette.create_initialization_options())

    asyncio.run(serve())


def main(spans_file: Path) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    peer = {
        "command": sys.executable,
        "args": ["-c", "import trace_fixture; trace_fixture.serve_peer()"],
        "env": {
            "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
            SPANS_FILE_ENV: str(spans_file),
        },
    }
    hub = toolpalette.ToolHub(autoload=False, mcp_servers={"peer": peer})
    palette = toolpalette.mcp.server(hub, Served)  # lists the peer's tools: connects now
    tracer = trace.get_tracer("the-agent")
    turns: dict[str, str] = {}
    texts: list[str] = []
    refused: list[int] = []

    async def agent() -> None:
        for era in ("legacy", "auto"):
            # Connected outside the turn's span: only params._meta can carry the trace.
            async with Client(palette, mode=era) as client:
                await client.list_tools()
                with tracer.start_as_current_span(f"agent turn ({era})") as turn:
                    turns[era] = format(turn.get_span_context().trace_id, "032x")
                    result = await client.call_tool("shout", {"text": "hi"})
                    texts.append(result.content[0].text)
                    try:
                        await client.call_tool("no_such_tool", {})
                    except MCPError as exc:
                        refused.append(exc.error.code)

    try:
        asyncio.run(agent())
    finally:
        hub.close()
    spans = [as_record(s, "served") for s in exporter.get_finished_spans()]
    spans += [json.loads(line) for line in spans_file.read_text(encoding="utf-8").splitlines()]
    durations = []
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for found in scope.metrics:
                for point in found.data.data_points:
                    durations.append({"metric": found.name, **point.attributes})
    print(
        json.dumps(
            {
                "turns": turns,
                "texts": texts,
                "refused": refused,
                "spans": spans,
                "durations": durations,
            }
        )
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
