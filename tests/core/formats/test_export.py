"""Palette schemas in each provider's format: order, reproducible bytes, honest ``strict``.

``export`` and ``qualifies_strict`` are internal (what ``turn.schemas(fmt)`` runs):
these are their unit tests, so they import them from their module.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolpalette import FunctionToolProvider, RequestSkillProvider, RequestToolsProvider, tool
from toolpalette._formats.export import export, export_json, qualifies_strict
from toolpalette.testing import FORMATS


@tool(read_only=True)
def closed(a: int, b: str) -> str:
    """Every field required."""
    return b * a


@tool
def with_default(a: int, b: str = "x") -> dict[str, int]:
    """One field optional.

    Args:
        a: How many.
        b: What.
    """
    return {b: a}


@tool(read_only=True)
def odd_names(default: str, properties: int, contains: bool) -> str:
    """Parameters named like JSON Schema keywords."""
    return default


CLOSED = FunctionToolProvider(closed)
DEFAULTED = FunctionToolProvider(with_default)
ODD = FunctionToolProvider(odd_names)
META = RequestToolsProvider([("closed", "Every field required.")])


def _name(fmt: str, entry: dict[str, Any]) -> str:
    return entry["function"]["name"] if fmt == "openai_chat" else entry["name"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_format_keeps_the_order_given(fmt: str) -> None:
    for order in ([CLOSED, DEFAULTED, META], [META, DEFAULTED, CLOSED]):
        exported = export(order, fmt)  # type: ignore[arg-type]
        assert [_name(fmt, e) for e in exported] == [p.name for p in order]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_export_json_is_byte_reproducible(fmt: str) -> None:
    first = export_json([CLOSED, DEFAULTED, META], fmt)  # type: ignore[arg-type]
    again = export_json(
        [FunctionToolProvider(closed), FunctionToolProvider(with_default), META],
        fmt,  # type: ignore[arg-type]
    )
    assert first == again
    assert json.loads(first) == export([CLOSED, DEFAULTED, META], fmt)  # type: ignore[arg-type]
    assert export_json([DEFAULTED, CLOSED], fmt) != export_json([CLOSED, DEFAULTED], fmt)  # type: ignore[arg-type]


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="openai_chat"):
        export([CLOSED], "gemini")  # type: ignore[arg-type]


def test_openai_chat_shape() -> None:
    [entry] = export([CLOSED], "openai_chat")
    assert entry == {
        "type": "function",
        "function": {
            "name": "closed",
            "description": "Every field required.",
            "parameters": CLOSED.input_schema,
            "strict": True,
        },
    }
    [entry] = export([DEFAULTED], "openai_chat")
    assert "strict" not in entry["function"]


def test_openai_responses_shape() -> None:
    entries = export([CLOSED, DEFAULTED], "openai_responses")
    assert entries[0] == {
        "type": "function",
        "name": "closed",
        "description": "Every field required.",
        "parameters": CLOSED.input_schema,
        "strict": True,
    }
    assert entries[1]["strict"] is False


def test_anthropic_shape() -> None:
    # Anthropic's strict subset allows optional fields and defaults.
    assert export([DEFAULTED], "anthropic") == [
        {
            "name": "with_default",
            "description": DEFAULTED.description,
            "input_schema": DEFAULTED.input_schema,
            "strict": True,
        }
    ]


def test_mcp_shape_carries_read_only_and_output_schema() -> None:
    closed_entry, defaulted_entry = export([CLOSED, DEFAULTED], "mcp")
    assert closed_entry["inputSchema"] == CLOSED.input_schema
    assert closed_entry["annotations"]["readOnlyHint"] is True
    assert defaulted_entry["annotations"]["readOnlyHint"] is False
    assert closed_entry["title"] == CLOSED.display_name
    assert ("outputSchema" in defaulted_entry) is (DEFAULTED.output_schema is not None)
    assert "outputSchema" not in closed_entry or CLOSED.output_schema is not None


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_guidance_has_no_place_in_any_format(fmt: str) -> None:
    # None of the tool shapes (OpenAI's functions, Anthropic's tools, MCP's Tool) has a
    # field for text meant for the conversation's preamble; it is not folded into the
    # description either.
    @tool(guidance="Call me before any other tool.")
    def first() -> str:
        """Start here."""
        return ""

    @tool(name="first")
    def without() -> str:
        """Start here."""
        return ""

    provider = FunctionToolProvider(first)
    assert provider.info.guidance == "Call me before any other tool."
    exported = export_json([provider], fmt)  # type: ignore[arg-type]
    assert exported == export_json([FunctionToolProvider(without)], fmt)  # type: ignore[arg-type]


# -- strict ------------------------------------------------------------------------------


def _obj(**props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def test_closed_objects_with_every_property_required_qualify() -> None:
    assert qualifies_strict(_obj(a={"type": "integer"}, b=_obj(c={"type": "string"})))
    assert qualifies_strict(_obj())
    assert qualifies_strict(_obj(xs={"type": "array", "items": _obj(k={"enum": ["a", "b"]})}))
    assert qualifies_strict(_obj(u={"anyOf": [{"type": "string"}, {"type": "null"}]}))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {**_obj(a={"type": "integer"}), "required": []},
        _obj(a={"type": "integer", "default": 1}),
        _obj(inner={"type": "object", "properties": {"x": {"type": "string"}}}),
        _obj(xs={"type": "array", "items": {"type": "object", "properties": {}}}),
        _obj(opt={"type": ["object", "null"], "properties": {"x": {"type": "string"}}}),
    ],
)
def test_open_objects_optional_fields_and_defaults_do_not(schema: dict[str, Any]) -> None:
    assert not qualifies_strict(schema)


@pytest.mark.parametrize("keyword", ["oneOf", "allOf", "not", "if", "patternProperties"])
def test_keywords_strict_mode_rejects_do_not_qualify(keyword: str) -> None:
    value: Any = {"not": {"type": "string"}, "if": {"type": "string"}}.get(keyword)
    if keyword in ("oneOf", "allOf"):
        value = [{"type": "string"}, {"type": "integer"}]
    if keyword == "patternProperties":
        value = {"^x": {"type": "string"}}
    assert not qualifies_strict(_obj(field={keyword: value}))


def test_property_names_are_not_read_as_keywords() -> None:
    # Regression: the walk treated a "properties" map as a schema, so a parameter named
    # "default" (or "properties") cost the tool its strict flag.
    assert qualifies_strict(ODD.input_schema)
    [entry] = export([ODD], "openai_chat")
    assert entry["function"]["strict"] is True


def test_the_meta_tools_are_strict_as_they_stand() -> None:
    # Their catalog was a oneOf of consts with uniqueItems, outside both strict subsets;
    # it is now an anyOf of one-name enums, and duplicates are merged by the handler.
    for provider in (META, RequestSkillProvider([("io.x/a", "A.")])):
        assert qualifies_strict(provider.input_schema, "openai")
        assert qualifies_strict(provider.input_schema, "anthropic")
        assert export([provider], "openai_responses")[0]["strict"] is True
        assert export([provider], "openai_chat")[0]["function"]["strict"] is True
        assert export([provider], "anthropic")[0]["strict"] is True


def test_real_tool_schemas() -> None:
    assert qualifies_strict(CLOSED.input_schema)
    assert not qualifies_strict(DEFAULTED.input_schema)


def test_mcp_carries_every_annotation_the_tool_declares() -> None:
    @tool(destructive=False, idempotent=True, open_world=False)
    def rename(old: str, new: str) -> str:
        """Rename a label."""
        return new

    [mutating, reading] = export([FunctionToolProvider(rename), CLOSED], "mcp")
    assert mutating["annotations"] == {
        "title": mutating["title"],
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    # destructive and idempotent mean nothing for a read-only tool (the MCP spec).
    assert set(reading["annotations"]) == {"title", "readOnlyHint", "openWorldHint"}
    assert reading["annotations"]["openWorldHint"] is True  # MCP's default: open world


def test_the_mcp_listing_says_task_support_only_when_declared() -> None:
    from toolpalette import function_tool

    never = function_tool("never", "Never.", {"type": "object", "properties": {}}, lambda: "x")
    maybe = function_tool(
        "maybe",
        "Maybe.",
        {"type": "object", "properties": {}},
        lambda: "x",
        task_support="optional",
    )
    listed = export([never, maybe], "mcp")
    assert "execution" not in listed[0]
    assert listed[1]["execution"] == {"taskSupport": "optional"}
