"""A remote tool's progress reaches the host: ``on_progress`` and ``toolpalette call``'s bar.

The server (``peers/progress_server.py``, the SDK's own ``MCPServer``) reports each page
of ``crawl``; every report reaches the call's ``on_progress`` on the caller's side, in
order and before the result, whether the server runs in-process or over stdio and
whether the caller awaits or blocks.
"""

from __future__ import annotations

import asyncio
import io
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
from toolpalette import Executor, ToolContext, ToolHub
from toolpalette.testing import run_cli

from .conftest import PROGRESS_SERVER, peer_module

REPORTS = [(1.0, 3.0, "page 1"), (2.0, 3.0, "page 2"), (3.0, 3.0, "page 3"), (4.0, None, None)]

Report = tuple[float, "float | None", "str | None"]


def servers(where: str) -> dict[str, Any]:
    if where == "in-process":
        return {"p": peer_module(PROGRESS_SERVER).server}
    return {"p": {"command": sys.executable, "args": [str(PROGRESS_SERVER)]}}


@pytest.mark.parametrize("where", ["in-process", "stdio"])
def test_an_async_caller_gets_every_report_in_order_before_the_result(
    make_hub: Callable[..., ToolHub], where: str
):
    hub = make_hub(mcp_servers=servers(where))
    executor = Executor(hub.catalog())

    async def call() -> tuple[str, list[Report], list[bool]]:
        reports: list[Report] = []
        here = threading.get_ident()
        on_callers_thread: list[bool] = []

        def on_progress(done: float, total: float | None, message: str | None) -> None:
            on_callers_thread.append(threading.get_ident() == here)
            reports.append((done, total, message))

        context = ToolContext(on_progress=on_progress)
        result = await executor.execute("crawl", {"pages": 3}, context=context)
        return result.text, list(reports), on_callers_thread

    text, reports, on_callers_thread = asyncio.run(call())
    assert text == '{"result":"crawled 3"}'  # the SDK server has an output schema
    assert reports == REPORTS  # all of them, as the result came back
    assert all(on_callers_thread)  # never on the loop the sessions share


def test_a_caller_on_the_pools_own_loop_gets_every_report_in_order_there(
    make_hub: Callable[..., ToolHub],
):
    hub = make_hub(mcp_servers=servers("stdio"))
    executor = Executor(hub.catalog())
    pool = hub.mcp().pool

    async def on_the_pool_loop() -> tuple[str, list[Report], list[bool]]:
        reports: list[Report] = []
        loop = asyncio.get_running_loop()
        on_this_loop: list[bool] = []

        def on_progress(done: float, total: float | None, message: str | None) -> None:
            on_this_loop.append(asyncio.get_running_loop() is loop)
            reports.append((done, total, message))

        context = ToolContext(on_progress=on_progress)
        result = await executor.execute("crawl", {"pages": 3}, context=context)
        return result.text, list(reports), on_this_loop

    text, reports, on_this_loop = pool.run(on_the_pool_loop(), timeout=30)
    assert text == '{"result":"crawled 3"}'
    assert reports == REPORTS
    assert on_this_loop == [True] * len(REPORTS)


@pytest.mark.parametrize("where", ["in-process", "stdio"])
def test_a_sync_caller_gets_every_report_too(make_hub: Callable[..., ToolHub], where: str):
    hub = make_hub(mcp_servers=servers(where))
    reports: list[Report] = []
    context = ToolContext(on_progress=lambda *report: reports.append(report))
    result = Executor(hub.catalog()).execute_sync("crawl", {"pages": 3}, context=context)
    assert result.structured == {"result": "crawled 3"}
    assert reports == REPORTS


def test_a_raising_progress_callback_does_not_fail_the_call(
    make_hub: Callable[..., ToolHub], caplog: pytest.LogCaptureFixture
):
    hub = make_hub(mcp_servers=servers("in-process"))

    def broken(done: float, total: float | None, message: str | None) -> None:
        raise RuntimeError("the host's bar broke")

    context = ToolContext(on_progress=broken)
    result = Executor(hub.catalog()).execute_sync("crawl", {"pages": 2}, context=context)
    assert (result.is_error, result.structured) == (False, {"result": "crawled 2"})
    assert "the progress callback raised" in caplog.text


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_toolpalette_call_draws_an_mcp_tools_progress_as_a_local_tools(
    make_hub: Callable[..., ToolHub],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    hub = make_hub(mcp_servers=servers("stdio"))
    assert run_cli(["call", "crawl", "--input", '{"pages": 4}'], hub=hub) == 0
    drawn = terminal.getvalue()
    assert "[######..................] 1/4 page 1" in drawn
    assert "[########################] 4/4 page 4" in drawn
    assert "[????????????????????????] 5" in drawn
    assert drawn.endswith("\r\x1b[K")  # the bar is gone before the result is printed
    assert capsys.readouterr().out == '{"result":"crawled 4"}\n'
