"""A palette under uvicorn probed with client-sent names; prints every span and duration.

Run as a script (it sets OpenTelemetry's global providers): the SDK's client calls an
unknown tool, gets an unknown prompt, and a raw request uses a string id, each holding
``CANARY``; the last line of stdout is the server side's spans and durations, as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parents[2] / "mcp" / "server")]

from opentelemetry import metrics, trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)


async def probe() -> None:
    import palette_fixture as fx
    import toolpalette.mcp
    from mcp.shared.exceptions import MCPError
    from mcp_server_fixture import LEGACY, client, post, serving
    from toolpalette import ToolHub

    async with serving(toolpalette.mcp.asgi_app(ToolHub(), fx.Palette, stateless=True)) as base:
        for mode in ("auto", "legacy"):
            async with client(base, mode=mode) as connected:
                await connected.call_tool("echo", {"text": "hi"})
                for call in (
                    connected.call_tool("CANARY_tool", {}),
                    connected.get_prompt("CANARY_prompt"),
                ):
                    with contextlib.suppress(MCPError):
                        await call
        body = {
            "jsonrpc": "2.0",
            "id": "CANARY-id",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x"}},
        }
        await asyncio.to_thread(post, base, None, body, **LEGACY)


def main() -> None:
    spans = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(tracing)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    asyncio.run(probe())
    found: dict[str, Any] = {"spans": [], "durations": []}
    for span in spans.get_finished_spans():
        if span.kind.name == "CLIENT":
            continue  # the probing client's own spans: what it sent, as it should
        status = span.status.description or ""
        found["spans"].append(
            {"name": span.name, "attributes": dict(span.attributes or {}), "status": status}
        )
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    found["durations"].append({"metric": metric.name, **point.attributes})
    print(json.dumps(found))


if __name__ == "__main__":
    main()
