"""An approval shows the person the whole call, is recorded as it happened, and is used once.

A palette under uvicorn asks about every ``transfer``; the SDK's client answers, on both
protocol eras. A padded argument cannot push another out of the form, a form too large
to show whole is refused, a client that cannot be asked is told so (not "not approved"),
and a sealed answer replayed adds nothing to the ledger.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import palette_fixture as fx
import pytest
import toolpalette.mcp
from mcp.shared.exceptions import MCPError
from mcp_server_fixture import client, serving
from toolpalette import Thinker, ToolHub, ToolPolicy, ToolSelector, tool

ERAS = ["legacy", "auto"]
SENT: list[dict[str, Any]] = []


@tool(destructive=True)
def transfer(memo: str, to_account: str, amount: int) -> str:
    """Move money to an account."""
    SENT.append({"to_account": to_account, "amount": amount})
    return "sent"


def _bulk() -> Any:
    names = [f"field_{i:02d}" for i in range(48)]
    source = f"def bulk({', '.join(f'{n}: str' for n in names)}) -> str:\n"
    source += '    """Store many fields."""\n    return "stored"\n'
    space: dict[str, Any] = {}
    exec(source, space)
    return tool(destructive=True)(space["bulk"])


bulk = _bulk()


class Bank(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(transfer).tool(bulk)

    def __init__(self, hub: Any, conversation: Any = None, **options: Any) -> None:
        options["policy"] = ToolPolicy(ask=["transfer", "bulk"])
        super().__init__(hub, conversation, **options)


def answering(asked: list[str], approve: bool = True) -> Any:
    async def answer(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": approve})

    return answer


def ledger(hub: ToolHub, name: str) -> list[tuple[str, str, str]]:
    return [(r.kind, r.decision, r.reason) for r in hub.grants() if r.name == name]


@pytest.fixture(autouse=True)
def _clear() -> None:
    SENT.clear()
    fx.WIPED.clear()


@pytest.mark.parametrize("mode", ERAS)
async def test_a_padded_argument_cannot_hide_the_others(mode: str) -> None:
    asked: list[str] = []
    padding = "Routine payment. " + "x" * 5000
    arguments = {"memo": padding, "to_account": "ATTACKER-0042", "amount": 9999}
    async with serving(toolpalette.mcp.asgi_app(ToolHub(), Bank)) as base:
        async with client(base, mode=mode, elicitation_callback=answering(asked)) as connected:
            result = await connected.call_tool("transfer", arguments)
    assert not result.is_error, result
    assert SENT == [{"to_account": "ATTACKER-0042", "amount": 9999}]
    [shown] = asked
    lines = shown.splitlines()
    assert lines[2:] == [
        "  amount: 9999",
        lines[3],
        '  to_account: "ATTACKER-0042"',
    ]  # every argument, by name
    assert lines[3].startswith('  memo: "Routine payment. xxx')
    assert "5,019 characters" in lines[3]  # the JSON text of the value: quotes included
    assert lines[3].endswith('xxx"')
    assert len(shown) < 1000


@pytest.mark.parametrize("mode", ERAS)
async def test_a_form_too_large_to_show_whole_is_refused_and_recorded(mode: str) -> None:
    asked: list[str] = []
    hub = ToolHub()
    arguments = {f"field_{i:02d}": "v" * 400 for i in range(48)}
    async with serving(toolpalette.mcp.asgi_app(hub, Bank)) as base:
        async with client(base, mode=mode, elicitation_callback=answering(asked)) as connected:
            result = await connected.call_tool("bulk", arguments)
    assert result.is_error
    assert "too large to show a person whole" in result.content[0].text
    assert asked == []  # nobody was shown a part of it
    [record] = ledger(hub, "bulk")
    assert record[:2] == ("call", "refused")
    assert "too large" in record[2]


async def test_a_client_that_cannot_be_asked_here_is_told_why_and_it_is_recorded() -> None:
    # A 2025-era client declaring elicitation, served stateless (as --workers 2 serves).
    asked: list[str] = []
    hub = ToolHub()
    app = toolpalette.mcp.asgi_app(hub, fx.Palette, stateless=True)
    async with serving(app) as base:
        answer = answering(asked)
        async with client(base, mode="legacy", elicitation_callback=answer) as connected:
            result = await connected.call_tool("wipe_table", {"table": "orders"})
    assert result.is_error
    text = result.content[0].text
    assert "was not approved" not in text  # that is a person's "no"
    assert "could be asked on this connection" in text
    assert "stateful" in text
    assert "2026-07-28" in text
    assert asked == []
    assert fx.WIPED == []
    reasons = [reason for _, decision, reason in ledger(hub, "wipe_table") if decision == "refused"]
    assert reasons
    assert all("could be asked on this connection" in reason for reason in reasons)


async def test_a_2026_call_put_to_a_person_is_recorded_as_asked_with_the_answer() -> None:
    asked: list[str] = []
    hub = ToolHub()
    async with serving(toolpalette.mcp.asgi_app(hub, fx.Palette, stateless=True)) as base:
        async with client(base, elicitation_callback=answering(asked)) as connected:
            assert connected.protocol_version == "2026-07-28"
            result = await connected.call_tool("wipe_table", {"table": "orders"})
    assert not result.is_error
    assert len(asked) == 1
    reasons = [reason for _, _, reason in ledger(hub, "wipe_table")]
    assert not any("no person could be asked" in reason for reason in reasons), reasons
    assert ("call", "granted", "a person's decision") in ledger(hub, "wipe_table")
    assert any("asked the client's user" in reason for reason in reasons)


async def test_a_replayed_sealed_answer_records_nothing_new_and_runs_nothing() -> None:
    hub = ToolHub()
    arguments = {"table": "orders"}
    yes = {"approval": types.ElicitResult(action="accept", content={"approve": True})}
    async with serving(toolpalette.mcp.asgi_app(hub, fx.Palette, stateless=True)) as base:
        async with client(base, elicitation_callback=answering([])) as connected:
            session = connected.session
            first = await session.call_tool("wipe_table", arguments, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            sealed = first.request_state

            async def retry() -> Any:
                return await session.call_tool(
                    "wipe_table",
                    arguments,
                    input_responses=yes,
                    request_state=sealed,
                    allow_input_required=True,
                )

            done = await retry()
            assert isinstance(done, types.CallToolResult)
            assert not done.is_error
            kept = ledger(hub, "wipe_table")
            for _ in range(3):
                with pytest.raises(MCPError, match="already answered"):
                    await retry()
            await asyncio.sleep(0)
    assert fx.WIPED == ["orders"]
    assert ledger(hub, "wipe_table") == kept
