"""Code mode over MCP: ``run_code`` served on both eras, its calls' approvals asked of the client.

A script's call that needs a person pauses the script: on the 2025-era protocols the
server elicits while the sandbox waits; on 2026-07-28 the request answers
``input_required`` whose sealed state carries the sandbox's snapshot, and the SDK's
client retries with the answer, which resumes the script at that call.
"""

from __future__ import annotations

import json
from typing import Any

import code_fixture as fx
import mcp_types as types
import pytest
import toolpalette.mcp
from mcp import Client
from toolpalette import ToolHub

pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")

ERAS = ["legacy", "auto"]


def answering(approve: bool, asked: list[str]) -> Any:
    async def answer(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": approve})

    return answer


@pytest.fixture(autouse=True)
def _clear() -> None:
    fx.RAN.clear()


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    assert data is not None
    assert json.loads(result.content[0].text) == data
    return dict(data)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_five_call_job_runs_in_one_run_code_each_call_on_the_ledger(mode: str) -> None:
    hub = ToolHub(autoload=False, config={})
    async with Client(toolpalette.mcp.server(hub, fx.Coder), mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert {"record_size", "add_up", "approved_pid", "run_code"} <= set(names)
        result = await client.call_tool("run_code", {"code": fx.FIVE_CALLS})
    data = structured(result)
    assert (data["result"], data["calls"]) == (10, 5)
    inner = [r for r in hub.grants() if r.parent is not None]
    assert [r.name for r in inner] == ["record_size"] * 4 + ["add_up"]
    assert len({r.call_id for r in inner}) == 5
    assert len({r.parent for r in inner}) == 1


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("approve", [True, False])
async def test_the_third_call_pauses_the_script_for_the_clients_user(
    mode: str, approve: bool
) -> None:
    hub = ToolHub(autoload=False, config={})
    asked: list[str] = []
    async with Client(
        toolpalette.mcp.server(hub, fx.Coder),
        mode=mode,
        elicitation_callback=answering(approve, asked),
    ) as client:
        assert (client.protocol_version == "2026-07-28") == (mode == "auto")
        result = await client.call_tool("run_code", {"code": fx.THIRD_ASKS})
    data = structured(result)
    _first, _second, third = data["result"]
    assert len(asked) == 1
    assert "approved_pid" in asked[0]
    if approve:
        assert isinstance(third, int)
        assert fx.RAN == ["size one", "size two", "approved three"]
    else:
        assert third.startswith("403 denied")
        assert fx.RAN == ["size one", "size two"]
    # resumed, not run again: each call before the pause ran once, the output kept
    assert data["printed"] == "after the third\n"
    assert data["calls"] == 3
    decision = "granted" if approve else "refused"
    inner = [(r.call_id, r.name, r.decision, r.reason) for r in hub.grants() if r.parent]
    ids = [call_id for call_id, *_ in inner]
    assert inner == [
        (ids[0], "record_size", "granted", "run_code: ok"),
        (ids[1], "record_size", "granted", "run_code: ok"),
        (ids[2], "approved_pid", decision, "a person's decision"),
        (ids[2], "approved_pid", decision, "run_code: " + ("ok" if approve else "403 denied")),
    ]
    assert ids[2].endswith(".3")


async def test_one_approval_covers_one_call_on_2026() -> None:
    hub = ToolHub(autoload=False, config={})
    asked: list[str] = []
    code = "[approved_pid(note='a'), approved_pid(note='b')]"
    async with Client(
        toolpalette.mcp.server(hub, fx.Coder), elicitation_callback=answering(True, asked)
    ) as client:
        result = await client.call_tool("run_code", {"code": code})
    assert len(structured(result)["result"]) == 2
    assert len(asked) == 2
    assert fx.RAN == ["approved a", "approved b"]
