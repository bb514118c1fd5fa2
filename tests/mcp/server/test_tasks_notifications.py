"""Task status notifications (``notifications/tasks``) on a ``subscriptions/listen`` stream.

Raw HTTP against ``toolpalette serve --http``, one worker and two: the SDK's client has no
model of these notifications, so the stream's SSE events are read as they come.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from test_serve_http_workers import serving
from toolpalette.testing import LeakCheck

TASKS = "io.modelcontextprotocol/tasks"
VERSION = "2026-07-28"


def _body(method: str, request_id: int, params: dict[str, Any], tasks: bool) -> dict[str, Any]:
    extensions = {"extensions": {TASKS: {}}} if tasks else {}
    meta = {
        types.PROTOCOL_VERSION_META_KEY: VERSION,
        types.CLIENT_CAPABILITIES_META_KEY: {"elicitation": {}, **extensions},
    }
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": meta},
    }


def _headers(method: str, name: str | None) -> dict[str, str]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def _name(method: str, params: dict[str, Any]) -> str | None:
    if method == "tools/call":
        return str(params["name"])
    return params.get("taskId")


async def _messages(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of a response: one JSON body, or SSE ``data:`` events."""
    if response.headers.get("content-type", "").startswith("application/json"):
        yield json.loads(await response.aread())
        return
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []


async def _request(url: str, method: str, tasks: bool = True, **params: Any) -> dict[str, Any]:
    """One request on a fresh connection (either worker answers it): its response."""
    async with httpx2.AsyncClient(timeout=30) as http:
        body = _body(method, 1, params, tasks)
        async with http.stream(
            "POST", url, json=body, headers=_headers(method, _name(method, params))
        ) as response:
            async for message in _messages(response):
                if "id" in message:
                    return message
    raise AssertionError(f"no response to {method}")


@contextlib.asynccontextmanager
async def _listening(url: str, task_ids: list[str], tasks: bool = True) -> AsyncIterator[Any]:
    """A listen stream for ``task_ids``: yields its message iterator (the ack read first)."""
    async with httpx2.AsyncClient(timeout=30) as http:
        body = _body("subscriptions/listen", 7, {"notifications": {"taskIds": task_ids}}, tasks)
        headers = _headers("subscriptions/listen", None)
        async with http.stream("POST", url, json=body, headers=headers) as response:
            yield _messages(response)


async def _until_ended(
    stream: AsyncIterator[dict[str, Any]], url: str, timeout: float
) -> list[dict[str, Any]]:
    """The ``notifications/tasks`` params until a terminal one (answering input requests)."""
    seen: list[dict[str, Any]] = []
    answered: set[str] = set()
    with anyio.fail_after(timeout):
        async for message in stream:
            assert message.get("method") == "notifications/tasks", message
            task = message["params"]
            assert task["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
            seen.append(task)
            for key in set(task.get("inputRequests", {})) - answered:
                answered.add(key)
                answers = {key: {"action": "accept", "content": {"name": "Ada"}}}
                done = await _request(
                    url, "tasks/update", taskId=task["taskId"], inputResponses=answers
                )
                assert done["result"]["resultType"] == "complete", done
            if task["status"] in {"completed", "failed", "cancelled"}:
                return seen
    raise AssertionError("the stream ended before the task")


async def _created(url: str) -> str:
    created = await _request(url, "tools/call", name="staged_greet", arguments={})
    assert created["result"]["resultType"] == "task", created
    return str(created["result"]["taskId"])


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_a_listener_hears_its_task_through_input_and_progress_to_its_result(
    workers: str, tmp_path: Path
):
    store = f"sqlite:{tmp_path / 'tasks.db'}"
    args = ("--thinker", "tasks_fixture:Tasks", "--workers", workers, "--task-store", store)
    async with LeakCheck():
        with serving(*args) as served:
            task_id = await _created(served.url)
            async with _listening(served.url, [task_id, "no-such-task"]) as stream:
                ack = await stream.__anext__()
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                assert ack["params"]["notifications"]["taskIds"] == [task_id]
                seen = await _until_ended(stream, served.url, timeout=60)
            statuses = [task["status"] for task in seen]
            assert "input_required" in statuses
            assert statuses[-1] == "completed"
            final = seen[-1]
            assert final["result"]["content"][0]["text"].startswith("hello Ada from ")
            assert final["statusMessage"] == "warming up (1/2)"  # the tool's progress
            asked = next(t for t in seen if t["status"] == "input_required")
            assert [r["method"] for r in asked["inputRequests"].values()] == ["elicitation/create"]
            got = await _request(served.url, "tasks/get", taskId=task_id)
            assert got["result"]["status"] == "completed"


async def test_a_listener_without_the_extension_is_refused_task_ids(tmp_path: Path):
    async with LeakCheck():
        with serving("--thinker", "tasks_fixture:Tasks") as served:
            task_id = await _created(served.url)
            async with _listening(served.url, [task_id], tasks=False) as stream:
                refused = await stream.__anext__()
            assert refused["error"]["code"] == types.MISSING_REQUIRED_CLIENT_CAPABILITY
            deadline = time.monotonic() + 30
            while (await _request(served.url, "tasks/get", taskId=task_id))["result"][
                "status"
            ] == "working":
                assert time.monotonic() < deadline
                await anyio.sleep(0.1)
