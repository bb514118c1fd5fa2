"""ToolResult: one shape for every call, with exactly the public keys."""

from __future__ import annotations

import json
import pickle

import pytest
from toolpalette import ToolResult


def test_success_defaults():
    result = ToolResult("3")
    assert (result.is_error, result.status, result.code, result.text) == (False, 200, "ok", "3")
    assert result.content == [{"type": "text", "text": "3"}]
    assert result.structured is None


def test_failure_constructor():
    result = ToolResult.failure(404, "unknown_tool", "Tool 'x' is not available.")
    assert result.is_error
    assert (result.status, result.code) == (404, "unknown_tool")


def test_as_dict_has_exactly_the_public_keys_in_order():
    data = ToolResult("{}", structured={}).as_dict()
    assert tuple(data) == (
        "is_error",
        "status",
        "code",
        "text",
        "content",
        "structured",
    )


def test_to_json_round_trips():
    result = ToolResult('{"a":"é"}', structured={"a": "é"})
    data = json.loads(result.to_json())
    assert data == result.as_dict()
    assert ToolResult.from_dict(data) == result


def test_explicit_content_blocks_are_kept():
    blocks = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    result = ToolResult("ab", content=blocks)
    assert result.content == blocks


def test_is_immutable_and_content_is_a_fresh_copy():
    result = ToolResult("x")
    with pytest.raises(AttributeError):
        result.text = "y"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del result.status
    result.content[0]["text"] = "changed"
    result.content.append({"type": "text", "text": "more"})
    assert result.content == [{"type": "text", "text": "x"}]


def test_equality_hash_pickle_and_repr():
    a = ToolResult.failure(504, "timeout", "late")
    b = ToolResult.failure(504, "timeout", "late")
    assert a == b
    assert hash(a) == hash(b)
    assert a != ToolResult("late")
    assert a.__eq__("late") is NotImplemented
    assert pickle.loads(pickle.dumps(a)) == a
    assert "504" in repr(a)
    assert "timeout" in repr(a)
    assert "ok" in repr(ToolResult("fine"))
