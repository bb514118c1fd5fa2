"""The host guide's "Long-running tools" app runs as written, under uvicorn with two workers.

Its ``long_tasks.py`` is served from a temporary folder on 127.0.0.1; the SDK's client,
on a fresh connection per request (either worker answers), gets a 4-day report as a
task it polls to completion, and a 0-day one directly; the guide names public names only.
"""

from __future__ import annotations

import ast
import asyncio
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "long-running-tools.md"
EXAMPLE = re.compile(r"^```python\n# file: long_tasks\.py\n(.*?)^```", re.MULTILINE | re.DOTALL)
TASKS = "io.modelcontextprotocol/tasks"


def _example() -> str:
    found = EXAMPLE.search(GUIDE.read_text(encoding="utf-8"))
    assert found, "the guide lost its long_tasks.py example"
    return found.group(1)


def test_the_example_imports_public_names_only() -> None:
    tree = ast.parse(_example())
    modules = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert "toolpalette.mcp" in modules
    assert not [m for m in modules if m and any(p.startswith("_") for p in m.split("."))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/")
        connection.getresponse().read()
    except OSError:
        return False
    finally:
        connection.close()
    return True


async def test_the_long_tasks_example_serves_a_task_and_a_direct_answer(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the example needs the mcp extra")
    import httpx2
    import mcp_types as types
    from mcp import Client
    from mcp.client.extension import advertise
    from mcp.client.streamable_http import streamable_http_client
    from pydantic import ConfigDict
    from toolpalette.testing import wait_until

    class Sent(types.Request[dict[str, Any], str]):
        method: str  # type: ignore[assignment]
        params: dict[str, Any]  # type: ignore[assignment]

    class Answer(types.Result):
        model_config = ConfigDict(extra="allow")

    async def send(client: Client, method: str, **params: Any) -> dict[str, Any]:
        answer = await client.session.send_request(Sent(method=method, params=params), Answer)
        return answer.model_dump(by_alias=True, exclude_none=True)

    (tmp_path / "long_tasks.py").write_text(_example(), encoding="utf-8")
    port = _free_port()
    command = [sys.executable, "-m", "uvicorn", "long_tasks:app", "--host", "127.0.0.1"]
    process = subprocess.Popen(
        [*command, "--port", str(port), "--workers", "2", "--log-level", "warning"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: process.poll() is not None or _answers(port),
            timeout=60,
            message="the example's app answers",
        )
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        http = httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0))
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
        async with Client(transport, extensions=[advertise(TASKS)]) as client:
            created = await send(client, "tools/call", name="build_report", arguments={"days": 4})
            assert created["resultType"] == "task"
            deadline = time.monotonic() + 60
            task = created
            while task["status"] != "completed":
                assert task["status"] == "working"
                assert time.monotonic() < deadline, "the report stayed working"
                await asyncio.sleep(task["pollIntervalMs"] / 1000)
                task = await send(client, "tasks/get", taskId=created["taskId"])
            assert task["result"]["content"][0]["text"] == "report over 4 days"
            assert task["ttlMs"] == 15 * 60_000
            direct = await send(client, "tools/call", name="build_report", arguments={"days": 0})
            assert direct.get("resultType") != "task"
            assert direct["content"][0]["text"] == "report over 0 days"
        assert (tmp_path / "reports-tasks.db").is_file()
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)
        if process.stderr is not None:
            process.stderr.close()
