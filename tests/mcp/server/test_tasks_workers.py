"""The tasks extension over HTTP with ``--workers 2``: the SDK's client in its default mode.

Every request goes on a fresh connection, so either worker answers it: a task created by
one is polled, cancelled and answered through the other, from the SQLite store the
workers share; a worker killed mid-task leaves its task ``failed`` once its lease runs
out, while a finished task is still answered.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import time
from typing import Any

import anyio
import mcp_types as types
import pytest
import test_serve_http_workers
from mcp import Client
from mcp.client.extension import advertise
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict
from test_serve_http_workers import fresh_connections, serving

TASKS = "io.modelcontextprotocol/tasks"


class TaskRequest(types.Request[dict[str, Any], str]):
    """A ``tasks/*`` request (the SDK has no model of the extension's methods)."""

    method: str  # type: ignore[assignment]
    params: dict[str, Any]  # type: ignore[assignment]


class Answer(types.Result):
    """Any result: the fields as sent."""

    model_config = ConfigDict(extra="allow")


async def request(client: Client, method: str, **params: Any) -> dict[str, Any]:
    sent = TaskRequest(method=method, params=params)
    answer = await client.session.send_request(sent, Answer)
    return answer.model_dump(by_alias=True, exclude_none=True)


async def raw_call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    sent = TaskRequest(method="tools/call", params={"name": name, "arguments": arguments})
    answer = await client.session.send_request(sent, Answer)
    return answer.model_dump(by_alias=True, exclude_none=True)


async def until_status(client: Client, task_id: str, wanted: set[str], timeout: float) -> Any:
    """Poll ``tasks/get`` until the task's status is one of ``wanted`` (deadline: timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        task = await request(client, "tasks/get", taskId=task_id)
        if task["status"] in wanted:
            return task
        assert time.monotonic() < deadline, f"the task stayed {task['status']}"
        await anyio.sleep(0.1)


def tasks_client(url: str) -> Client:
    return Client(fresh_connections(url), extensions=[advertise(TASKS)])


async def test_a_required_task_runs_to_completion_and_another_is_cancelled(tmp_path: Any):
    store = f"sqlite:{tmp_path / 'tasks.db'}"
    args = ("--thinker", "tasks_fixture:Tasks", "--workers", "2", "--task-store", store)
    with serving(*args) as served:
        async with tasks_client(served.url) as client:
            assert client.protocol_version == "2026-07-28"
            created = await raw_call(client, "slow_pid", {"seconds": 1.0})
            assert created["resultType"] == "task"
            assert created["status"] == "working"
            done = await until_status(client, created["taskId"], {"completed"}, 30)
            assert done["result"]["isError"] is False
            assert done["result"]["content"][0]["text"].isdigit()

            running = await raw_call(client, "slow_pid", {"seconds": 120})
            ack = await request(client, "tasks/cancel", taskId=running["taskId"])
            assert ack == {"resultType": "complete"} or set(ack) <= {"resultType", "_meta"}
            ended = await until_status(client, running["taskId"], {"cancelled"}, 30)
            assert "result" not in ended
            again = await request(client, "tasks/cancel", taskId=running["taskId"])
            assert again.get("resultType") == "complete"
            final = await request(client, "tasks/get", taskId=running["taskId"])
            assert final["status"] == "cancelled"  # sticky


async def test_a_required_tool_refuses_a_client_without_the_extension():
    with serving("--thinker", "tasks_fixture:Tasks", "--workers", "2") as served:
        async with Client(fresh_connections(served.url)) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("slow_pid", {"seconds": 0})
            assert refused.value.error.code == -32021
            assert refused.value.error.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
            with pytest.raises(MCPError) as gated:
                await request(client, "tasks/get", taskId="anything")
            assert gated.value.error.code == -32021


async def test_an_unknown_task_is_32602(tmp_path: Any):
    with serving("--thinker", "tasks_fixture:Tasks", "--workers", "2") as served:
        async with tasks_client(served.url) as client:
            for method in ("tasks/get", "tasks/cancel"):
                with pytest.raises(MCPError) as unknown:
                    await request(client, method, taskId="no-such-task")
                assert unknown.value.error.code == -32602
                assert "no-such-task" not in unknown.value.error.message


async def test_a_killed_worker_leaves_its_task_failed_and_a_finished_one_answered(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
):
    store = f"sqlite:{tmp_path / 'tasks.db'}"
    args = ("--thinker", "tasks_fixture:Tasks", "--workers", "2", "--task-store", store)
    monkeypatch.setitem(test_serve_http_workers.ENV, "TOOLPALETTE_TASK_LEASE", "1.5")
    with serving(*args) as served:
        async with tasks_client(served.url) as client:
            finished = await raw_call(client, "slow_pid", {"seconds": 0.5})
            done = await until_status(client, finished["taskId"], {"completed"}, 30)
            survivor_text = done["result"]["content"][0]["text"]
            running = await raw_call(client, "slow_pid", {"seconds": 120})
            await until_status(client, running["taskId"], {"working"}, 5)
            victim = _runner_of(tmp_path / "tasks.db", running["taskId"])
            assert victim != served.process.pid
            os.kill(victim, signal.SIGKILL)
            failed = await until_status(client, running["taskId"], {"failed"}, 60)
            assert failed["error"]["code"] == -32603
            assert "stopped before it finished" in failed["error"]["message"]
            kept = await request(client, "tasks/get", taskId=finished["taskId"])
            assert kept["status"] == "completed"
            assert kept["result"]["content"][0]["text"] == survivor_text


def _runner_of(store: Any, task_id: str) -> int:
    """The pid of the worker running the task, as its record in the SQLite file says."""
    with contextlib.closing(sqlite3.connect(store)) as db:
        body = db.execute("SELECT body FROM tasks WHERE id = ?", (task_id,)).fetchone()[0]
    return int(json.loads(body)["worker"])
