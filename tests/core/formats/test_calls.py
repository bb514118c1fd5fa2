"""Calls in and results out, per provider, on plain JSON shapes (SDK types: test_formats_loops)."""

from __future__ import annotations

import pytest

# A peer its nox session could not install on this Python skips this module, saying so;
# tests/core/test_peers.py fails for any other peer missing.
pytest.importorskip("anthropic", reason="anthropic is not installed on this Python")
pytest.importorskip("openai", reason="openai is not installed on this Python")

from toolpalette import ToolCall, ToolResult, calls_from, render_result, replies

OK = ToolResult("sunny", structured={"sky": "sunny"})
FAILED = ToolResult.failure(400, "invalid_input", "Field `city` is required (a string).")


def test_openai_chat_calls_keep_the_json_text_of_their_arguments() -> None:
    completion = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                        },
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {"name": "weather", "arguments": "{not json"},
                        },
                    ],
                }
            }
        ]
    }
    assert calls_from("openai_chat", completion) == [
        ToolCall("weather", '{"city": "Oslo"}', "call_1", "openai_chat"),
        ToolCall("weather", "{not json", "call_2", "openai_chat"),
    ]
    message = completion["choices"][0]["message"]
    assert calls_from("openai_chat", message) == calls_from("openai_chat", completion)
    assert calls_from("openai_chat", {"role": "assistant", "content": "hi"}) == []


def test_responses_calls_are_the_function_call_items() -> None:
    response = {
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_9",
                "name": "weather",
                "arguments": "{}",
            },
        ]
    }
    assert calls_from("openai_responses", response) == [
        ToolCall("weather", "{}", "call_9", "openai_responses")
    ]


def test_anthropic_calls_are_the_tool_use_blocks() -> None:
    message = {
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
        ]
    }
    assert calls_from("anthropic", message) == [
        ToolCall("weather", {"city": "Oslo"}, "toolu_1", "anthropic")
    ]


def test_mcp_calls_come_from_a_request_or_its_params() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Oslo"}},
    }
    assert calls_from("mcp", request) == [ToolCall("weather", {"city": "Oslo"}, "7", "mcp")]
    assert calls_from("mcp", {"name": "ping"}) == [ToolCall("ping", {}, None, "mcp")]


@pytest.mark.parametrize(
    ("fmt", "payload"),
    [
        ("openai_chat", {"choices": []}),
        ("openai_chat", {"tool_calls": "nope"}),
        ("anthropic", {"content": "text"}),
        ("mcp", {"method": "tools/list"}),
        ("mcp", ["not", "a", "request"]),
        ("gemini", {}),
    ],
)
def test_a_payload_of_the_wrong_shape_is_refused(fmt: str, payload: object) -> None:
    with pytest.raises(ValueError, match=r"not a|unknown format"):
        calls_from(fmt, payload)  # type: ignore[arg-type]


def test_results_in_each_shape() -> None:
    assert render_result("openai_chat", OK, "call_1") == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "sunny",
    }
    assert render_result("openai_responses", FAILED, "call_2") == {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": "Error (400 invalid_input): Field `city` is required (a string).",
    }
    assert render_result("anthropic", FAILED, "toolu_1") == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": FAILED.text}],
        "is_error": True,
    }
    assert render_result("mcp", OK) == {
        "content": [{"type": "text", "text": "sunny"}],
        "isError": False,
        "structuredContent": {"sky": "sunny"},
    }


def test_a_provider_result_needs_its_call_id() -> None:
    with pytest.raises(ValueError, match="id of the call"):
        render_result("openai_chat", OK)
    with pytest.raises(ValueError, match="no provider format"):
        ToolCall("weather", {}, "x").reply(OK)


def test_anthropic_replies_go_in_one_user_message_and_others_one_each() -> None:
    calls = [
        ToolCall("weather", {}, "toolu_1", "anthropic"),
        ToolCall("weather", {}, "toolu_2", "anthropic"),
    ]
    [message] = replies(calls, [OK, FAILED])
    assert message["role"] == "user"
    assert [b["tool_use_id"] for b in message["content"]] == ["toolu_1", "toolu_2"]
    chat = [ToolCall("weather", "{}", "a", "openai_chat"), ToolCall("w", "{}", "b", "openai_chat")]
    assert [r["tool_call_id"] for r in replies(chat, [OK, OK])] == ["a", "b"]
    with pytest.raises(ValueError, match="2 calls but 1 results"):
        replies(chat, [OK])
