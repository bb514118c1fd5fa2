"""The conformance pack (the MCP suite's test server on the public pack API) over MCP.

The pack is ``nox -s conformance``'s fixture; here it is added in code (no install) and
driven with the SDK's client on both eras: a tool, a prompt with arguments and its
completion, a templated resource, a tool that logs, and a tool whose two questions take
two rounds on 2026-07-28 and two elicitations within the call on the 2025 era.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")

import mcp_types as types
import toolpalette.mcp
from mcp import Client
from toolpalette import ContentSelector, Thinker, ToolHub, ToolSelector

SRC = Path(__file__).parent / "packs" / "conformance" / "src"


@pytest.fixture
def hub() -> Iterator[ToolHub]:
    sys.path.insert(0, str(SRC))
    try:
        from tp_testpack_conformance import hooks

        hub = ToolHub(autoload=False)
        hub.add_plugin(hooks, name="conformance")
        yield hub
    finally:
        sys.path.remove(str(SRC))


class Everything(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().package("tp_testpack_conformance")

    @classmethod
    def declare_content(cls) -> ContentSelector:
        return ContentSelector().pack("conformance")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_suites_fixtures_answer_as_the_suite_expects(hub: ToolHub, mode: str):
    lines: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        lines.append(params.data)

    asked: list[str] = []

    async def answer(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        key = "color" if "color" in params.message else "name"
        return types.ElicitResult(action="accept", content={key: f"my {key}"})

    options: dict[str, Any] = {"logging_callback": on_log, "elicitation_callback": answer}
    if mode == "auto":
        options["log_level"] = "info"
    server = toolpalette.mcp.server(hub, Everything)
    async with Client(server, mode=mode, **options) as client:
        simple = await client.call_tool("test_simple_text", {})
        logged = await client.call_tool("test_tool_with_logging", {})
        rounds = await client.call_tool("test_input_required_result_multi_round", {})
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        done = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "par"},
        )
        data = await client.read_resource("test://template/123/data")
    assert simple.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
    assert not logged.is_error
    assert lines == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert rounds.content[0].text == "my name likes my color"  # type: ignore[union-attr]
    assert asked == ["Step 1: What is your name?", "Step 2: What is your favorite color?"]
    assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"  # type: ignore[union-attr]
    assert done.completion.values == ["paris", "park", "party"]
    assert json.loads(data.contents[0].text) == {  # type: ignore[union-attr]
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }
