"""Task-supporting tools of MCP servers run as tasks: to completion, cancelled, past a deadline.

Against toolpalette's own server (in-process, the tasks extension) and the reference
server ``@modelcontextprotocol/server-everything`` (stdio, 2025-11-25's tasks), whose
``simulate-research-query`` must run as a task.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
import toolpalette
from toolpalette import AbortSignal, Executor, Thinker, ToolContext, ToolHub, ToolSelector
from toolpalette.testing import leak_check, run_cli, wait_until

from .conftest import PROCESS_WAIT, peer

EVERYTHING = "TOOLPALETTE_MCP_EVERYTHING"
STARTED = threading.Event()
ENDED = threading.Event()


@toolpalette.tool(read_only=True, task_support="required", timeout=300)
async def count(to: int, context: ToolContext) -> str:
    """Count to ``to``, reporting each step, then think a while and say how far."""
    for step in range(1, to + 1):
        context.report_progress(step, to, f"step {step}")
    await asyncio.sleep(1.0)  # past TaskSettings.immediate: the call becomes a task
    return f"counted to {to}"


@toolpalette.tool(read_only=True, task_support="optional", timeout=300)
async def hang() -> str:
    """Wait until cancelled."""
    STARTED.set()
    try:
        await asyncio.Event().wait()
    finally:
        ENDED.set()
    return "never"


class Tasks(Thinker):
    """Offers ``count`` (tasks only) and ``hang``."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(count).tool(hang)


def own_server(**config: Any) -> Any:
    """toolpalette's server of `Tasks`, in-process; a call not done in 0.25 s is a task."""
    import toolpalette.mcp
    from toolpalette.mcp import MCPServerConfig
    from toolpalette.mcp._tasks import TaskSettings

    palette = toolpalette.mcp.server(
        ToolHub(autoload=False), thinker=Tasks, tasks=TaskSettings(immediate=0.25)
    )
    return MCPServerConfig("own", server=palette, **config)


@pytest.fixture(autouse=True)
def _fresh_events() -> None:
    STARTED.clear()
    ENDED.clear()


def test_a_task_tool_of_a_toolpalette_server_runs_to_completion_with_its_progress():
    with leak_check(deadline=PROCESS_WAIT):
        hub = ToolHub(autoload=False, mcp_servers={"own": own_server()})
        try:
            assert {p.name: p.task_support for p in hub.providers_for_server("own")} == {
                "count": "required",
                "hang": "optional",
                "call_tool": "forbidden",
            }
            reports: list[tuple[float, float | None, str | None]] = []

            def on_progress(done: float, total: float | None, message: str | None) -> None:
                reports.append((done, total, message))

            context = ToolContext(on_progress=on_progress)
            result = Executor(hub.catalog()).execute_sync("count", {"to": 3}, context=context)
            assert (result.is_error, result.text) == (False, "counted to 3")
            assert reports == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
        finally:
            hub.close()


def test_the_hosts_abort_cancels_the_task_on_the_server():
    with leak_check(deadline=PROCESS_WAIT):
        hub = ToolHub(autoload=False, mcp_servers={"own": own_server()})
        try:
            executor = Executor(hub.catalog())

            async def call() -> Any:
                abort = AbortSignal()
                running = asyncio.ensure_future(executor.execute("hang", {}, abort=abort))
                await asyncio.to_thread(wait_until, STARTED.is_set, timeout=PROCESS_WAIT)
                abort.abort("The host stopped the call.")
                return await running

            result = asyncio.run(call())
            assert (result.status, result.code) == (499, "aborted")
            assert result.text == "The host stopped the call."
            # tasks/cancel reached the server, which cancelled the running tool.
            wait_until(ENDED.is_set, timeout=PROCESS_WAIT)
        finally:
            hub.close()


def test_the_deadline_cancels_the_task_and_answers_504():
    with leak_check(deadline=PROCESS_WAIT):
        hub = ToolHub(autoload=False, mcp_servers={"own": own_server(timeout=1.0)})
        try:
            result = Executor(hub.catalog()).execute_sync("hang", {})
            assert (result.status, result.code) == (504, "timeout")
            assert STARTED.is_set()
            wait_until(ENDED.is_set, timeout=PROCESS_WAIT)
        finally:
            hub.close()


# -- @modelcontextprotocol/server-everything ----------------------------------------------


def everything() -> dict[str, Any]:
    return {"command": peer(EVERYTHING), "args": ["stdio"]}


def test_server_everythings_task_required_tool_runs_to_completion(
    make_hub: Callable[..., ToolHub],
):
    with leak_check(deadline=PROCESS_WAIT):
        hub = make_hub(config={"mcp_servers": {"everything": everything()}})
        tools = {p.name: p for p in hub.providers_for_server("everything")}
        assert tools["simulate-research-query"].task_support == "required"
        assert [p for p in hub.problems() if p.item == "simulate-research-query"] == []
        result = Executor(hub.catalog()).execute_sync(
            "simulate-research-query", {"topic": "tide pools"}
        )
        assert not result.is_error, result
        assert "# Research Report: tide pools" in result.text
        hub.close()


def test_server_everythings_status_messages_reach_on_progress(
    make_hub: Callable[..., ToolHub],
):
    hub = make_hub(config={"mcp_servers": {"everything": everything()}})
    messages: list[str | None] = []
    context = ToolContext(on_progress=lambda _done, _total, message: messages.append(message))
    result = Executor(hub.catalog()).execute_sync(
        "simulate-research-query", {"topic": "tides"}, context=context
    )
    assert not result.is_error, result
    assert "Gathering sources..." in messages


def test_check_passes_server_everything(
    make_hub: Callable[..., ToolHub], capsys: pytest.CaptureFixture[str]
):
    hub = make_hub(config={"mcp_servers": {"everything": everything()}})
    assert run_cli(["check"], hub=hub) == 0, capsys.readouterr().out
