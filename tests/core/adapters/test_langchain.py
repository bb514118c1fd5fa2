"""The LangChain adapter, driven by LangChain's own fake chat model (no network)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

# A peer its nox session could not install on this Python skips this module, saying so;
# tests/core/test_peers.py fails for any other peer missing.
pytest.importorskip("langchain_core", reason="langchain-core is not installed on this Python")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import ToolException
from langchain_core.tools import tool as langchain_tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from toolpalette import Thinker, ToolHub, ToolRegistry, ToolResult, ToolSelector, execute, tool
from toolpalette.adapters.langchain import langchain_tools, providers_from_langchain
from toolpalette.errors import ToolDefinitionError


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}."


@tool(read_only=True)
def explode() -> str:
    """Always fails."""
    raise RuntimeError("a secret in the message")


class Assistant(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(weather).tool(explode)


async def run_loop(thinker: Thinker, model: GenericFakeChatModel) -> list[Any]:
    """A minimal LangChain tool loop: the model's tool calls, run, until it answers."""
    messages: list[Any] = [HumanMessage("Weather?")]
    for _ in range(5):
        tools = {t.name: t for t in langchain_tools(thinker)}
        reply = await model.ainvoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            messages.append(await tools[call["name"]].ainvoke({**call, "type": "tool_call"}))
    raise AssertionError("no answer")


async def test_a_fake_chat_model_drives_the_thinkers_tools() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Assistant)
    reports: list[Any] = []
    thinker.hub.on_tool_error(reports.append)
    calls = [
        {"name": "weather", "args": {"city": "Oslo"}, "id": "call_1"},
        {"name": "weather", "args": {}, "id": "call_2"},
        {"name": "explode", "args": {}, "id": "call_3"},
    ]
    model = GenericFakeChatModel(
        messages=iter([AIMessage(content="", tool_calls=calls), AIMessage(content="Sunny.")])
    )
    messages = await run_loop(thinker, model)
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in results] == ["call_1", "call_2", "call_3"]
    assert [m.status for m in results] == ["success", "error", "error"]
    assert results[0].content == "Sunny in Oslo."
    assert results[0].artifact["status"] == 200
    assert str(results[1].content).startswith("Error (400 invalid_input):")
    assert str(results[2].content).startswith("Error (500 internal_error):")
    assert "secret" not in str(results[2].content)
    assert messages[-1].content == "Sunny."
    deadline = time.monotonic() + 10
    while not any(r.tool == "explode" for r in reports) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    [report] = [r for r in reports if r.tool == "explode"]
    assert report.context.call_id == "call_3"


async def test_the_artifact_is_the_whole_result_for_a_success_and_a_failure() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Assistant)
    tools = {t.name: t for t in langchain_tools(thinker)}
    calls = [
        ("weather", {"city": "Oslo"}, "call_ok"),
        ("weather", {"city": 3}, "call_bad"),
        ("explode", {}, "call_boom"),
    ]
    for name, args, call_id in calls:
        call = {"name": name, "args": args, "id": call_id, "type": "tool_call"}
        message = await tools[name].ainvoke(call)
        assert isinstance(message, ToolMessage)
        assert message.tool_call_id == call_id
        assert isinstance(message.artifact, dict)
        result = ToolResult.from_dict(message.artifact)
        assert message.status == ("error" if result.is_error else "success")
        expected = f"Error ({result.status} {result.code}): {result.text}"
        assert message.content == (expected if result.is_error else result.text)
        # The message still serializes: the artifact is JSON, not a Python object.
        assert json.loads(message.model_dump_json())["artifact"] == message.artifact
    failed = await tools["weather"].ainvoke(
        {"name": "weather", "args": {"city": 3}, "id": "c", "type": "tool_call"}
    )
    assert (failed.artifact["status"], failed.artifact["code"]) == (400, "invalid_input")


def test_plain_arguments_give_the_text_and_a_failures_text() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Assistant)
    tools = {t.name: t for t in langchain_tools(thinker)}
    assert tools["weather"].invoke({"city": "Oslo"}) == "Sunny in Oslo."
    assert str(tools["explode"].invoke({})).startswith("Error (500 internal_error):")


def test_langchain_converts_the_tools_with_their_own_schemas() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Assistant)
    turn = thinker.begin_turn()
    [first, _] = langchain_tools(thinker, turn)
    converted = convert_to_openai_tool(first)["function"]
    assert converted["name"] == "weather"
    schema = turn.tools[0].input_schema
    assert converted["parameters"]["required"] == schema["required"] == ["city"]
    assert converted["parameters"]["properties"]["city"]["type"] == "string"  # titles dropped


def test_a_sync_invoke_works_outside_an_event_loop() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Assistant)
    [first, _] = langchain_tools(thinker)
    assert first.invoke({"city": "Bergen"}) == "Sunny in Bergen."


# -- the other way: LangChain tools as providers ------------------------------------------------


@langchain_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@langchain_tool
def picky(word: str) -> str:
    """Refuse short words."""
    if len(word) < 3:
        raise ToolException("Use a word of three letters or more.")
    return word.upper()


async def test_langchain_tools_run_through_the_pipeline() -> None:
    providers = providers_from_langchain([add, picky], read_only=["add"])
    assert [p.read_only for p in providers] == [True, False]
    registry = ToolRegistry(providers)
    assert (await execute(registry, "add", {"a": 2, "b": 3})).text == "5"
    invalid = await execute(registry, "add", {"a": "two", "b": 1})
    assert (invalid.status, invalid.code) == (400, "invalid_input")
    refused = await execute(registry, "picky", {"word": "no"})
    assert (refused.status, refused.text) == (422, "Use a word of three letters or more.")


def test_a_langchain_tool_with_a_name_toolpalette_cannot_take_is_refused() -> None:
    @langchain_tool("has spaces")
    def spaced(x: int) -> int:
        """Spaced."""
        return x

    with pytest.raises(ToolDefinitionError):
        providers_from_langchain([spaced])
