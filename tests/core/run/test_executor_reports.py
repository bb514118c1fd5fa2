"""Failure reports: the whole picture, delivered in the background, never waited for."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pluggy
import pytest
from toolpalette import (
    Executor,
    ToolContext,
    ToolErrorReport,
    ToolRegistry,
    hookimpl,
    hookspecs,
)
from toolpalette.testing import FakeTool, ReportQueue

RUN = ToolContext(run_id="run-9", thread_id="thread-9", user={"id": "u9"})


def failing(name: str = "fails") -> FakeTool:
    return FakeTool(name, raises=ValueError("boom"))


def registry() -> ToolRegistry:
    return ToolRegistry([failing(), FakeTool("fine", result="ok")])


async def test_a_report_has_the_whole_picture():
    reports: list[ToolErrorReport] = []
    executor = Executor(registry(), on_tool_error=reports.append, context=RUN)
    result = await executor.execute("fails", '{"q": 1}', call_id="c7")
    assert executor.reports.join()
    (report,) = reports
    assert report.tool == "fails"
    assert report.input == {"q": 1}  # validated: the input the tool got
    assert isinstance(report.error, ValueError)
    assert (report.status, report.code, report.text) == (500, "internal_error", result.text)
    assert report.duration >= 0
    assert report.context is not None
    assert (report.context.run_id, report.context.call_id) == ("run-9", "c7")


@pytest.mark.parametrize(
    ("name", "raw", "code"),
    [("nope", {}, "unknown_tool"), (None, {}, "unknown_tool"), ("fine", "{", "invalid_input")],
)
async def test_refusals_are_reported_too(name: object, raw: Any, code: str):
    reports: list[ToolErrorReport] = []
    executor = Executor(registry(), on_tool_error=reports.append, context=RUN)
    await executor.execute(name, raw)
    assert executor.reports.join()
    assert [r.code for r in reports] == [code]
    assert reports[0].tool == (name if isinstance(name, str) else repr(name))
    assert reports[0].input is raw  # refused before validation passed: as it was sent


async def test_success_and_direct_calls_are_not_reported():
    reports: list[ToolErrorReport] = []
    executor = Executor(registry(), on_tool_error=reports.append)
    await executor.execute("fails", {})  # no context: a direct call outside a run
    await executor.execute("fine", {}, context=RUN)
    assert executor.reports.join()
    assert reports == []


class Recorder:
    def __init__(self) -> None:
        self.reports: list[Any] = []

    @hookimpl
    def toolpalette_tool_error(self, report: Any) -> None:
        self.reports.append(report)


class Raiser:
    @hookimpl(tryfirst=True)
    def toolpalette_tool_error(self, report: Any) -> None:
        raise RuntimeError("reporter bug")


class NoArgs:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def toolpalette_tool_error(self) -> None:
        self.calls += 1


async def test_the_hook_runs_every_implementation_even_after_one_raises(
    caplog: pytest.LogCaptureFixture,
):
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    recorder, no_args = Recorder(), NoArgs()
    pm.register(Raiser())
    pm.register(recorder)
    pm.register(no_args)
    callbacks: list[Any] = []
    executor = Executor(
        registry(), hook=pm.hook.toolpalette_tool_error, on_tool_error=callbacks.append, context=RUN
    )
    with caplog.at_level(logging.ERROR, logger="toolpalette.executor"):
        await executor.execute("fails", {})
        assert executor.reports.join()
    assert len(recorder.reports) == 1
    assert no_args.calls == 1
    assert len(callbacks) == 1
    assert "raised; ignored" in caplog.text


async def test_a_plain_callable_hook_and_an_async_callback():
    hooked: list[Any] = []
    awaited: list[Any] = []

    async def callback(report: ToolErrorReport) -> None:
        await asyncio.sleep(0)
        awaited.append(report.code)

    executor = Executor(
        registry(),
        hook=lambda report: hooked.append(report),
        on_tool_error=[callback],
        context=RUN,
    )
    await executor.execute("fails", {})
    assert executor.reports.join()
    assert len(hooked) == 1
    assert awaited == ["internal_error"]


async def test_a_blocking_reporter_never_delays_the_call_and_drops_are_counted():
    gate = threading.Event()
    seen: list[Any] = []

    def blocking(report: ToolErrorReport) -> None:
        gate.wait(10)
        seen.append(report)

    queue = ReportQueue(maxsize=2)
    executor = Executor(registry(), on_tool_error=blocking, context=RUN, reports=queue)
    started = time.monotonic()
    results = [await executor.execute("fails", {}) for _ in range(5)]
    assert time.monotonic() - started < 2.0  # nowhere near the reporter's 10 s
    assert all(r.status == 500 for r in results)
    assert queue.dropped >= 2
    assert executor.stats()["dropped_reports"] == queue.dropped
    gate.set()
    assert queue.join()
    assert len(seen) + queue.dropped == 5


async def test_a_report_names_the_call_id_of_its_call():
    reports: list[ToolErrorReport] = []
    executor = Executor(registry(), on_tool_error=reports.append, context=RUN)
    await executor.execute_many([("fine", {}, "c1"), ("fails", {}, "c2")])
    await executor.execute("fails", {}, call_id="c3")
    assert executor.reports.join()
    assert [r.context.call_id for r in reports if r.context] == ["c2", "c3"]
    assert [r.context.run_id for r in reports if r.context] == ["run-9", "run-9"]
