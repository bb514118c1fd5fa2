"""A stopping server closes its tasks extension: its running tasks end ``failed`` at once.

In process (the SDK's in-memory client, each store): when the last client leaves, the
task still running is failed with "The server stopped...", its tool is stopped, and
nothing is left behind (``LeakCheck``: tasks, threads, descriptors); a server that
serves again reopens its store. Over HTTP, ``serve --workers 2`` stopped by SIGTERM
leaves its task failed the same way in the SQLite file, not ``working`` until a lease.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import tasks_fixture
from mcp import Client
from mcp.client.extension import advertise
from redis_fixture import running_redis
from test_serve_http_workers import serving
from test_tasks_workers import TASKS, raw_call, request, tasks_client, until_status
from toolpalette import ToolHub
from toolpalette.mcp import (
    MemoryTaskStore,
    SqliteTaskStore,
    TaskSettings,
    TaskStore,
    server,
    task_store,
)
from toolpalette.testing import LeakCheck

STOPPED = "The server stopped before this task finished; call the tool again."


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with running_redis() as url:
        yield url


def _store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> TaskStore:
    if kind == "memory":
        return MemoryTaskStore()
    if kind == "sqlite":
        return SqliteTaskStore(tmp_path / "tasks.db")
    return task_store(request.getfixturevalue("redis_url"))


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_the_last_client_leaving_fails_the_running_task_and_leaves_nothing(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
):
    store = _store(kind, tmp_path, request)
    palette = server(ToolHub(autoload=False), tasks_fixture.Tasks, tasks=TaskSettings(store))
    async with LeakCheck():
        async with Client(palette, extensions=[advertise(TASKS)]) as client:
            created = await raw_call(client, "slow_pid", {"seconds": 120})
            assert created["resultType"] == "task"
            await until_status(client, created["taskId"], {"working"}, 5)
        # The client left: the server stopped; its store is closed, its call ended.
        found = await store.load(created["taskId"])  # a closed store opens again
        await store.close()
    assert found is not None
    record = found[0]
    assert record["status"] == "failed"
    assert record["error"] == {"code": -32603, "message": STOPPED}
    assert "result" not in record


async def test_a_server_that_serves_again_reopens_its_store(redis_url: str):
    store = task_store(redis_url)
    palette = server(ToolHub(autoload=False), tasks_fixture.Tasks, tasks=TaskSettings(store))
    async with LeakCheck():
        for _ in range(2):
            async with Client(palette, extensions=[advertise(TASKS)]) as client:
                created = await raw_call(client, "slow_pid", {"seconds": 0.5})
                done = await until_status(client, created["taskId"], {"completed"}, 30)
                assert done["result"]["isError"] is False


async def test_a_client_leaving_while_another_serves_keeps_the_task(tmp_path: Path):
    settings = TaskSettings(SqliteTaskStore(tmp_path / "tasks.db"))
    palette = server(ToolHub(autoload=False), tasks_fixture.Tasks, tasks=settings)
    async with LeakCheck():
        async with Client(palette, extensions=[advertise(TASKS)]) as staying:
            async with Client(palette, extensions=[advertise(TASKS)]) as leaving:
                created = await raw_call(leaving, "slow_pid", {"seconds": 1})
            done = await until_status(staying, created["taskId"], {"completed"}, 30)
            assert done["result"]["content"][0]["text"].isdigit()


async def test_sigterm_fails_the_running_task_at_once_over_http(tmp_path: Path):
    db = tmp_path / "tasks.db"
    args = ("--thinker", "tasks_fixture:Tasks", "--workers", "2", "--task-store", f"sqlite:{db}")
    with serving(*args) as served:
        async with tasks_client(served.url) as client:
            created = await raw_call(client, "slow_pid", {"seconds": 120})
            await until_status(client, created["taskId"], {"working"}, 5)
    # serving() ended the server with SIGTERM and waited for every worker to exit.
    with contextlib.closing(sqlite3.connect(db)) as opened:
        row = opened.execute("SELECT body FROM tasks WHERE id = ?", (created["taskId"],))
        record = json.loads(row.fetchone()[0])
    assert record["status"] == "failed"
    assert record["error"]["message"] == STOPPED  # not the lost worker's, after its lease
    with serving(*args) as served:  # the same store, a new server: the failure is answered
        async with tasks_client(served.url) as client:
            task = await request(client, "tasks/get", taskId=created["taskId"])
    assert task["status"] == "failed"
    assert task["error"] == {"code": -32603, "message": STOPPED}
