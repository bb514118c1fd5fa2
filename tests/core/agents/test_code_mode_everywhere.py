"""``run_code`` wherever the palette goes: provider exports, a provider's calls, the adapters."""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolpalette import CodeLimits, Thinker, ToolHub, ToolSelector, replies, tool

pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")

SCRIPT = "[double(n=i) for i in range(5)]"
EXPECTED = [0, 2, 4, 6, 8]


@tool(read_only=True)
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


class Coder(Thinker):
    code_mode = True
    code_limits = CodeLimits(wall_time=10.0)

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(double)


def bind() -> Coder:
    return ToolHub(autoload=False, config={}).bind(Coder)


def _named(entry: dict[str, Any]) -> str:
    return str(entry.get("name") or entry.get("function", {}).get("name"))


@pytest.mark.parametrize("fmt", ["openai_chat", "openai_responses", "anthropic"])
def test_every_provider_format_exports_run_code(fmt: str) -> None:
    turn = bind().begin_turn()
    [entry] = [e for e in turn.schemas(fmt) if _named(e) == "run_code"]  # type: ignore[arg-type]
    text = json.dumps(entry)
    assert '"code"' in text
    assert "def double(*, n: int) -> int:" in text


async def test_a_providers_call_of_run_code_runs_and_is_answered() -> None:
    thinker = bind()
    turn = thinker.begin_turn()
    message = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "run_code", "input": {"code": SCRIPT}}
        ],
    }
    calls = turn.calls_from("anthropic", message)
    results = await thinker.call_many(calls)
    [reply] = replies(calls, results)
    [block] = reply["content"]
    assert block["tool_use_id"] == "toolu_1"
    assert json.loads(results[0].text)["result"] == EXPECTED


async def test_langchain_runs_run_code_through_the_pipeline() -> None:
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from toolpalette.adapters.langchain import langchain_tools

    tools = {t.name: t for t in langchain_tools(bind())}
    call = {"name": "run_code", "args": {"code": SCRIPT}, "id": "c1", "type": "tool_call"}
    message = await tools["run_code"].ainvoke(call)
    assert json.loads(message.content)["result"] == EXPECTED


async def test_pydantic_ai_runs_run_code_through_the_pipeline() -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is not installed")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from toolpalette.adapters.pydantic_ai import ThinkerToolset

    steps = [[ToolCallPart("run_code", {"code": SCRIPT}, tool_call_id="c1")]]

    def respond(messages: Any, info: Any) -> ModelResponse:
        return ModelResponse(parts=list(steps.pop(0)) if steps else [TextPart("done")])

    result = await Agent(FunctionModel(respond), toolsets=[ThinkerToolset(bind())]).run("go")
    [returned] = [
        part.content
        for message in result.all_messages()
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart)
    ]
    data = returned if isinstance(returned, dict) else json.loads(returned)
    assert data["result"] == EXPECTED
