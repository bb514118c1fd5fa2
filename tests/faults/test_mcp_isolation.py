"""One MCP server cannot hold up another's calls, whatever its results cost to check.

All of a hub's MCP sessions share one event loop. The SDK checked every result against
its tool's output schema there, with no bound on the work: ``uniqueItems`` over 15,000
objects compares every pair, and while it did, a healthy second server's calls could
not even be sent (they answered 504). Results are now checked by toolpalette, with the
bounded validator, on the caller's loop for its 10 ms share and in a worker beyond it.
The healthy server's calls must answer within a deadline far above their healthy
cost (milliseconds) while the hostile result is being handled.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from toolpalette import Executor, ToolContext, ToolHub
from toolpalette.testing import await_until

pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")

RAW = Path(__file__).parent / "servers" / "raw_server.py"
HEALTHY_DEADLINE = 20.0
"""Seconds a healthy call may take: its own timeout, far above the milliseconds it costs."""
HOSTILE_ITEMS = 15_000
"""Objects in the hostile result (within the bound of 16,384 arrays and objects): a naive
``uniqueItems`` compares 112 million pairs."""


def raw(plan: dict[str, Any], folder: Path, **options: Any) -> dict[str, Any]:
    """The configuration of a raw server following ``plan`` (written into ``folder``)."""
    text = json.dumps(plan)
    path = folder / f"plan-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    path.write_text(text)
    return {"command": sys.executable, "args": [str(RAW), str(path)], **options}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {"type": "object"},
        **extra,
    }


UNIQUE_OUTPUT = {
    "type": "object",
    "properties": {"items": {"type": "array", "uniqueItems": True}},
}


async def test_a_healthy_servers_calls_answer_while_another_sends_results_costly_to_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    sent = tmp_path / "sent"
    hostile = raw(
        {
            "tools": [tool("unique", outputSchema=UNIQUE_OUTPUT)],
            "calls": {"unique": {"do": "unique", "n": HOSTILE_ITEMS, "marker": str(sent)}},
        },
        tmp_path,
        timeout=600,
    )
    healthy = raw(
        {"tools": [tool("ping")], "calls": {"ping": {"do": "text", "text": "pong"}}},
        tmp_path,
        timeout=HEALTHY_DEADLINE,
    )
    hub = ToolHub(autoload=False, config={}, mcp_servers={"hostile": hostile, "healthy": healthy})
    try:
        registry = await asyncio.to_thread(hub.catalog)  # both servers listed, off this loop
        executor = Executor(registry, output_cap=1 << 24, timeout=600)
        first = await executor.execute("ping", {})
        assert first.text == "pong", first
        costly = asyncio.ensure_future(executor.execute("unique", {}))
        await await_until(sent.exists, timeout=60)  # the hostile result is on its way
        answers = [await executor.execute("ping", {}) for _ in range(3)]
        assert [(a.status, a.text) for a in answers] == [(200, "pong")] * 3
        checked = await costly
        assert checked.status == 200, checked  # distinct objects: the result conforms
        assert checked.structured is not None
        assert len(checked.structured["items"]) == HOSTILE_ITEMS
    finally:
        await asyncio.to_thread(hub.close)


async def test_a_result_breaking_its_output_schema_is_the_servers_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    twice = [{"i": 1, "secret": "sk-canary"}, {"i": 1, "secret": "sk-canary"}]
    server = raw(
        {
            "tools": [
                tool("twice", outputSchema=UNIQUE_OUTPUT),
                tool("bare", outputSchema=UNIQUE_OUTPUT),
            ],
            "calls": {
                "twice": {"do": "structured", "structured": {"items": twice}},
                "bare": {"do": "text", "text": "no structured content"},
            },
        },
        tmp_path,
    )
    hub = ToolHub(autoload=False, config={}, mcp_servers={"s": server})
    reports: list[Any] = []
    try:
        registry = await asyncio.to_thread(hub.catalog)
        executor = Executor(registry, on_tool_error=reports.append)
        for name in ("twice", "bare"):
            result = await executor.execute(name, {}, context=ToolContext(run_id="r1"))
            assert (result.status, result.code) == (502, "server_error"), result
            assert "does not match its output schema" in result.text
            assert "sk-canary" not in result.text
        executor.reports.join(10)
        causes = sorted(str(r.error.__cause__) for r in reports)
        assert causes == [
            "at $.items: it fails 'uniqueItems'",
            "the result has no structured content (an object)",
        ]
    finally:
        await asyncio.to_thread(hub.close)
