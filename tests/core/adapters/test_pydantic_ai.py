"""The pydantic-ai adapter, with pydantic-ai's own test and function models (no network)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

# A peer its nox session could not install on this Python skips this module, saying so;
# tests/core/test_peers.py fails for any other peer missing.
pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is not installed on this Python")

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelRetry, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.toolsets import FunctionToolset
from pydantic_core import to_json
from toolpalette import Thinker, ToolHub, ToolPolicy, ToolRegistry, ToolSelector, execute, tool
from toolpalette.adapters.pydantic_ai import ThinkerToolset, providers_from_pydantic_ai
from toolpalette.errors import ToolDefinitionError

CALLED: list[str] = []


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather in a city."""
    CALLED.append(f"weather {city}")
    return f"Sunny in {city}."


@tool
def book_flight(to: str) -> str:
    """Book a flight."""
    CALLED.append(f"book {to}")
    return f"Booked to {to}."


class Traveller(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(weather).tool(book_flight)


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLED.clear()


def bind(**options: Any) -> Traveller:
    return ToolHub(autoload=False, config={}).bind(Traveller, **options)


def tool_returns(messages: list[ModelMessage]) -> dict[str, Any]:
    return {
        part.tool_call_id: part.content
        for message in messages
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart)
    }


async def test_the_test_model_calls_every_offered_tool_through_the_pipeline() -> None:
    thinker = bind()
    agent = Agent(TestModel(), toolsets=[ThinkerToolset(thinker)])
    result = await agent.run("Plan a trip.")
    assert sorted(c.split()[0] for c in CALLED) == ["book", "weather"]
    assert thinker.turn_number >= 1  # each run step begins a thinker turn
    returns = tool_returns(result.all_messages())
    assert sorted(str(v).split()[0] for v in returns.values()) == ["Booked", "Sunny"]


def scripted(*steps: list[ToolCallPart]) -> FunctionModel:
    """A model that makes the given calls, one step each, then answers in text."""
    remaining = list(steps)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if remaining:
            return ModelResponse(parts=list(remaining.pop(0)))
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


async def test_a_failure_reaches_the_model_as_its_text_with_the_call_id() -> None:
    thinker = bind()
    reports: list[Any] = []
    thinker.hub.on_tool_error(reports.append)
    model = scripted(
        [
            ToolCallPart("weather", {"town": "Oslo"}, tool_call_id="call_bad"),
            ToolCallPart("teleport", {}, tool_call_id="call_unknown"),
        ]
    )
    agent = Agent(model, toolsets=[ThinkerToolset(thinker)])
    result = await agent.run("Weather?")
    returns = tool_returns(result.all_messages())
    assert returns["call_bad"].startswith("Error (400 invalid_input):")
    # pydantic-ai answers unknown names itself: with a tool return, or with a retry prompt
    # in the releases that still support Python 3.10.
    retries = {
        part.tool_call_id: part.content
        for message in result.all_messages()
        for part in getattr(message, "parts", [])
        if isinstance(part, RetryPromptPart)
    }
    assert "teleport" in {**retries, **returns}["call_unknown"]
    assert CALLED == []
    deadline = time.monotonic() + 10
    while not any(r.tool == "weather" for r in reports) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    [report] = [r for r in reports if r.tool == "weather"]
    assert report.context.call_id == "call_bad"


CANARY = "sk-live-123-canary"
"""A secret-looking value in a model's arguments: it must never come back to the model."""


def answers(messages: list[ModelMessage]) -> dict[str, ToolReturnPart | RetryPromptPart]:
    """Each call's answer in the requests to the model: a tool return, or a retry prompt.

    Recent pydantic-ai releases answer a retry with a tool return; the releases that
    still support Python 3.10 with a retry prompt.
    """
    return {
        str(p.tool_call_id): p
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, (ToolReturnPart, RetryPromptPart))
    }


def model_reads(messages: list[ModelMessage]) -> str:
    """Everything the toolset's answers put before the model."""
    return "\n".join(
        p.model_response() if isinstance(p, RetryPromptPart) else to_json(p.content).decode()
        for p in answers(messages).values()
    )


async def test_arguments_reach_the_pipeline_as_sent_and_its_texts_reach_the_model() -> None:
    sent = {
        "call_cut": '{"city": "' + CANARY,
        "call_extra": f'{{"city": 3, "token": "{CANARY}"}}',
        "call_nan": f'{{"city": "{CANARY}", "n": NaN}}',
        "call_list": f'["{CANARY}"]',
    }
    model = scripted(
        [ToolCallPart("weather", raw, tool_call_id=call_id) for call_id, raw in sent.items()]
    )
    result = await Agent(model, toolsets=[ThinkerToolset(bind())]).run("Weather?")
    returns = tool_returns(result.all_messages())
    host = bind()  # the same call in a host, for the text the model must read
    for call_id, raw in sent.items():
        expected = await host.call("weather", raw)
        assert expected.code == "invalid_input"
        assert returns[call_id] == f"Error (400 invalid_input): {expected.text}"
    assert CANARY not in model_reads(result.all_messages())
    assert CALLED == []


async def test_valid_json_text_runs_the_tool() -> None:
    model = scripted([ToolCallPart("weather", '{"city": "Oslo"}', tool_call_id="call_1")])
    result = await Agent(model, toolsets=[ThinkerToolset(bind())]).run("Weather?")
    assert tool_returns(result.all_messages()) == {"call_1": "Sunny in Oslo."}
    assert CALLED == ["weather Oslo"]


@tool(read_only=True)
def forecast(city: str) -> list[int]:
    """Tomorrow's temperatures."""
    return [3, 5]


class Forecaster(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(forecast)


async def test_a_wrapped_value_reads_as_the_bare_value_as_in_a_host() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Forecaster)
    model = scripted([ToolCallPart("forecast", {"city": "Oslo"}, tool_call_id="call_1")])
    result = await Agent(model, toolsets=[ThinkerToolset(thinker)]).run("Forecast?")
    assert tool_returns(result.all_messages()) == {"call_1": "[3,5]"}


async def test_an_unknown_name_gets_pydantic_ais_own_text_as_documented() -> None:
    # pydantic-ai answers a name no toolset offers before any toolset sees the call; the
    # adapter's docstring and the host guide quote this text.
    model = scripted([ToolCallPart("teleport", "{}", tool_call_id="call_unknown")])
    result = await Agent(model, toolsets=[ThinkerToolset(bind())]).run("Go.")
    part = answers(result.all_messages())["call_unknown"]
    assert (
        part.content == "Unknown tool name: 'teleport'. Available tools: 'book_flight', 'weather'"
    )
    assert isinstance(part, RetryPromptPart) or part.outcome == "retried"


async def test_an_ask_becomes_a_deferred_approval_and_runs_once_approved() -> None:
    thinker = bind(policy=ToolPolicy(ask=["book_flight"]))
    model = scripted([ToolCallPart("book_flight", {"to": "Oslo"}, tool_call_id="call_9")])
    agent = Agent(
        model, toolsets=[ThinkerToolset(thinker)], output_type=[str, DeferredToolRequests]
    )
    first = await agent.run("Book me a flight.")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["call_9"]
    assert CALLED == []
    assert thinker.pending_approvals() == []  # nothing waits inside the thinker
    approvals = DeferredToolResults(approvals={"call_9": True})
    second = await agent.run(message_history=first.all_messages(), deferred_tool_results=approvals)
    assert second.output == "done"
    assert CALLED == ["book Oslo"]
    [record] = thinker.hub.grants()
    assert (record.kind, record.name, record.decision) == ("call", "book_flight", "granted")


async def test_a_denied_approval_never_runs_the_tool() -> None:
    thinker = bind(policy=ToolPolicy(ask=["book_flight"]))
    model = scripted([ToolCallPart("book_flight", {"to": "Oslo"}, tool_call_id="call_9")])
    agent = Agent(
        model, toolsets=[ThinkerToolset(thinker)], output_type=[str, DeferredToolRequests]
    )
    first = await agent.run("Book me a flight.")
    denied = DeferredToolResults(approvals={"call_9": False})
    await agent.run(message_history=first.all_messages(), deferred_tool_results=denied)
    assert CALLED == []


# -- the other way: a pydantic-ai function toolset as providers ---------------------------------


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def picky(word: str) -> str:
    """Refuse short words."""
    if len(word) < 3:
        raise ModelRetry("Use a word of three letters or more.")
    return word.upper()


async def test_function_toolset_tools_run_through_the_pipeline() -> None:
    providers = providers_from_pydantic_ai(FunctionToolset([add, picky]), read_only=["add"])
    by_name = {p.name: p for p in providers}
    assert by_name["add"].read_only
    assert not by_name["picky"].read_only
    registry = ToolRegistry(providers)
    assert (await execute(registry, "add", {"a": 2, "b": 3})).text == "5"
    invalid = await execute(registry, "add", {"a": "two"})
    assert (invalid.status, invalid.code) == (400, "invalid_input")
    retry = await execute(registry, "picky", {"word": "no"})
    assert (retry.status, retry.text) == (422, "Use a word of three letters or more.")
    assert (await execute(registry, "picky", {"word": "yes"})).text == "YES"


def test_a_tool_that_takes_a_run_context_is_refused() -> None:
    toolset: FunctionToolset[Any] = FunctionToolset()

    @toolset.tool
    def needs_ctx(ctx: RunContext[Any], x: int) -> int:
        """Needs the run."""
        return x

    with pytest.raises(ToolDefinitionError, match="RunContext"):
        providers_from_pydantic_ai(toolset)
