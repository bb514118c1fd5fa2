"""The report queue's stall guard: a reporter that blocks is left behind, not waited on.

How long a reporter may block before the queue delivers on a new thread is an internal
setting (``STALL_AFTER``), so this test sets it through the queue's module.
"""

from __future__ import annotations

import logging
import threading

import pytest
from toolpalette import Executor, ToolContext, ToolErrorReport, ToolRegistry
from toolpalette._run import reports as _reports
from toolpalette.testing import FakeTool, ReportQueue, await_until


async def test_a_stalled_reporter_is_replaced(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    monkeypatch.setattr(_reports, "STALL_AFTER", 0.0)  # blocking at all is stalling
    gate = threading.Event()
    seen: list[str] = []

    def first_blocks(report: ToolErrorReport) -> None:
        if not seen:
            seen.append("blocked")
            gate.wait(10)
        else:
            seen.append(report.code)

    queue = ReportQueue()
    registry = ToolRegistry([FakeTool("fails", raises=ValueError("boom"))])
    executor = Executor(
        registry, on_tool_error=first_blocks, context=ToolContext(run_id="r"), reports=queue
    )
    with caplog.at_level(logging.WARNING, logger="toolpalette.executor"):
        await executor.execute("fails", {})
        await await_until(lambda: seen == ["blocked"])  # the first reporter now blocks
        await executor.execute("nope", {})
        await await_until(lambda: len(seen) == 2)
    assert seen == ["blocked", "unknown_tool"]
    assert "is blocking" in caplog.text
    gate.set()
    assert queue.join()
