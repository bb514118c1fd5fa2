"""A client's trace goes on through a served palette into the peer server its tool calls.

The scenario (``trace_fixture.py``) runs once, in a fresh interpreter, because it sets
OpenTelemetry's global providers: an SDK ``Client`` inside a span of its own calls a
palette served in-process (handshake era over JSON-RPC, then the 2026-07-28 era), whose
tool is an MCP tool of a peer palette running as a process over stdio; the peer's pack
tool opens a span of its own. The spans of both processes and the served palette's
durations come back as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs opentelemetry-sdk")

HERE = Path(__file__).parent
ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    spans_file = tmp_path_factory.mktemp("telemetry") / "peer-spans.jsonl"
    done = subprocess.run(
        [sys.executable, str(HERE / "trace_fixture.py"), str(spans_file)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=HERE,
        env={**os.environ, "TOOLPALETTE_OTEL": "", "TOOLPALETTE_NO_CACHE": "1"},
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["texts"] == ["HI", "HI"]  # the call went through both palettes
    assert found["refused"] == [-32602, -32602]
    return found


def _of_trace(scenario: dict[str, Any], era: str) -> list[dict[str, Any]]:
    return [s for s in scenario["spans"] if s["trace"] == scenario["turns"][era]]


def _chain(spans: list[dict[str, Any]], leaf: str) -> list[tuple[str, str, str]]:
    """From the span named ``leaf`` up to the root: (process, name, kind) of each."""
    by_id = {s["span"]: s for s in spans}
    (span,) = [s for s in spans if s["name"] == leaf]
    chain = []
    while span is not None:
        chain.append((span["process"], span["name"], span["kind"]))
        span = by_id.get(span["parent"]) if span["parent"] is not None else None
    return chain


def test_a_clients_trace_goes_through_the_palette_into_the_peers_pack_tool(scenario):
    spans = _of_trace(scenario, "legacy")
    assert _chain(spans, "pack work") == [
        ("peer", "pack work", "INTERNAL"),
        ("peer", "execute_tool shout", "INTERNAL"),
        ("peer", "tools/call shout", "SERVER"),  # parent from params._meta, over stdio
        ("served", "MCP send tools/call shout", "CLIENT"),  # the hub's client
        ("served", "execute_tool shout", "INTERNAL"),
        ("served", "tools/call shout", "SERVER"),  # parent from params._meta
        ("served", "MCP send tools/call shout", "CLIENT"),  # the agent's client
        ("served", "agent turn (legacy)", "INTERNAL"),
    ]


def test_in_the_2026_era_the_trace_reaches_the_pack_tool_too(scenario):
    # In-process, the SDK dispatches a 2026-era request directly: no client span there.
    spans = _of_trace(scenario, "auto")
    assert _chain(spans, "pack work") == [
        ("peer", "pack work", "INTERNAL"),
        ("peer", "execute_tool shout", "INTERNAL"),
        ("peer", "tools/call shout", "SERVER"),
        ("served", "MCP send tools/call shout", "CLIENT"),
        ("served", "execute_tool shout", "INTERNAL"),
        ("served", "tools/call shout", "SERVER"),
        ("served", "agent turn (auto)", "INTERNAL"),
    ]


def test_a_served_mcp_tool_is_an_extension_and_the_peers_pack_tool_a_function(scenario):
    kinds = {
        (s["process"], s["attributes"]["gen_ai.tool.type"])
        for s in scenario["spans"]
        if s["name"] == "execute_tool shout"
    }
    assert kinds == {("served", "extension"), ("peer", "function")}


@pytest.mark.parametrize("era", ERAS)
def test_every_request_the_palette_answers_itself_has_the_sdks_server_span(scenario, era):
    served = [
        s
        for s in scenario["spans"]
        if s["process"] == "served"
        and s["kind"] == "SERVER"
        and s["attributes"]["mcp.protocol.version"] == ERAS[era]
    ]
    by_name = {s["name"]: s for s in served}
    # tools/list and tools/call are answered by the palette's own middleware, after the SDK's.
    assert {"tools/list", "tools/call shout", "tools/call _OTHER"} <= set(by_name)
    for name in ("tools/list", "tools/call shout"):
        attributes = by_name[name]["attributes"]
        assert attributes["mcp.method.name"] == name.split()[0]
        assert "jsonrpc.request.id" in attributes
        assert by_name[name]["status"] == "UNSET"
    refused = by_name["tools/call _OTHER"]  # a name the server does not list
    assert refused["status"] == "ERROR"
    assert refused["attributes"]["error.type"] == "-32602"


def test_requests_are_timed_per_method_on_both_sides(scenario):
    served = [
        {k: v for k, v in d.items() if k != "metric"}
        for d in scenario["durations"]
        if d["metric"] == "mcp.server.operation.duration"
    ]
    for version in ERAS.values():
        assert {"mcp.method.name": "tools/list", "mcp.protocol.version": version} in served
        assert {
            "mcp.method.name": "tools/call",
            "mcp.protocol.version": version,
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "shout",
        } in served
        # An unknown tool is refused: the name the client sent is not repeated.
        assert {
            "mcp.method.name": "tools/call",
            "mcp.protocol.version": version,
            "gen_ai.operation.name": "execute_tool",
            "error.type": "-32602",
            "rpc.response.status_code": "-32602",
        } in served
    sent = [
        {k: v for k, v in d.items() if k not in ("metric", "mcp.protocol.version")}
        for d in scenario["durations"]
        if d["metric"] == "mcp.client.operation.duration"
    ]
    assert {"mcp.method.name": "tools/list"} in sent
    assert {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "shout",
    } in sent
    tools = [d for d in scenario["durations"] if d["metric"] == "gen_ai.execute_tool.duration"]
    # The unknown name reaches the pipeline (deferral decides at call time), which
    # answers it without repeating it.
    assert sorted(tools, key=str) == [
        {
            "metric": "gen_ai.execute_tool.duration",
            "gen_ai.tool.name": "_OTHER",
            "error.type": "unknown_tool",
        },
        {
            "metric": "gen_ai.execute_tool.duration",
            "gen_ai.tool.name": "shout",
            "gen_ai.tool.type": "extension",
        },
    ]


@pytest.mark.parametrize("era", ERAS)
def test_the_hubs_client_span_says_the_method_version_and_id_the_peer_saw(scenario, era):
    spans = _of_trace(scenario, era)
    by_id = {s["span"]: s for s in spans}
    (sent,) = [
        s
        for s in spans
        if s["kind"] == "CLIENT" and by_id[s["parent"]]["name"] == "execute_tool shout"
    ]
    (seen,) = [s for s in spans if s["process"] == "peer" and s["kind"] == "SERVER"]
    assert seen["parent"] == sent["span"]  # the peer's span continues the hub's client span
    for key in ("mcp.method.name", "mcp.protocol.version", "jsonrpc.request.id"):
        assert sent["attributes"][key] == seen["attributes"][key], key
    assert sent["attributes"]["mcp.method.name"] == "tools/call"
