"""Schemas: docstrings, generated input models, refiners, checks, validators, outputs.

The schema helpers are internal (what providers are built with): these are their unit
tests, so they import them from their module; what users see goes through ``@tool``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest
import typing_extensions
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from toolpalette import InvalidInputError, Tool, ToolContext, tool
from toolpalette._schema.bounded import compile_validator
from toolpalette._schema.budget import schema_errors
from toolpalette._schema.checks import check_schema, refine
from toolpalette._schema.paths import declared_type, format_path, safe_parts
from toolpalette._tools.signature import function_input_model, output_schema, split_docstring
from toolpalette.errors import InvalidToolSchemaError, ToolDefinitionError
from toolpalette.testing import FakeTool, as_provider

SECRET = "sk-SECRET-0a9b8c7d"


class Point(pydantic.BaseModel):
    x: int
    y: int


@dataclasses.dataclass
class Size:
    width: int
    height: int


class Movie(typing_extensions.TypedDict):
    title: str
    year: int


# -- docstrings -----------------------------------------------------------------------


def test_split_docstring_separates_summary_and_args() -> None:
    doc = """Find files by name.

    Searches the workspace, not the whole disk.

    Args:
        pattern (str): A glob pattern,
            relative to the root.
        limit: At most this many.
        *extra: Ignored extras.

    Returns:
        The paths.
    """
    summary, params = split_docstring(doc)
    assert summary == "Find files by name.\n\nSearches the workspace, not the whole disk."
    assert params == {
        "pattern": "A glob pattern, relative to the root.",
        "limit": "At most this many.",
        "extra": "Ignored extras.",
    }


def test_split_docstring_deeper_lines_continue_a_parameter_even_with_a_colon() -> None:
    doc = """Fetch rows.

    Args:
        limit (int): Max rows.
            Default: 10.
        url: Where.
            Note: must be https.
    """
    assert split_docstring(doc)[1] == {
        "limit": "Max rows. Default: 10.",
        "url": "Where. Note: must be https.",
    }


@pytest.mark.parametrize("doc", [None, "", "   "])
def test_split_docstring_of_nothing(doc: str | None) -> None:
    assert split_docstring(doc) == ("", {})


def test_split_docstring_sections_after_args_end_the_args() -> None:
    summary, params = split_docstring(
        "Do it.\n\nArgs:\n    a: First.\nRaises:\n    ValueError: never.\n"
    )
    assert summary == "Do it."
    assert params == {"a": "First."}


# -- function input models ------------------------------------------------------------


def test_function_input_model_excludes_the_context_and_forbids_extras() -> None:
    def fn(path: str, ctx: ToolContext, depth: int = 2) -> None: ...

    model, context_param = function_input_model(fn, "fn", {"path": "Where."})
    assert context_param == "ctx"
    schema = model.model_json_schema()
    assert set(schema["properties"]) == {"path", "depth"}
    assert schema["required"] == ["path"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["path"]["description"] == "Where."
    assert schema["properties"]["depth"]["default"] == 2


def test_function_input_model_of_no_parameters() -> None:
    def fn() -> None: ...

    model, context_param = function_input_model(fn, "fn", {})
    assert context_param is None
    assert model.model_json_schema()["properties"] == {}


def _star_args(*values: int) -> None: ...


def _star_kwargs(**values: int) -> None: ...


def _positional_only(value: int, /) -> None: ...


def _unannotated(value) -> None:  # type: ignore[no-untyped-def]
    ...


def _unresolvable(value: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
    ...


@pytest.mark.parametrize(
    ("fn", "reason"),
    [
        (_star_args, "passable by keyword"),
        (_star_kwargs, "passable by keyword"),
        (_positional_only, "passable by keyword"),
        (_unannotated, "needs a type annotation"),
        (_unresolvable, "cannot be resolved"),
    ],
)
def test_function_input_model_refuses_bad_signatures(fn: Any, reason: str) -> None:
    with pytest.raises(ToolDefinitionError, match=reason) as info:
        function_input_model(fn, "bad", {})
    assert info.value.tool_name == "bad"


# -- refiners -------------------------------------------------------------------------

BASE = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_refine_edits_a_copy_in_place_or_takes_the_returned_schema() -> None:
    def in_place(schema: dict[str, Any]) -> None:
        schema["properties"]["n"]["maximum"] = 5

    refined = refine(BASE, in_place, "t")
    assert refined["properties"]["n"]["maximum"] == 5
    assert "maximum" not in BASE["properties"]["n"]  # type: ignore[index]
    replacement = {"type": "object"}
    assert refine(BASE, lambda _s: replacement, "t") is replacement


def test_a_refiner_that_raises_refuses_the_tool() -> None:
    def broken(schema: dict[str, Any]) -> None:
        raise KeyError("no such property")

    with pytest.raises(InvalidToolSchemaError) as info:
        refine(BASE, broken, "t")
    assert info.value.tool_name == "t"
    assert info.value.errors == ("refine_schema failed: KeyError",)
    assert isinstance(info.value.__cause__, KeyError)


@pytest.mark.parametrize("garbage", [["not", "a", "dict"], "schema", 42, True])
def test_a_refiner_that_returns_garbage_refuses_the_tool(garbage: Any) -> None:
    with pytest.raises(InvalidToolSchemaError, match="must return a dict or None"):
        refine(BASE, lambda _s: garbage, "t")


# -- check_schema ---------------------------------------------------------------------


def test_check_schema_accepts_a_valid_object_schema() -> None:
    check_schema(BASE, "t")
    check_schema({"type": "string"}, "t", what="output")


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ([], "not an object"),
        ({"type": "string"}, "must have type 'object'"),
        ({"type": "object", "properties": 5}, "input schema $.properties"),
        ({"type": "object", "required": "n"}, "input schema $.required"),
        ({"type": "object", "properties": {"a": {"$ref": "https://example.com/x"}}}, "local"),
        ({"type": "object", "properties": {"a": {"$ref": "file:///etc/passwd"}}}, "local"),
        (
            {"type": "object", "properties": {"a": {"$id": "https://evil/", "type": "string"}}},
            "$id",
        ),
    ],
)
def test_check_schema_refuses(schema: Any, fragment: str) -> None:
    with pytest.raises(InvalidToolSchemaError) as info:
        check_schema(schema, "t")
    assert any(fragment in line for line in info.value.errors), info.value.errors


def test_check_schema_reports_every_problem() -> None:
    schema = {"type": "string", "properties": 5, "$defs": {"a": {"$ref": "http://x/y"}}}
    with pytest.raises(InvalidToolSchemaError) as info:
        check_schema(schema, "t")
    assert len(info.value.errors) >= 3


def test_local_references_are_allowed() -> None:
    check_schema(
        {
            "type": "object",
            "$defs": {"P": {"type": "integer"}},
            "properties": {"p": {"$ref": "#/$defs/P"}},
        },
        "t",
    )


# -- compile_validator never retrieves -------------------------------------------------


def test_compiled_validators_resolve_local_references() -> None:
    schema = {
        "$defs": {"P": {"type": "integer"}},
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P"}},
    }
    validator = compile_validator(schema)
    assert validator.is_valid({"p": 1})
    assert not validator.is_valid({"p": "x"})


def test_compiled_validators_never_retrieve_a_file_reference(tmp_path: Path) -> None:
    from referencing.exceptions import Unresolvable

    target = tmp_path / "remote.json"
    target.write_text(json.dumps({"type": "integer"}))
    schema = {"type": "object", "properties": {"p": {"$ref": target.as_uri()}}}
    validator = compile_validator(schema)
    with pytest.raises(Unresolvable):
        validator.is_valid({"p": 1})


def test_compiled_validators_never_open_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    from referencing.exceptions import Unresolvable

    opened: list[object] = []
    monkeypatch.setattr("urllib.request.urlopen", lambda *a, **k: opened.append(a))
    validator = compile_validator(
        {"type": "object", "properties": {"p": {"$ref": "https://example.com/s"}}}
    )
    with pytest.raises(Unresolvable):
        validator.is_valid({"p": 1})
    assert opened == []


# -- output schemas -------------------------------------------------------------------


@pytest.mark.parametrize("annotation", [Point, Size, Movie])
def test_composite_outputs_get_an_object_schema(annotation: Any) -> None:
    schema = output_schema(annotation)
    assert schema is not None
    assert schema["type"] == "object"
    assert set(schema["properties"]) in ({"x", "y"}, {"width", "height"}, {"title", "year"})
    assert "x-toolpalette-wrapped" not in schema


@pytest.mark.parametrize(("annotation", "kind"), [(dict, None), (dict[str, int], "integer")])
def test_a_dict_publishes_its_own_object_schema(annotation: Any, kind: str | None) -> None:
    schema = output_schema(annotation)
    assert schema is not None
    assert schema["type"] == "object"
    assert "x-toolpalette-wrapped" not in schema
    if kind is not None:
        assert schema["additionalProperties"] == {"type": kind}


@pytest.mark.parametrize(
    ("annotation", "inner"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list, {"type": "array", "items": {}}),
        (list[Point], {"type": "array", "items": {"$ref": "#/$defs/Point"}}),
        (Point | None, {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}),
    ],
)
def test_other_outputs_get_a_wrapping_object_schema(annotation: Any, inner: Any) -> None:
    schema = output_schema(annotation)
    assert schema is not None
    assert schema["x-toolpalette-wrapped"] is True
    assert (schema["type"], schema["required"]) == ("object", ["result"])
    assert schema["properties"]["result"] == inner
    assert ("$defs" in schema) is ("$ref" in json.dumps(inner))
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("annotation", [None, type(None), str, Any])
def test_text_none_and_any_publish_no_schema(annotation: Any) -> None:
    assert output_schema(annotation) is None


@pytest.mark.parametrize(
    ("returns", "expected"),
    [
        ("Point", True),
        ("Size", True),
        ("Movie", True),
        ("int", True),
        ("list[int]", True),
        ("dict[str, int]", True),
        ("str", False),
        ("None", False),
        ("", False),
    ],
)
def test_function_tools_publish_an_output_schema_for_every_declared_type_but_text(
    returns: str, expected: bool
) -> None:
    namespace: dict[str, Any] = {}
    arrow = f" -> {returns}" if returns else ""
    exec(
        f'def fn(a: int){arrow}:\n    """Return it."""\n    return None\n',
        {**globals(), "__name__": __name__},
        namespace,
    )
    provider = as_provider(tool(namespace["fn"]))
    assert (provider.output_schema is not None) is expected


def test_output_is_dumped_through_its_type() -> None:
    @tool
    def where() -> Size:
        """Measure."""
        return Size(1, 2)

    provider = as_provider(where)
    assert provider.dump_output(Size(3, 4)) == {"width": 3, "height": 4}


# -- paths and declared types in messages ----------------------------------------------

NESTED = {
    "type": "object",
    "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    "properties": {
        "p": {"$ref": "#/$defs/P"},
        "items": {"type": "array", "items": {"type": "string"}},
        "scores": {"type": "object", "additionalProperties": {"type": "number"}},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "mode": {"enum": ["a", "b"]},
        "typed_mode": {"type": "string", "enum": ["a", "b"]},
        "named": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"type": "string", "enum": ["read_file"], "description": "Read."},
                    {"type": "string", "const": "write_file"},
                ]
            },
        },
    },
}


def test_format_path() -> None:
    assert format_path([]) == "(input)"
    assert format_path(["items", 2, "name"]) == "items[2].name"
    assert format_path([0]) == "[0]"


def test_safe_parts_hides_keys_the_schema_does_not_declare() -> None:
    assert safe_parts(NESTED, ["p", "x"]) == ["p", "x"]
    assert safe_parts(NESTED, ["scores", "sk-SECRET"]) == ["scores", "*"]
    assert safe_parts(NESTED, ["sk-SECRET", "deeper"]) == ["*", "*"]
    assert safe_parts(NESTED, ["items", 3]) == ["items", 3]


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (["p", "x"], "integer"),
        (["items", 0], "string"),
        (["scores", "*"], "number"),
        (["maybe"], "integer or null"),
        (["mode"], "one of the allowed values"),
        (["typed_mode"], "one of the allowed values"),
        (["named", 1], "one of the allowed values"),
        (["nothing"], "a value matching the schema"),
    ],
)
def test_declared_type(parts: list[object], expected: str) -> None:
    assert declared_type(NESTED, parts) == expected


def test_a_union_with_a_boolean_member_is_described_not_a_crash() -> None:
    schema = {"type": "object", "properties": {"u": {"anyOf": [True, {"type": "integer"}]}}}
    assert declared_type(schema, ["u"]) == "a value matching the schema or integer"
    fake = FakeTool("u", input_schema={**schema, "properties": {"u": {"anyOf": [False]}}})
    with pytest.raises(InvalidInputError) as info:
        fake.parse_input({"u": SECRET})
    assert [str(p) for p in info.value.problems] == ["at u: expected a value matching the schema"]


def test_a_string_off_an_enum_is_refused_as_off_the_list_not_as_a_non_string() -> None:
    # A typed enum (and request_tools' anyOf of one-name enums) refused "expected
    # string" for a string that was not on the list.
    schema = {
        "type": "object",
        "properties": {
            "names": NESTED["properties"]["named"],
            "mode": NESTED["properties"]["typed_mode"],
        },
        "required": ["names", "mode"],
        "additionalProperties": False,
    }
    provider = as_provider(FakeTool("picker", input_schema=schema))
    with pytest.raises(InvalidInputError) as raised:
        provider.parse_input({"names": ["read_file", "drop_table"], "mode": "c"})
    assert sorted((p.path, p.expected) for p in raised.value.problems) == [
        ("mode", "one of the allowed values"),
        ("names[1]", "one of the allowed values"),
    ]
    with pytest.raises(InvalidInputError) as raised:
        provider.parse_input({"names": []})
    assert [(p.path, p.expected) for p in raised.value.problems] == [
        ("mode", "required field, one of the allowed values")
    ]


@tool
def pick(mode: typing_extensions.Literal["fast", "slow"]) -> str:
    """Pick a mode."""
    return mode


def test_a_missing_literal_field_says_it_takes_the_allowed_values() -> None:
    with pytest.raises(InvalidInputError) as raised:
        as_provider(pick).parse_input({})
    assert [(p.path, p.expected) for p in raised.value.problems] == [
        ("mode", "required field, one of the allowed values")
    ]


def test_refined_schema_is_published_and_enforced() -> None:
    def at_most_ten(schema: dict[str, Any]) -> None:
        schema["properties"]["n"]["maximum"] = 10

    @tool(refine_schema=at_most_ten)
    def bounded(n: int) -> int:
        """Bounded."""
        return n

    provider = as_provider(bounded)
    assert provider.input_schema["properties"]["n"]["maximum"] == 10
    assert provider.parse_input({"n": 10}).n == 10
    with pytest.raises(InvalidInputError) as info:
        provider.parse_input({"n": 11})
    assert str(info.value.problems[0]) == "at n: expected number <= 10"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="typing.TypedDict works from 3.12")
def test_a_typed_dict_pydantic_cannot_describe_ships_as_text() -> None:
    import typing

    class Old(typing.TypedDict):
        a: int

    assert output_schema(Old) is None


# -- parameter names pydantic treats specially ---------------------------------------


def _make(params: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(
        f'def fn({params}) -> str:\n    """Doc."""\n    return "ok"\n',
        {"__name__": __name__, "threading": __import__("threading")},
        namespace,
    )
    return namespace["fn"]


@pytest.mark.parametrize(
    "name", ["schema", "json", "copy", "validate", "dict", "model_name", "model"]
)
def test_parameters_named_like_model_attributes_work_without_warnings(name: str) -> None:
    # filterwarnings=error: a pydantic warning here would fail the test.
    provider = as_provider(tool(_make(f"{name}: str")))
    assert list(provider.input_schema["properties"]) == [name]
    value = provider.parse_input({name: "abc"})
    assert getattr(value, name) == "abc"


@pytest.mark.parametrize("name", ["_private", "model_config", "model_dump", "model_fields"])
def test_parameters_that_cannot_be_fields_are_refused_clearly(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="rename it"):
        as_provider(tool(_make(f"{name}: str")))


def test_a_parameter_type_without_a_schema_is_a_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match="cannot form an input model"):
        as_provider(tool(_make("event: threading.Event")))


# -- problems pydantic finds after the schema accepted ---------------------------------


class Meeting(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    when: datetime.date
    room: str

    @pydantic.field_validator("room")
    @classmethod
    def _known_room(cls, value: str) -> str:
        if value.startswith("sk-"):
            raise ValueError(f"unknown room {value}")
        return value


class Calendar(pydantic.BaseModel):
    meetings: list[Meeting]


@tool
class Book(Tool):
    """Book meetings."""

    def run(self, input: Calendar) -> int:
        return len(input.meetings)


def test_problems_pydantic_finds_name_field_and_declared_type_only() -> None:
    provider = as_provider(Book)
    raw = {"meetings": [{"when": "2024-01-01", "room": "a"}, {"when": SECRET, "room": SECRET}]}
    with pytest.raises(InvalidInputError) as info:
        provider.parse_input(raw)
    error = info.value
    assert SECRET not in str(error)
    assert [str(p) for p in error.problems] == [
        "at meetings[1].when: expected string",
        "at meetings[1].room: expected string",
    ]
    assert isinstance(error.__cause__, pydantic.ValidationError)
    assert SECRET in str(error.__cause__)


def test_extra_and_missing_fields_name_paths_and_declared_types_only() -> None:
    with pytest.raises(InvalidInputError) as info:
        as_provider(Book).parse_input({"meetings": [{SECRET: SECRET}]})
    problems = info.value.problems
    assert SECRET not in repr(problems)
    assert [str(p) for p in problems] == [
        "at meetings[0].when: expected required field of type string",
        "at meetings[0].room: expected required field of type string",
        "at meetings[0]: expected no other fields (allowed: room, when)",
    ]


# -- the bounded validator's fast paths decide as jsonschema does -----------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 1.5, -2.0]),
    st.sampled_from(["", "a", "1"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=6,
)
_ITEM_SCHEMAS = st.one_of(
    st.just(True),
    st.just({}),
    st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"]).map(
        lambda kind: {"type": kind, "description": "typed"}
    ),
    st.lists(st.sampled_from(["string", "integer", "null"]), min_size=1, unique=True).map(
        lambda kinds: {"type": kinds}
    ),
    st.sampled_from(
        [
            {"type": "integer", "minimum": 0},
            {"enum": [1, "a", [1], {"a": 1}, True, None]},
            {"const": [1, {"a": 1.0}]},
            {"oneOf": [{"type": "integer"}, {"type": "number"}]},
            {"anyOf": [{"type": "null"}, {"const": 1}]},
            {"type": "string", "enum": ["a", "1"]},
            {"enum": ["a", ""], "description": "by value"},
            {"const": "a"},
            {"type": ["integer", "string"], "const": "1"},
            {"type": "integer", "enum": ["a"]},
            {"enum": []},
            {"anyOf": [{"type": "integer"}, {"const": "a"}]},
            {"anyOf": [{"type": "null"}, {"enum": ["", "1"]}, {"type": "boolean"}]},
            {"anyOf": [{"type": "string"}, {"const": "a"}]},
            {"not": {"type": "string"}},
            {"type": "array", "minItems": 1, "maxItems": 2},
            {"minProperties": 1, "maxProperties": 1},
            {"minLength": 1, "maxLength": 1},
            {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3},
            {"contains": {"type": "string"}, "minContains": 0},
        ]
    ),
)


@settings(max_examples=600, deadline=None)
@given(
    items=_ITEM_SCHEMAS,
    prefix=st.integers(0, 2),
    unique=st.booleans(),
    value=st.lists(_VALUES, max_size=6),
)
def test_the_bounded_keywords_decide_as_jsonschema_does(
    items: Any, prefix: int, unique: bool, value: list[Any]
) -> None:
    field: dict[str, Any] = {"type": "array", "items": items, "uniqueItems": unique}
    if prefix:
        field["prefixItems"] = [{"type": "integer"}] * prefix
    schema = {"type": "object", "properties": {"xs": field}}
    expected = Draft202012Validator(schema).is_valid({"xs": value})
    errors = schema_errors(compile_validator(schema), {"xs": value}, 64)
    assert (not errors) == expected
    assert all(list(e.absolute_path)[:1] == ["xs"] for e in errors)
