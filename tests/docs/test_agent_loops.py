"""The host guide's agent loops (docs/examples), run against recorded provider responses.

Each provider's responses below are shaped like the real API's and validated by the
provider's own SDK types; every request the loop sends (tool definitions, messages,
tool results) is validated by the SDK's request types too. One model turn makes seven
parallel calls: two that succeed and one for each refusal (unknown tool, malformed
arguments, missing field, an approval a person denies, a crash), and the crash's
failure report carries the provider's call id.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

# A peer its nox session could not install on this Python skips this module, saying so;
# tests/core/test_peers.py fails for any other peer missing.
pytest.importorskip("mcp", reason="mcp is not installed on this Python")
pytest.importorskip("anthropic", reason="anthropic is not installed on this Python")
pytest.importorskip("openai", reason="openai is not installed on this Python")

import mcp.types as mcp_types
from anthropic.types import Message, MessageParam, ToolParam
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
)
from openai.types.responses import FunctionToolParam, Response, ResponseInputItemParam
from pydantic import TypeAdapter
from toolpalette import (
    Approval,
    Thinker,
    ToolErrorReport,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    tool,
)
from toolpalette.testing import wait_until

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def conforms(kind: Any, value: Any) -> None:
    """``value`` is accepted by the SDK type ``kind`` and has no key the type lacks."""
    validated = TypeAdapter(kind).validate_python(value)
    if isinstance(value, dict) and isinstance(validated, dict):
        assert set(validated) == set(value), f"keys the SDK type does not know: {value}"


# -- the thinker the loops drive -------------------------------------------------------------


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}."


@tool
def book_flight(to: str) -> str:
    """Book a flight (a person approves each booking)."""
    return f"Booked to {to}."


@tool(read_only=True)
def explode() -> str:
    """Always fails."""
    raise RuntimeError("secret database password in this message")


class Traveller(Thinker):
    strict = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(weather).tool(book_flight).tool(explode)


def bind() -> tuple[Traveller, list[ToolErrorReport]]:
    hub = ToolHub(autoload=False, config={})
    reports: list[ToolErrorReport] = []
    hub.on_tool_error(reports.append)
    holder: dict[str, Traveller] = {}

    def deny(approval: Approval) -> None:  # the person says no
        holder["thinker"].resolve_approval(approval.token, approve=False)

    thinker = hub.bind(Traveller, policy=ToolPolicy(ask=["book_flight"]), approver=deny)
    holder["thinker"] = thinker
    return thinker, reports


MALFORMED_TEXT = '{"city": '
CALLS: list[tuple[str, str, Any]] = [
    ("call_1", "weather", {"city": "Oslo"}),
    ("call_2", "weather", {"city": "Bergen"}),
    ("call_3", "teleport", {"to": "Mars"}),
    ("call_4", "weather", MALFORMED_TEXT),
    ("call_5", "weather", {}),
    ("call_6", "book_flight", {"to": "Oslo"}),
    ("call_7", "explode", {}),
]
EXPECTED = {
    "call_1": (200, "ok"),
    "call_2": (200, "ok"),
    "call_3": (404, "unknown_tool"),
    "call_4": (400, "invalid_input"),
    "call_5": (400, "invalid_input"),
    "call_6": (403, "denied"),
    "call_7": (500, "internal_error"),
}
FINAL = "Oslo and Bergen are sunny."


def arguments_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def arguments_object(value: Any) -> dict[str, Any]:
    # Anthropic and MCP send objects: a malformed call there is a wrong field instead.
    return {"town": "Oslo"} if isinstance(value, str) else dict(value)


def wait_for_report(reports: list[ToolErrorReport], tool_name: str) -> ToolErrorReport:
    found: ToolErrorReport = wait_until(
        lambda: next((r for r in list(reports) if r.tool == tool_name), None),
        timeout=10,
        message=f"a failure report for {tool_name}",
    )
    return found


class Recorded:
    """A fake SDK endpoint: validates each request, answers the next recorded response."""

    def __init__(self, responses: list[Any], check: Callable[[dict[str, Any]], None]) -> None:
        self.responses = responses
        self.check = check
        self.requests: list[dict[str, Any]] = []

    async def create(self, **request: Any) -> Any:
        self.check(request)
        self.requests.append(json.loads(json.dumps(request)))
        return self.responses.pop(0)


# -- OpenAI Chat Completions ---------------------------------------------------------------------


def chat_completion(message: dict[str, Any], finish: str) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1764500000,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": {"prompt_tokens": 80, "completion_tokens": 40, "total_tokens": 120},
        }
    )


def check_chat(request: dict[str, Any]) -> None:
    for entry in request["tools"]:
        conforms(ChatCompletionFunctionToolParam, entry)
        assert entry["function"]["strict"] is True
    for message in request["messages"]:
        conforms(ChatCompletionMessageParam, message)


async def test_openai_chat_loop() -> None:
    module = example("openai_chat_loop")
    thinker, reports = bind()
    tool_calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments_text(value)},
        }
        for call_id, name, value in CALLS
    ]
    endpoint = Recorded(
        [
            chat_completion(
                {"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls"
            ),
            chat_completion({"role": "assistant", "content": FINAL}, "stop"),
        ],
        check_chat,
    )
    client = SimpleNamespace(chat=SimpleNamespace(completions=endpoint))
    answer = await module.agent_loop(client, thinker, "Weather?", "gpt-4.1-mini")
    assert answer == FINAL
    sent = endpoint.requests[1]["messages"]
    tool_messages = [m for m in sent if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == [c[0] for c in CALLS]
    for message in tool_messages:
        status, code = EXPECTED[message["tool_call_id"]]
        if status == 200:
            assert message["content"].startswith("Sunny in")
        else:
            assert message["content"].startswith(f"Error ({status} {code}):")
    assert "password" not in json.dumps(sent)
    report = wait_for_report(reports, "explode")
    assert report.context is not None
    assert report.context.call_id == "call_7"


async def test_the_chat_example_itself_runs_its_own_thinker() -> None:
    module = example("openai_chat_loop")
    thinker = ToolHub(autoload=False, config={}).bind(module.Assistant)
    call = {"id": "c", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    endpoint = Recorded(
        [
            chat_completion(
                {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
            ),
            chat_completion({"role": "assistant", "content": "done"}, "stop"),
        ],
        check_chat,
    )
    client = SimpleNamespace(chat=SimpleNamespace(completions=endpoint))
    assert await module.agent_loop(client, thinker, "Weather?", "m") == "done"


# -- OpenAI Responses ------------------------------------------------------------------------------


def response(output: list[dict[str, Any]]) -> Response:
    return Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1764500000,
            "model": "gpt-4.1-mini-2025-04-14",
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )


def check_responses(request: dict[str, Any]) -> None:
    for entry in request["tools"]:
        conforms(FunctionToolParam, entry)
        assert entry["strict"] is True
    for item in request["input"]:
        conforms(ResponseInputItemParam, item)


async def test_openai_responses_loop() -> None:
    module = example("openai_responses_loop")
    thinker, reports = bind()
    calls = [
        {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            "name": name,
            "arguments": arguments_text(value),
            "status": "completed",
        }
        for call_id, name, value in CALLS
    ]
    text = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": FINAL, "annotations": []}],
    }
    endpoint = Recorded([response(calls), response([text])], check_responses)
    client = SimpleNamespace(responses=endpoint)
    assert await module.agent_loop(client, thinker, "Weather?", "gpt-4.1-mini") == FINAL
    outputs = [i for i in endpoint.requests[1]["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [c[0] for c in CALLS]
    for output in outputs:
        status, code = EXPECTED[output["call_id"]]
        assert output["output"].startswith(
            "Sunny in" if status == 200 else f"Error ({status} {code})"
        )
    report = wait_for_report(reports, "explode")
    assert report.context is not None
    assert report.context.call_id == "call_7"


# -- Anthropic Messages ----------------------------------------------------------------------------


def message(content: list[dict[str, Any]], stop: str) -> Message:
    return Message.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 80, "output_tokens": 40},
        }
    )


def check_anthropic(request: dict[str, Any]) -> None:
    for entry in request["tools"]:
        conforms(ToolParam, entry)
        assert entry["strict"] is True
    for item in request["messages"]:
        conforms(MessageParam, item)


async def test_anthropic_loop() -> None:
    module = example("anthropic_loop")
    thinker, reports = bind()
    uses = [
        {"type": "tool_use", "id": call_id, "name": name, "input": arguments_object(value)}
        for call_id, name, value in CALLS
    ]
    endpoint = Recorded(
        [
            message([{"type": "text", "text": "Checking."}, *uses], "tool_use"),
            message([{"type": "text", "text": FINAL}], "end_turn"),
        ],
        check_anthropic,
    )
    client = SimpleNamespace(messages=endpoint)
    assert await module.agent_loop(client, thinker, "Weather?", "claude-sonnet-4-5") == FINAL
    last = endpoint.requests[1]["messages"][-1]
    assert last["role"] == "user"
    blocks = last["content"]
    assert [b["tool_use_id"] for b in blocks] == [c[0] for c in CALLS]
    for block in blocks:
        status, _code = EXPECTED[block["tool_use_id"]]
        assert block["is_error"] is (status != 200)
    report = wait_for_report(reports, "explode")
    assert report.context is not None
    assert report.context.call_id == "call_7"


# -- MCP -------------------------------------------------------------------------------------


async def test_mcp_loop() -> None:
    module = example("mcp_loop")
    thinker, reports = bind()
    listing = await module.handle(thinker, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    result = mcp_types.ListToolsResult.model_validate(listing["result"])
    assert [t.name for t in result.tools] == ["weather", "book_flight", "explode"]
    for index, (call_id, name, value) in enumerate(CALLS, start=2):
        request = {
            "jsonrpc": "2.0",
            "id": index,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments_object(value)},
        }
        mcp_types.CallToolRequest.model_validate(request)
        answer = await module.handle(thinker, request)
        assert answer["id"] == index
        called = mcp_types.CallToolResult.model_validate(answer["result"])
        status, _code = EXPECTED[call_id]
        assert called.is_error is (status != 200)
    report = wait_for_report(reports, "explode")
    assert report.context is not None
    assert report.context.call_id == str(len(CALLS) + 1)  # the JSON-RPC id of that call


async def test_mcp_unknown_method_is_a_json_rpc_error() -> None:
    module = example("mcp_loop")
    thinker, _ = bind()
    answer = await module.handle(thinker, {"jsonrpc": "2.0", "id": 9, "method": "prompts/list"})
    assert answer["error"]["code"] == -32601
