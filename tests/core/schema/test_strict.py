"""Strict mode that is right: the providers' strict subsets, normalization, and the way back."""

from __future__ import annotations

import enum
from typing import Any

import jsonschema
import pytest
from pydantic import AnyUrl
from toolpalette import (
    FunctionToolProvider,
    RequestSkillProvider,
    RequestToolsProvider,
    ToolHub,
    tool,
)
from toolpalette._formats.export import export, strict_report
from toolpalette._schema.strict import normalize, problems, qualifies, restore_input

DIALECTS = ("openai", "anthropic")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@tool(read_only=True)
def paint(color: Color, coats: int) -> str:
    """Paint the wall.

    Args:
        color: The paint's color.
        coats: How many coats.
    """
    return f"{coats} x {color.value}"


@tool(read_only=True)
def place(at: tuple[int, int]) -> str:
    """Place a marker at a point."""
    return f"{at[0]},{at[1]}"


@tool(read_only=True)
def fetch_page(url: AnyUrl) -> str:
    """Fetch a page."""
    return str(url)


@tool(read_only=True)
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool(read_only=True)
def search(
    text: str, limit: int = 10, exact: bool = False, note: str | None = "n"
) -> dict[str, Any]:
    """Search.

    Args:
        text: What to look for.
        limit: Most results.
        exact: Match exactly.
        note: A note (null is a value here).
    """
    return {"text": text, "limit": limit, "exact": exact, "note": note}


TRAPS = {
    "ref_with_siblings": FunctionToolProvider(paint),
    "prefix_items": FunctionToolProvider(place),
    "format_uri": FunctionToolProvider(fetch_page),
    "parameterless": FunctionToolProvider(ping),
}


# -- the traps -----------------------------------------------------------------------------


def test_a_required_enum_documented_in_args_is_a_ref_with_siblings() -> None:
    schema = TRAPS["ref_with_siblings"].input_schema
    color = schema["properties"]["color"]
    assert "$ref" in color
    assert "description" in color
    assert any("`$ref` with sibling keys" in line for line in problems(schema, "openai"))
    [entry] = export([TRAPS["ref_with_siblings"]], "openai_chat")
    assert "strict" not in entry["function"]


def test_a_tuple_is_prefix_items_which_no_strict_subset_has() -> None:
    schema = TRAPS["prefix_items"].input_schema
    assert "prefixItems" in schema["properties"]["at"]
    for dialect in DIALECTS:
        assert any("prefixItems" in line for line in problems(schema, dialect))  # type: ignore[arg-type]


def test_format_uri_is_outside_openai_but_inside_anthropic_apart_from_lengths() -> None:
    schema = TRAPS["format_uri"].input_schema
    assert schema["properties"]["url"]["format"] == "uri"
    assert any("format 'uri'" in line for line in problems(schema, "openai"))
    assert not any("format" in line for line in problems(schema, "anthropic"))
    assert not qualifies(schema, "anthropic")  # pydantic adds minLength/maxLength


def test_a_parameterless_tool_needs_an_empty_required_list_for_openai() -> None:
    schema = TRAPS["parameterless"].input_schema
    if "required" not in schema:  # the trap: no `required` at all
        assert not qualifies(schema, "openai")
    normalized = normalize(schema, "openai")
    assert normalized.ok
    assert normalized.schema["required"] == []
    assert qualifies({**schema, "required": []}, "openai")


@pytest.mark.parametrize("trap", sorted(TRAPS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_trap_normalizes_into_the_subset(trap: str, dialect: str) -> None:
    provider = TRAPS[trap]
    normalized = normalize(provider.input_schema, dialect)  # type: ignore[arg-type]
    assert normalized.ok, normalized.problems
    assert problems(normalized.schema, dialect) == []  # type: ignore[arg-type]
    jsonschema.Draft202012Validator.check_schema(normalized.schema)


def test_the_inlined_enum_keeps_its_description_and_values() -> None:
    color = normalize(TRAPS["ref_with_siblings"].input_schema, "openai").schema["properties"][
        "color"
    ]
    assert color["enum"] == ["red", "blue"]
    assert color["description"] == "The paint's color."


def test_a_tuple_becomes_items_with_its_length() -> None:
    at = normalize(TRAPS["prefix_items"].input_schema, "openai").schema["properties"]["at"]
    assert at["items"] == {"type": "integer"}
    assert (at["minItems"], at["maxItems"]) == (2, 2)
    # Anthropic has no maxItems and only minItems 0/1: the length moves to the description.
    at = normalize(TRAPS["prefix_items"].input_schema, "anthropic").schema["properties"]["at"]
    assert "maxItems" not in at
    assert "at most 2 items" in at["description"]


def test_unsupported_keywords_that_only_validate_move_into_the_description() -> None:
    url = normalize(TRAPS["format_uri"].input_schema, "openai").schema["properties"]["url"]
    assert "format" not in url
    assert "minLength" not in url
    assert '"uri" format' in url["description"]


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            {"type": "object", "properties": {"a": {"not": {"type": "string"}}}},
            "`not`",
        ),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "free-form keys"),
        (
            {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
            "`patternProperties`",
        ),
    ],
)
def test_what_cannot_be_normalized_is_reported(schema: dict[str, Any], reason: str) -> None:
    for dialect in DIALECTS:
        normalized = normalize(schema, dialect)  # type: ignore[arg-type]
        assert not normalized.ok
        assert any(reason in line for line in normalized.problems)
        assert normalized.schema == schema  # the original, unchanged


def test_an_alternative_that_cannot_be_expressed_is_left_out_and_said() -> None:
    schema = {
        "type": "object",
        "properties": {
            "params": {
                "anyOf": [
                    {"type": "array", "items": {"type": "string"}},
                    {"type": "object", "additionalProperties": {"type": "string"}},
                ]
            }
        },
        "required": ["params"],
        "additionalProperties": False,
    }
    normalized = normalize(schema, "openai")
    assert normalized.ok
    assert normalized.schema["properties"]["params"]["anyOf"] == [
        {"type": "array", "items": {"type": "string"}}
    ]
    assert normalized.narrowed == ("properties.params: alternative 1 left out",)


def test_a_recursive_schema_is_strict_for_openai_only() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "additionalProperties": False,
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "required": ["kids"],
                "additionalProperties": False,
            }
        },
    }
    assert qualifies(schema, "openai")
    assert any("recursive" in line for line in problems(schema, "anthropic"))


# -- optional fields: required and nullable, and back ------------------------------------------


def test_optional_fields_become_required_and_nullable() -> None:
    provider = FunctionToolProvider(search)
    normalized = normalize(provider.input_schema, "openai")
    props = normalized.schema["properties"]
    assert normalized.schema["required"] == ["text", "limit", "exact", "note"]  # order kept
    assert props["limit"]["type"] == ["integer", "null"]
    assert props["exact"]["type"] == ["boolean", "null"]
    assert "default" not in props["limit"]
    validator = jsonschema.Draft202012Validator(normalized.schema)
    assert validator.is_valid({"text": "a", "limit": None, "exact": None, "note": None})
    assert not validator.is_valid({"text": "a"})


def test_a_null_for_an_optional_field_means_not_given_on_the_way_in() -> None:
    provider = FunctionToolProvider(search)
    raw = {"text": "a", "limit": None, "exact": True, "note": None}
    restored = restore_input(provider.input_schema, raw)
    # `limit` does not accept null: its default applies; `note` does: null is kept.
    assert restored == {"text": "a", "exact": True, "note": None}
    assert raw["limit"] is None  # the caller's value is untouched
    value = provider.parse_input(restored)
    assert (value.limit, value.exact, value.note) == (10, True, None)


def test_restore_walks_nested_objects_arrays_and_refs() -> None:
    schema = {
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}},
        },
        "required": ["rows"],
        "$defs": {
            "Row": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "string", "default": "x"}},
                "required": ["a"],
            }
        },
    }
    assert restore_input(schema, {"rows": [{"a": 1, "b": None}, {"a": 2, "b": "y"}]}) == {
        "rows": [{"a": 1}, {"a": 2, "b": "y"}]
    }


# -- exports, the report and the first-party table --------------------------------------------


def test_anthropic_strict_is_sent_where_it_qualifies() -> None:
    closed = FunctionToolProvider(paint)
    [entry] = export([FunctionToolProvider(search)], "anthropic")
    assert entry["strict"] is True  # optional fields, anyOf and default are all allowed
    [entry] = export([closed], "anthropic")
    assert "strict" not in entry  # the $ref with siblings
    [entry] = export([closed], "anthropic", strict=True)
    assert entry["strict"] is True
    assert entry["input_schema"]["properties"]["color"]["enum"] == ["red", "blue"]


def test_strict_report_names_what_normalization_could_not_fix() -> None:
    @tool
    def tag(labels: dict[str, str]) -> str:
        """Tag things."""
        return ""

    providers = [FunctionToolProvider(tag), FunctionToolProvider(search)]
    before = strict_report(providers, "openai_chat")
    assert set(before) == {"tag", "search"}
    after = strict_report(providers, "openai_chat", strict=True)
    assert list(after) == ["tag"]
    assert "free-form keys" in after["tag"][0]
    assert set(strict_report(providers, "mcp")) == {"tag", "search"}


META = [RequestToolsProvider([("a", "A.")]), RequestSkillProvider([("io.x/b", "B.")])]


@pytest.mark.parametrize("fmt", ["openai_chat", "openai_responses", "anthropic"])
def test_every_first_party_tool_and_both_meta_tools_are_strict_when_normalized(fmt: str) -> None:
    providers = [*ToolHub().catalog().providers(), *META]
    assert len(providers) > len(META), "the first-party packs are not installed"
    assert strict_report(providers, fmt, strict=True) == {}  # type: ignore[arg-type]
    for entry in export(providers, fmt, strict=True):  # type: ignore[arg-type]
        body = entry.get("function", entry)
        assert body["strict"] is True
        schema = body.get("parameters", body.get("input_schema"))
        jsonschema.Draft202012Validator.check_schema(schema)


def test_the_meta_tools_are_strict_without_normalization() -> None:
    for fmt in ("openai_chat", "openai_responses", "anthropic"):
        assert strict_report(META, fmt) == {}  # type: ignore[arg-type]
