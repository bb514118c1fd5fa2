"""A tool's context talks to the MCP client: log lines, elicitation, sampling, roots.

On the 2025-era protocols each is the client's own request (or ``notifications/message``,
under ``logging/setLevel``), sent within the ``tools/call``; on 2026-07-28 each question
is an ``input_required`` answer with sealed state, the call re-run with every answer
given so far, and log lines go out only at the level the request's ``_meta`` asks for.
The SDK's client drives both through its callbacks. A client without the capability
gets the tool's own ``ClientRequestError``, never a hang.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
import talking_fixture as fx
import toolpalette.mcp
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from toolpalette import ToolHub
from toolpalette.testing import leak_check

ERAS = ["legacy", "auto"]


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False)


class Peer:
    """The client's side: what it was asked, what it answers."""

    def __init__(self, name: str = "Ada") -> None:
        self.names = itertools.cycle([name, "Lovelace"])
        self.asked: list[str] = []
        self.lines: list[tuple[str, Any]] = []

    async def elicit(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": next(self.names)})

    async def sample(
        self, ctx: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        text = content.text if isinstance(content, types.TextContent) else "?"
        self.asked.append(f"sample: {text} ({params.max_tokens})")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=text.upper()),
            model="fake-model",
        )

    async def roots(self, ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri="file:///work/project", name="project")]  # type: ignore[arg-type]
        )

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.lines.append((params.level, params.data))


@asynccontextmanager
async def connect(
    hub: ToolHub, mode: str, peer: Peer | None, **options: Any
) -> AsyncIterator[Client]:
    if peer is not None:
        options.update(
            elicitation_callback=peer.elicit,
            sampling_callback=peer.sample,
            list_roots_callback=peer.roots,
            logging_callback=peer.log,
        )
    async with Client(toolpalette.mcp.server(hub, fx.Talking), mode=mode, **options) as client:
        yield client


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ERAS)
async def test_an_elicitation_is_answered(hub: ToolHub, mode: str):
    peer = Peer()
    async with connect(hub, mode, peer) as client:
        result = await client.call_tool("greet", {})
    assert text(result) == "hello Ada"
    assert peer.asked == ["What is your name?"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_sampling_is_answered(hub: ToolHub, mode: str):
    peer = Peer()
    async with connect(hub, mode, peer) as client:
        result = await client.call_tool("summarize", {"text": "a long story"})
    assert text(result) == "fake-model: SUMMARIZE: A LONG STORY"
    assert peer.asked == ["sample: Summarize: a long story (50)"]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_roots_are_listed(hub: ToolHub, mode: str):
    async with connect(hub, mode, Peer()) as client:
        result = await client.call_tool("show_roots", {})
    assert text(result) == "project=file:///work/project"


@pytest.mark.parametrize("mode", ERAS)
async def test_three_questions_in_a_row_each_get_their_answer(hub: ToolHub, mode: str):
    peer = Peer()
    async with connect(hub, mode, peer) as client:
        result = await client.call_tool("interview", {})
    assert text(result) == "Ada Lovelace / ADA LOVELACE"
    # Each question is asked once: a 2026-era re-run meets the answers it already has.
    assert peer.asked == ["First name?", "Last name?", "sample: Ada Lovelace (10)"]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("greet", {}, "no way to ask: unsupported"),
        ("summarize", {"text": "x"}, "no way to sample: unsupported"),
        ("show_roots", {}, "no roots: unsupported"),
    ],
)
async def test_a_client_without_the_capability_gets_the_tools_own_error(
    hub: ToolHub, mode: str, tool: str, arguments: dict[str, Any], expected: str
):
    async with leak_check(deadline=10):
        async with connect(hub, mode, None) as client:
            result = await client.call_tool(tool, arguments)
    assert text(result) == expected


async def test_a_2025_client_gets_the_log_lines_from_the_level_it_set(hub: ToolHub):
    peer = Peer()
    async with connect(hub, "legacy", peer) as client:
        await client.call_tool("log_steps", {"steps": 2})
        assert peer.lines == [
            ("info", {"message": "step 1 of 2", "data": {"step": 1}}),
            ("info", {"message": "step 2 of 2", "data": {"step": 2}}),
            ("debug", "all steps done"),
        ]
        peer.lines.clear()
        with pytest.warns(MCPDeprecationWarning):  # SEP-2577; the 2025 era still has it
            await client.set_logging_level("info")
        result = await client.call_tool("log_steps", {"steps": 1})
    assert text(result) == "1 steps"
    assert peer.lines == [("info", {"message": "step 1 of 1", "data": {"step": 1}})]


async def test_a_2026_client_gets_log_lines_only_when_its_request_asks(hub: ToolHub):
    peer = Peer()
    async with connect(hub, "auto", peer) as client:
        result = await client.call_tool("log_steps", {"steps": 1})
    assert text(result) == "1 steps"
    assert peer.lines == []
    async with connect(hub, "auto", peer, log_level="info") as client:
        await client.call_tool("log_steps", {"steps": 1})
    assert peer.lines == [("info", {"message": "step 1 of 1", "data": {"step": 1}})]


async def test_a_2026_question_is_input_required_with_sealed_state_and_a_forged_one_is_refused(
    hub: ToolHub,
):
    async with connect(hub, "auto", Peer()) as client:
        first = await client.session.call_tool("interview", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests or {}) == ["elicitation-1"]
        state = first.request_state or ""
        assert state
        assert "toolpalette" not in state  # sealed: nothing readable
        answer = {"action": "accept", "content": {"name": "Ada"}}
        second = await client.session.call_tool(
            "interview",
            {},
            input_responses={"elicitation-1": answer},  # type: ignore[dict-item]
            request_state=state,
            allow_input_required=True,
        )
        assert isinstance(second, types.InputRequiredResult)
        assert list(second.input_requests or {}) == ["elicitation-2"]
        # The same answers without a state this server sealed answer nothing.
        with pytest.raises(MCPError):
            await client.session.call_tool(
                "interview",
                {},
                input_responses={"elicitation-1": answer},  # type: ignore[dict-item]
                request_state='toolpalette.input.v1:{"answers":{}}',
                allow_input_required=True,
            )


@pytest.mark.parametrize("mode", ERAS)
async def test_nothing_the_user_answers_is_logged(
    hub: ToolHub, mode: str, caplog: pytest.LogCaptureFixture
):
    caplog.set_level("DEBUG")
    async with connect(hub, mode, Peer("Zanzibar-7731")) as client:
        result = await client.call_tool("greet", {})
    assert text(result) == "hello Zanzibar-7731"
    assert not [r for r in caplog.records if "Zanzibar-7731" in r.getMessage()]


@pytest.mark.parametrize("mode", ERAS)
async def test_questions_asked_together_are_answered_together(hub: ToolHub, mode: str):
    peer = Peer()
    async with connect(hub, mode, peer) as client:
        result = await client.call_tool("all_at_once", {})
    assert text(result) == "Ada / SAY HI / file:///work/project"


async def test_a_2026_round_carries_every_question_asked_together_under_its_key(hub: ToolHub):
    async with connect(hub, "auto", Peer()) as client:
        first = await client.session.call_tool("all_at_once", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert sorted(first.input_requests or {}) == ["hi", "name", "where"]
        # Answered in part: the questions still open are asked again.
        again = await client.session.call_tool(
            "all_at_once",
            {},
            input_responses={"name": {"action": "accept", "content": {"name": "Ada"}}},  # type: ignore[dict-item]
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(again, types.InputRequiredResult)
    assert sorted(again.input_requests or {}) == ["hi", "where"]
