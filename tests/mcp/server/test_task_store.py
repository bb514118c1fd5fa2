"""The task stores (memory, SQLite, Redis) and the task book's rules over each.

The Redis tests use a real ``redis-server`` on 127.0.0.1 (``redis_fixture``: the one
``python -m nox`` provides, or on PATH; skipped, saying why, without one).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from redis_fixture import running_redis
from toolpalette.mcp._task_store import (
    MemoryTaskStore,
    SqliteTaskStore,
    TaskStore,
    task_store,
)
from toolpalette.mcp._tasks import TaskBook, TaskSettings, wire_task


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with running_redis() as url:
        yield url


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    if request.param == "memory":
        made: TaskStore = MemoryTaskStore()
    elif request.param == "sqlite":
        made = SqliteTaskStore(tmp_path / "tasks.db")
    else:
        made = task_store(request.getfixturevalue("redis_url"))
    yield made
    await made.close()


async def test_a_record_is_replaced_only_at_the_version_read(store: TaskStore) -> None:
    await store.create("t1", {"n": 1}, time.time() + 60)
    found = await store.load("t1")
    assert found == ({"n": 1}, 1)
    assert await store.replace("t1", {"n": 2}, 1, time.time() + 60)
    assert not await store.replace("t1", {"n": 3}, 1, time.time() + 60)  # stale version
    assert await store.load("t1") == ({"n": 2}, 2)
    assert await store.load("nope") is None


async def test_an_expired_record_is_gone(store: TaskStore) -> None:
    await store.create("old", {"n": 1}, time.time() + 0.3)
    assert await store.load("old") is not None
    deadline = time.monotonic() + 10
    while await store.load("old") is not None:
        assert time.monotonic() < deadline, "the record outlived its expiry"
        await asyncio.sleep(0.05)


async def test_a_task_is_bound_to_its_principal(store: TaskStore) -> None:
    book = TaskBook(TaskSettings(store))
    record = await book.create("alice", time.time())
    assert (await book.read(record["taskId"], "alice"))["status"] == "working"
    with pytest.raises(MCPError) as other:
        await book.read(record["taskId"], "mallory")
    with pytest.raises(MCPError) as unknown:
        await book.read("no-such-task", "alice")
    assert other.value.error.code == unknown.value.error.code == -32602
    assert other.value.error.message == unknown.value.error.message


async def test_a_lapsed_lease_fails_the_task_and_a_finished_one_stays(store: TaskStore) -> None:
    book = TaskBook(TaskSettings(store, lease=0.5))
    running = await book.create("me", time.time())
    finished = await book.create("me", time.time())
    await book.finish(finished["taskId"], "completed", "result", {"content": []})
    deadline = time.monotonic() + 10
    while (await book.read(running["taskId"], "me"))["status"] != "failed":
        assert time.monotonic() < deadline, "the task stayed working"
        await asyncio.sleep(0.1)
    failed = wire_task(await book.read(running["taskId"], "me"), book.settings)
    assert failed["error"]["code"] == -32603
    assert "result" not in failed
    kept = wire_task(await book.read(finished["taskId"], "me"), book.settings)
    assert kept["status"] == "completed"
    assert kept["result"] == {"content": []}


async def test_a_cancelled_task_stays_cancelled(store: TaskStore) -> None:
    book = TaskBook(TaskSettings(store))
    record = await book.create("me", time.time())

    def cancel(found: dict[str, Any]) -> dict[str, Any]:
        found["status"] = "cancelled"
        return found

    await book.change(record["taskId"], cancel)
    await book.finish(record["taskId"], "completed", "result", {"content": []})
    assert (await book.read(record["taskId"], "me"))["status"] == "cancelled"


def test_a_bad_store_spec_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="memory, sqlite:PATH or redis://"):
        task_store("mongodb://x")
    with pytest.raises(ValueError, match="needs a path"):
        task_store("sqlite:")
    with pytest.raises(ValueError, match="out of range"):
        TaskSettings(ttl_ms=5)


def test_task_ids_are_unguessable_and_distinct() -> None:
    book = TaskBook(TaskSettings())
    ids = {asyncio.run(book.create("me", time.time()))["taskId"] for _ in range(50)}
    assert len(ids) == 50
    assert all(len(task_id) >= 32 for task_id in ids)
