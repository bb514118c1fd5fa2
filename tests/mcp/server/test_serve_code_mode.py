"""``toolpalette serve`` in code mode, as real processes: over stdio, and two HTTP workers.

The SDK's client in its default mode (2026-07-28) runs a five-call job in one
``run_code``; over ``--http --workers 2`` a script whose third call needs a person is
paused by one worker (its snapshot in the sealed request state) and resumed by
whichever worker the client's retry reaches, the other one included.
"""

from __future__ import annotations

from typing import Any

import code_fixture as fx
import mcp_types as types
import pytest
from mcp import Client
from test_serve_http_workers import fresh_connections, serving
from test_stdio_and_http import stdio
from toolpalette.testing import leak_check

pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")

PAUSED_AT = """
pid = record_size(name="before")["pid"]
print("paused by", pid)
approved_pid(note="third")
"""


async def approve(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approve": True})


async def test_a_default_client_runs_a_five_call_job_in_one_run_code_over_stdio() -> None:
    async with leak_check(deadline=10):
        async with Client(stdio("--thinker", "code_fixture:Coder")) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("run_code", {"code": fx.FIVE_CALLS})
            paused = await client.call_tool("run_code", {"code": fx.THIRD_ASKS})
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    assert (result.structured_content["result"], result.structured_content["calls"]) == (10, 5)
    # without an elicitation callback the client cannot be asked: a 403 inside the script,
    # saying that no person could be asked (not that one said no)
    assert paused.structured_content is not None
    refused = paused.structured_content["result"][2]
    assert refused.startswith("403 approval_required")
    assert "none could be asked" in refused


async def test_two_workers_run_a_five_call_job_and_resume_a_paused_script_elsewhere() -> None:
    with serving("--thinker", "code_fixture:Coder", "--workers", "2") as served:
        async with Client(fresh_connections(served.url), elicitation_callback=approve) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("run_code", {"code": fx.FIVE_CALLS})
            assert result.structured_content is not None
            assert result.structured_content["result"] == 10
            assert result.structured_content["calls"] == 5
            pairs: set[tuple[int, int]] = set()
            for _ in range(30):  # until a retry has reached the worker that did not pause
                resumed = await client.call_tool("run_code", {"code": PAUSED_AT})
                assert not resumed.is_error, resumed.content[0].text
                data = resumed.structured_content
                assert data is not None
                assert data["calls"] == 2
                paused_by = int(data["printed"].split()[-1])
                pairs.add((paused_by, int(data["result"])))
                if any(a != b for a, b in pairs):
                    break
    assert any(paused_by != resumed_by for paused_by, resumed_by in pairs)
    assert served.process.pid not in {pid for pair in pairs for pid in pair}


async def test_code_mode_turns_on_any_served_thinker() -> None:
    params = stdio("--thinker", "worker_fixture:Workers", "--code-mode")
    async with leak_check(deadline=10):
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("run_code", {"code": "[worker_pid(), worker_pid()]"})
    assert "run_code" in names
    assert result.structured_content is not None
    first, second = result.structured_content["result"]
    assert first == second
    assert isinstance(first, int)
