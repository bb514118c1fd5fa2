"""Native provider search: the exports of a ``native`` turn, and the responses that come back.

A thinker whose ``tool_search`` is ``"native"`` sends, in Anthropic's and the Responses
API's formats, its deferred tools marked ``defer_loading: true`` after the provider's
own search tool, instead of ``search_tools``; the other formats fall back to
``search_tools``. Everything sent validates against the providers' SDK types, and the
providers' own search items in a response (built from the SDK types, with the shapes
the APIs return) are skipped: only the tool calls that follow are read, and a call of a
deferred tool is decided at call time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import Message, ToolParam, ToolSearchToolBm25_20251119Param
from openai.types.responses import FunctionToolParam, Response, ToolSearchToolParam
from pydantic import TypeAdapter
from toolpalette import Thinker, ToolHub, ToolPolicy, ToolSelector, calls_from
from toolpalette.testing import FakeTool

ORDERS = FakeTool(
    "look_up_order",
    description="Look up an order by its number.",
    input_schema={
        "type": "object",
        "properties": {"number": {"type": "string", "description": "The order number."}},
        "required": ["number"],
        "additionalProperties": False,
    },
    read_only=True,
    result=lambda value: f"order {value['number']}: shipped",
)
REFUND = FakeTool(
    "refund_order",
    description="Refund an order.",
    input_schema={"type": "object", "properties": {"number": {"type": "string"}}},
    result="refunded",
)
GREET = FakeTool("greet", description="Say hello.", read_only=True, result="hello")


class Native(Thinker):
    tool_search = "native"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return (
            ToolSelector()
            .provider(GREET)
            .provider(ORDERS, deferred=True)
            .provider(REFUND, deferred=True)
        )


@pytest.fixture
def hub() -> ToolHub:
    ORDERS.calls.clear()
    return ToolHub(autoload=False, config={})


def conforms(kind: Any, value: Any) -> None:
    """``value`` is accepted by the SDK type ``kind`` and has no key the type lacks."""
    validated = TypeAdapter(kind).validate_python(value)
    assert set(validated) == set(value), f"keys the SDK type does not know: {value}"


# -- what a native turn sends -----------------------------------------------------------------


def test_anthropic_gets_the_bm25_search_and_the_deferred_tools_marked(hub: ToolHub) -> None:
    turn = hub.bind(Native).begin_turn()
    assert turn.tool_names == ("greet", "search_tools")  # the palette: search_tools as fallback
    exported = turn.schemas("anthropic")
    assert [e.get("name") for e in exported] == [
        "greet",
        "tool_search_tool_bm25",
        "look_up_order",
        "refund_order",
    ]
    greet, search, *deferred = exported
    conforms(ToolParam, greet)
    assert "defer_loading" not in greet
    conforms(ToolSearchToolBm25_20251119Param, search)
    assert search == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    for entry in deferred:
        conforms(ToolParam, entry)
        assert entry["defer_loading"] is True
    assert deferred[0]["input_schema"] == ORDERS.input_schema
    assert json.loads(turn.schemas_json("anthropic")) == json.loads(
        json.dumps(exported, sort_keys=True)
    )


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


@pytest.mark.parametrize("fmt", ["anthropic", "openai_responses"])
def test_the_overhead_separates_what_the_model_reads_from_what_the_request_carries(
    hub: ToolHub, fmt: Any
) -> None:
    turn = hub.bind(Native).begin_turn()
    overhead = turn.overhead(fmt)
    read = [e for e in turn.schemas(fmt) if not e.get("defer_loading")]
    deferred = [e for e in turn.schemas(fmt) if e.get("defer_loading")]
    assert len(deferred) == 2
    assert overhead.tools_bytes == len(_canonical(read))  # what the model reads
    assert overhead.deferred_bytes == sum(len(_canonical(e)) + 1 for e in deferred)
    assert overhead.tools_bytes + overhead.deferred_bytes == len(turn.schemas_json(fmt))
    assert overhead.sent_bytes == len(turn.schemas_json(fmt)) + overhead.preamble_bytes
    assert overhead.sent_tokens == -(-overhead.sent_bytes // 4)
    assert overhead.deferred_tokens == -(-overhead.deferred_bytes // 4)
    assert overhead.tokens < overhead.sent_tokens


def test_outside_a_native_search_the_request_carries_what_the_model_reads(hub: ToolHub) -> None:
    turn = hub.bind(Native).begin_turn()
    overhead = turn.overhead("openai_chat")  # no search of its own: search_tools instead
    assert overhead.deferred_bytes == 0
    assert overhead.sent_bytes == overhead.bytes
    assert overhead.tools_bytes == len(turn.schemas_json("openai_chat"))


def test_the_responses_api_gets_tool_search_and_deferred_functions(hub: ToolHub) -> None:
    turn = hub.bind(Native).begin_turn()
    exported = turn.schemas("openai_responses")
    assert [e["type"] for e in exported] == ["function", "tool_search", "function", "function"]
    greet, search, *deferred = exported
    conforms(FunctionToolParam, greet)
    conforms(ToolSearchToolParam, search)
    for entry in deferred:
        conforms(FunctionToolParam, entry)
        assert entry["defer_loading"] is True
    assert [e["name"] for e in deferred] == ["look_up_order", "refund_order"]
    assert json.loads(turn.schemas_json("openai_responses")) == exported


@pytest.mark.parametrize("fmt", ["openai_chat", "mcp"])
def test_formats_without_a_search_of_their_own_fall_back_to_search_tools(
    hub: ToolHub, fmt: str
) -> None:
    turn = hub.bind(Native).begin_turn()
    exported = turn.schemas(fmt)  # type: ignore[arg-type]
    names = [e["function"]["name"] if fmt == "openai_chat" else e["name"] for e in exported]
    assert names == ["greet", "search_tools"]
    assert "defer_loading" not in turn.schemas_json(fmt).decode()  # type: ignore[arg-type]


def test_a_native_turn_offers_only_what_the_policy_lets_it_reach(hub: ToolHub) -> None:
    turn = hub.bind(Native, policy=ToolPolicy(deny=["refund_order"])).begin_turn()
    assert turn.deferred == (ORDERS,)
    assert "refund_order" not in turn.schemas_json("anthropic").decode()


def test_other_modes_send_no_deferred_tools(hub: ToolHub) -> None:
    class Searching(Native):
        tool_search = "search"

    turn = hub.bind(Searching).begin_turn()
    assert turn.deferred == ()
    assert [e["name"] for e in turn.schemas("anthropic")] == ["greet", "search_tools"]


# -- what comes back ----------------------------------------------------------------------------


def anthropic_message() -> Message:
    """A response in which the model searched (server side), then called what it found."""
    return Message.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [
                {"type": "text", "text": "Let me find a tool for orders."},
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_01",
                    "name": "tool_search_tool_bm25",
                    "input": {"query": "order status"},
                },
                {
                    "type": "tool_search_tool_result",
                    "tool_use_id": "srvtoolu_01",
                    "content": {
                        "type": "tool_search_tool_search_result",
                        "tool_references": [
                            {"type": "tool_reference", "tool_name": "look_up_order"}
                        ],
                    },
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "look_up_order",
                    "input": {"number": "A-7"},
                },
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 120, "output_tokens": 40},
        }
    )


def responses_response() -> Response:
    """A Responses API answer: the hosted tool search, then a call of what it loaded."""
    return Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1764500000,
            "model": "gpt-5.4",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "tool_search_call",
                    "id": "tsc_1",
                    "call_id": None,
                    "execution": "server",
                    "status": "completed",
                    "arguments": {"query": "order status"},
                },
                {
                    "type": "tool_search_output",
                    "id": "tso_1",
                    "call_id": None,
                    "execution": "server",
                    "status": "completed",
                    "tools": [
                        {
                            "type": "function",
                            "name": "look_up_order",
                            "description": "Look up an order by its number.",
                            "parameters": ORDERS.input_schema,
                            "strict": True,
                            "defer_loading": True,
                        }
                    ],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "look_up_order",
                    "arguments": '{"number": "A-7"}',
                    "status": "completed",
                },
            ],
        }
    )


def test_the_providers_search_items_are_skipped() -> None:
    [call] = calls_from("anthropic", anthropic_message())
    assert (call.name, call.input, call.id) == ("look_up_order", {"number": "A-7"}, "toolu_01")
    [call] = calls_from("openai_responses", responses_response())
    assert (call.name, call.input, call.id) == ("look_up_order", '{"number": "A-7"}', "call_1")
    # The JSON forms read the same.
    as_json = anthropic_message().model_dump(mode="json")
    assert [c.name for c in calls_from("anthropic", as_json["content"])] == ["look_up_order"]
    output = responses_response().model_dump(mode="json")["output"]
    assert [c.name for c in calls_from("openai_responses", output)] == ["look_up_order"]


@pytest.mark.parametrize("fmt", ["anthropic", "openai_responses"])
async def test_a_call_of_what_the_provider_found_is_decided_at_call_time(
    hub: ToolHub, fmt: str
) -> None:
    thinker = hub.bind(Native)
    turn = thinker.begin_turn()
    payload = anthropic_message() if fmt == "anthropic" else responses_response()
    calls = turn.calls_from(fmt, payload)  # type: ignore[arg-type]
    [result] = await thinker.call_many(calls)  # no flag: a native turn decides at call time
    assert (result.status, result.text) == (200, "order A-7: shipped")
    assert "look_up_order" not in thinker.begin_turn().tool_names  # nothing kept
    assert [(g.name, g.decision) for g in hub.grants()] == [("look_up_order", "granted")]
    [single] = await thinker.call_many([("look_up_order", {"number": "B-1"})])
    assert single.status == 200


async def test_a_native_call_the_policy_denies_answers_as_an_unknown_name(hub: ToolHub) -> None:
    thinker = hub.bind(Native, policy=ToolPolicy(deny=["look_up_order"]))
    turn = thinker.begin_turn()
    [call] = turn.calls_from("anthropic", anthropic_message())
    result = await thinker.call(call.name, call.input, call_id=call.id)
    assert (result.status, result.code) == (404, "unknown_tool")
    assert ORDERS.calls == []
