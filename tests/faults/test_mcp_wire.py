"""What a client writes cannot break the server's reading of it: deep input, odd encodings.

Each request goes to a palette under uvicorn and is answered as any other bad request
is: never -32603, never a traceback; and what telemetry says of it holds no client text.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import palette_fixture as fx
import pytest
import toolpalette.mcp
from mcp_server_fixture import LEGACY, answer_of, post, serving
from toolpalette import ToolHub

PROBE = Path(__file__).parent / "servers" / "telemetry_probe.py"
DEPTH = 700
"""Nesting deeper than the repeated-key check could walk by recursion (Python's limit is
1,000 frames), and shallow enough for the JSON parsers to read."""


def deep_call(where: str) -> bytes:
    """A ``tools/call`` repeating a key, with ``DEPTH`` nested arrays in its arguments."""
    deep = "[" * DEPTH + "]" * DEPTH
    if where == "arguments":
        params = '{"name":"echo","arguments":{"text":"a","text":"b","x":DEEP}}'
    else:
        params = '{"name":"echo","arguments":{"text":"a","x":DEEP},"y":{"k":1,"k":2}}'
    message = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":PARAMS}'
    return message.replace("PARAMS", params).replace("DEEP", deep).encode()


async def test_deep_input_repeating_a_key_is_refused_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The fast path reads the body with the json module, which reads this depth; the
    # SDK's transport refuses it as unreadable (-32700) before the check runs.
    app = toolpalette.mcp.asgi_app(ToolHub(), fx.Palette, stateless=True)
    caplog.set_level(logging.INFO)
    async with serving(app) as base:
        inside, outside = [
            await asyncio.to_thread(post, base, None, None, content=deep_call(where), **LEGACY)
            for where in ("arguments", "elsewhere")
        ]
    first, second = answer_of(inside), answer_of(outside)
    assert "result" in first, first
    assert first["result"]["isError"] is True, first  # the pipeline's own 400
    assert "nesting" in first["result"]["content"][0]["text"]
    assert second["error"]["code"] == -32600, second
    assert "RecursionError" not in caplog.text
    assert "Traceback" not in caplog.text
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) <= 2


def test_spans_and_durations_name_only_what_the_server_lists() -> None:
    pytest.importorskip("opentelemetry.sdk", reason="needs opentelemetry-sdk")
    done = subprocess.run(
        [sys.executable, str(PROBE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "TOOLPALETTE_OTEL": "", "TOOLPALETTE_NO_CACHE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    servers = [s for s in found["spans"] if s["attributes"].get("mcp.method.name")]
    durations = [d for d in found["durations"] if d["metric"] == "mcp.server.operation.duration"]
    assert servers
    assert durations
    assert "CANARY" not in json.dumps(found)  # no name, id or message a client sent
    names = {s["name"] for s in servers}
    assert {"tools/call echo", "tools/call _OTHER", "prompts/get _OTHER"} <= names
    assert any(d.get("gen_ai.tool.name") == "echo" for d in durations)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"text":"hi"}}}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call",'
        '"params":{"name":"echo","arguments":{"text":"h\u00e9"}}}'.encode("utf-16"),
    ],
    ids=["lone surrogate id", "UTF-16 body"],
)
async def test_odd_encodings_get_the_sdks_answer_not_a_500(body: bytes) -> None:
    answers = []
    for fast in (True, False):
        app = toolpalette.mcp.asgi_app(ToolHub(), fx.Palette, stateless=True, fast=fast)
        async with serving(app) as base:
            answer = await asyncio.to_thread(post, base, None, None, content=body, **LEGACY)
        answers.append((answer.status_code, answer.text))
    assert answers[0] == answers[1]  # the fast path answers what the SDK answers
    assert answers[0][0] != 500
