"""Tasks as a client meets them: bound to a JWT principal over HTTP, and over stdio.

Over ``serve --http`` with authorization (one worker and two), a task is its creator's:
another principal's ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` are -32602, the
same answer as an unknown id, while the creator's next token (same subject) reaches it.
Over ``serve`` on stdio (the memory store), the SDK's client in its default mode runs a
task-required tool to completion and cancels another.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from auth_fixture import AUDIENCE, ISSUER, Issuer
from mcp import Client, StdioServerParameters
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from test_serve_http_workers import ENV, serving
from test_tasks_workers import TASKS, raw_call, request, until_status
from toolpalette.testing import leak_check

CONFIG = f"""\
[serve]
auth_audience = "{AUDIENCE}"
auth_public_key_file = "issuer.pem"
"""


def _authorized(url: str, token: str) -> Client:
    """A tasks client whose every request, on a fresh connection, carries ``token``."""
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        limits=httpx2.Limits(max_keepalive_connections=0),
        timeout=30,
    )
    return Client(streamable_http_client(url, http_client=http), extensions=[advertise(TASKS)])


async def _refused(client: Client, method: str, **params: Any) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await request(client, method, **params)
    return refused.value


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_another_principal_meets_a_task_as_an_unknown_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
):
    issuer = Issuer()
    issuer.pem(tmp_path / "issuer.pem")
    (tmp_path / "toolpalette.toml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    args = ["--thinker", "tasks_fixture:Tasks", "--auth-issuer", ISSUER, "--workers", workers]
    with serving(*args) as served:
        async with _authorized(served.url, issuer.token("alice")) as alice:
            created = await raw_call(alice, "slow_pid", {"seconds": 120})
            assert created["resultType"] == "task"
            task_id = created["taskId"]
        async with _authorized(served.url, issuer.token("mallory")) as mallory:
            unknown = await _refused(mallory, "tasks/get", taskId="no-such-task")
            assert unknown.error.code == -32602
            for method, extra in (
                ("tasks/get", {}),
                ("tasks/update", {"inputResponses": {}}),
                ("tasks/cancel", {}),
            ):
                other = await _refused(mallory, method, taskId=task_id, **extra)
                assert (other.error.code, other.error.message) == (
                    unknown.error.code,
                    unknown.error.message,
                ), method
        async with _authorized(served.url, issuer.token("alice")) as alice_again:
            task = await request(alice_again, "tasks/get", taskId=task_id)
            assert task["status"] == "working"  # mallory's cancel did not reach it
            await request(alice_again, "tasks/cancel", taskId=task_id)
            ended = await until_status(alice_again, task_id, {"cancelled"}, 30)
            assert ended["statusMessage"] == "The client cancelled the task."


def _stdio() -> StdioServerParameters:
    code = "import sys; from toolpalette._cli import main; sys.exit(main())"
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", code, "serve", "--thinker", "tasks_fixture:Tasks"],
        env={**ENV, "TOOLPALETTE_TASK_STORE": "memory"},
    )


async def test_over_stdio_a_required_task_completes_and_another_is_cancelled():
    async with (
        leak_check(deadline=10),
        Client(_stdio(), extensions=[advertise(TASKS)]) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"slow_pid", "worker_pid"} <= tools
        created = await raw_call(client, "slow_pid", {"seconds": 1.0})
        assert created["resultType"] == "task"
        done = await until_status(client, created["taskId"], {"completed"}, 30)
        assert done["result"]["isError"] is False
        server_pid = int(done["result"]["content"][0]["text"])
        assert server_pid != os.getpid()

        running = await raw_call(client, "slow_pid", {"seconds": 120})
        assert running["status"] == "working"
        await request(client, "tasks/cancel", taskId=running["taskId"])
        ended = await until_status(client, running["taskId"], {"cancelled"}, 30)
        assert "result" not in ended
        direct = await client.call_tool("worker_pid", {})  # the server still serves
        assert direct.content[0].text == str(server_pid)


async def test_over_stdio_a_client_without_the_extension_is_refused_the_required_tool():
    async with Client(_stdio()) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("slow_pid", {"seconds": 0})
        assert refused.value.error.code == -32021
