"""The fast metaschema check: "valid" only where jsonschema agrees, and check_schema unchanged.

``check_schema`` decides a schema's validity without jsonschema when
``toolpalette._schema.metaschema.surely_valid`` is sure, and asks jsonschema otherwise.
These tests hold the walk to jsonschema's own metaschema check (the one check_schema
ran before, without a format checker) on generated schemas, valid and subtly invalid,
and show that check_schema's outcome is what it is with the walk switched off.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from typing import Any
from unittest import mock

import jsonschema_specifications  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from toolpalette import ToolHub
from toolpalette._schema import checks as schema_module
from toolpalette._schema.checks import check_schema
from toolpalette._schema.metaschema import (
    ANCHOR_PATTERN,
    ID_PATTERN,
    KEYWORDS,
    SCHEMA_URIS,
    SIMPLE_TYPES,
    surely_valid,
)
from toolpalette.errors import InvalidToolSchemaError

META = Draft202012Validator(Draft202012Validator.META_SCHEMA)
VOCABULARIES = (
    *("core", "applicator", "unevaluated", "validation"),
    *("meta-data", "format-annotation", "content"),
)


def meta_valid(schema: Any) -> bool:
    """What check_schema asked jsonschema before: no error against the metaschema."""
    return next(iter(META.iter_errors(schema)), None) is None


def outcome(schema: Any) -> list[str] | None:
    """check_schema's refusal (its errors), or None when it accepts."""
    try:
        check_schema(schema, "t")
    except InvalidToolSchemaError as exc:
        return list(exc.errors)
    return None


def outcome_before(schema: Any) -> list[str] | None:
    """check_schema's outcome with the fast walk never sure: jsonschema decides alone."""
    with mock.patch.object(schema_module, "surely_valid", return_value=False):
        return outcome(schema)


# -- the keywords are the metaschema's --------------------------------------------------


def _metaschema(name: str) -> dict[str, Any]:
    uri = "https://json-schema.org/draft/2020-12/" + (f"meta/{name}" if name else "schema")
    contents: dict[str, Any] = jsonschema_specifications.REGISTRY.contents(uri)
    return contents


def test_the_walk_knows_every_keyword_the_metaschema_names_and_no_other() -> None:
    named = set(_metaschema("")["properties"])
    for vocabulary in VOCABULARIES:
        named |= set(_metaschema(vocabulary)["properties"])
    assert set(KEYWORDS) == named


def test_the_walks_patterns_and_types_are_the_metaschemas() -> None:
    core, validation = _metaschema("core"), _metaschema("validation")
    assert ID_PATTERN.pattern == core["properties"]["$id"]["pattern"]
    assert ANCHOR_PATTERN.pattern == core["$defs"]["anchorString"]["pattern"]
    assert set(validation["$defs"]["simpleTypes"]["enum"]) == SIMPLE_TYPES


# -- generated schemas ------------------------------------------------------------------

JUNK = st.sampled_from([None, True, False, 0, 1, -1, 1.0, 1.5, "x", "", [], {}, ["a"], {"a": 1}])
NAMES = st.sampled_from(["a", "b", "c", "$ref", "type", "pattern"])
COUNTS = st.sampled_from([0, 1, 7, 1.0, 0.0, -0.0, 2**70, -1, -1.0, 1.5, True, "1", None])
COUNTS |= st.floats(allow_nan=True, allow_infinity=True)
NUMBERS = st.sampled_from([0, 1, -2, 0.5, 1.0, 1e300, True, False, "1", None, [1]])
NUMBERS |= st.floats(allow_nan=True, allow_infinity=True)
TYPE_NAMES = st.sampled_from([*sorted(SIMPLE_TYPES), "dict", "float", "any", "", "Object"])
TYPES = TYPE_NAMES | st.lists(TYPE_NAMES | JUNK, max_size=4) | JUNK
STRING_ARRAYS = st.lists(st.sampled_from(["a", "b", "c", "a", 1, None]), max_size=4) | JUNK
TEXT = st.sampled_from(["", "x", "a b", "#", "a#", "a#b", "#a", "x\n", "_a", "1a", "a.b-c"])
STRINGS = TEXT | JUNK
URIS = st.sampled_from([*sorted(SCHEMA_URIS), "http://json-schema.org/draft-04/schema#", "x"])


def _schemas(children: st.SearchStrategy[Any], *, junk: bool) -> st.SearchStrategy[Any]:
    """Schema objects of a few keywords each, values drawn per keyword (JUNK: any value)."""

    def either(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return good | JUNK if junk else good

    schema_map = st.dictionaries(NAMES, children, max_size=3)
    string_arrays = st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True)
    values: dict[str, st.SearchStrategy[Any]] = {
        "type": TYPES if junk else TYPE_NAMES.filter(SIMPLE_TYPES.__contains__),
        "properties": either(schema_map),
        "patternProperties": either(schema_map),
        "$defs": either(schema_map),
        "definitions": either(schema_map),
        "dependentSchemas": either(schema_map),
        "dependencies": either(st.dictionaries(NAMES, children | string_arrays, max_size=3)),
        "items": either(children),
        "additionalProperties": either(children),
        "not": either(children),
        "if": either(children),
        "contentSchema": either(children),
        "unevaluatedProperties": either(children),
        "anyOf": either(st.lists(children, min_size=1, max_size=3)),
        "prefixItems": either(st.lists(children, min_size=1, max_size=3)),
        "allOf": either(st.lists(children, min_size=1, max_size=3)),
        "required": STRING_ARRAYS if junk else string_arrays,
        "dependentRequired": either(st.dictionaries(NAMES, string_arrays, max_size=2)),
        "minLength": COUNTS if junk else st.sampled_from([0, 3, 1.0, 2**70]),
        "maxItems": COUNTS if junk else st.sampled_from([0, 3, 1.0]),
        "minContains": COUNTS if junk else st.just(1),
        "minimum": NUMBERS if junk else st.sampled_from([0, -2, 0.5, float("nan")]),
        "exclusiveMaximum": NUMBERS if junk else st.sampled_from([1, float("inf")]),
        "multipleOf": NUMBERS if junk else st.sampled_from([1, 0.5, 1e-300, float("inf")]),
        "uniqueItems": either(st.booleans()),
        "deprecated": either(st.booleans()),
        "enum": either(st.lists(st.integers() | st.text(max_size=2), max_size=3)),
        "examples": either(st.lists(JUNK, max_size=2)),
        "const": JUNK,
        "default": JUNK,
        "description": either(TEXT),
        "format": either(st.sampled_from(["uri", "no-such-format"])),
        "pattern": either(st.sampled_from(["^a+$", "(", "\\p{L}"])),
        "$ref": either(st.sampled_from(["#", "#/$defs/a", "other.json#/x"])),
        "$comment": either(TEXT),
        "$id": STRINGS if junk else st.sampled_from(["", "a", "a#", "x\n"]),
        "$anchor": STRINGS if junk else st.sampled_from(["_a", "a.b-c"]),
        "$schema": URIS | JUNK if junk else st.sampled_from(sorted(SCHEMA_URIS)),
        "optional": JUNK,  # not named by the metaschema: any value
        "x-vendor": JUNK,
    }
    if junk:  # named by the metaschema, left to jsonschema
        for keyword in ("$dynamicRef", "$dynamicAnchor", "$vocabulary", "$recursiveRef"):
            values[keyword] = st.sampled_from(["#meta", "meta", {"x": True}]) | JUNK
    keys = st.lists(st.sampled_from(sorted(values)), max_size=4, unique=True)
    return keys.flatmap(lambda chosen: st.fixed_dictionaries({k: values[k] for k in chosen}))


def _tree(*, junk: bool) -> st.SearchStrategy[Any]:
    leaves = st.booleans() | _schemas(st.booleans(), junk=junk)
    if junk:
        leaves |= JUNK
    return st.recursive(leaves, lambda children: _schemas(children, junk=junk), max_leaves=12)


ANY_SCHEMA = _schemas(_tree(junk=True), junk=True)
VALID_SCHEMA = _schemas(_tree(junk=False), junk=False)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(ANY_SCHEMA)
def test_the_walk_says_valid_only_where_jsonschema_does(schema: dict[str, Any]) -> None:
    if surely_valid(schema):
        assert meta_valid(schema), schema


@SETTINGS
@given(ANY_SCHEMA)
def test_check_schema_decides_as_before(schema: dict[str, Any]) -> None:
    assert outcome(schema) == outcome_before(schema)


@SETTINGS
@given(VALID_SCHEMA)
def test_schemas_of_the_common_keywords_take_the_fast_path(schema: dict[str, Any]) -> None:
    assert surely_valid(schema), schema
    assert meta_valid(schema)


# -- chosen cases -----------------------------------------------------------------------

SUBTLY_INVALID: list[Any] = [
    {"type": "dict"},
    {"type": []},
    {"type": ["string", "string"]},
    {"type": ["string", 1]},
    {"required": ["a", "a"]},
    {"required": "a"},
    {"required": [1]},
    {"minLength": -1},
    {"minLength": 1.5},
    {"minLength": True},
    {"maxItems": "1"},
    {"minContains": float("inf")},
    {"multipleOf": 0},
    {"multipleOf": -1.0},
    {"minimum": True},
    {"anyOf": []},
    {"allOf": {}},
    {"prefixItems": []},
    {"items": [{"type": "string"}]},
    {"items": 1},
    {"properties": []},
    {"properties": {"a": 1}},
    {"properties": {"a": {"type": "float"}}},
    {"dependentRequired": {"a": ["b", "b"]}},
    {"dependencies": {"a": 1}},
    {"enum": {"a": 1}},
    {"examples": "x"},
    {"uniqueItems": 1},
    {"description": 1},
    {"$id": "a#b"},
    {"$anchor": "1a"},
    {"$schema": 1},
    {"$defs": {"a": {"$defs": {"b": {"minItems": -1}}}}},
]

VALID: list[Any] = [
    {"minLength": 1.0, "maxItems": 0.0, "minProperties": 2**70},
    {"type": ["string", "null"], "required": []},
    {"multipleOf": 1e-300, "minimum": float("nan"), "maximum": float("-inf")},
    {"enum": [], "const": None, "default": {"x": object}},
    {"items": False, "additionalProperties": True, "not": {}},
    {"dependencies": {"a": ["b"], "c": {"required": ["d"]}}},
    {"$id": "x\n", "$anchor": "_a.b-c", "$comment": "", "$ref": "no such place"},
    {"format": "no-such-format", "pattern": "("},
    {"additionalItems": 1, "x-vendor": [1, 1], "optional": True},
]


@pytest.mark.parametrize("schema", SUBTLY_INVALID)
def test_subtly_invalid_schemas_go_to_jsonschema_which_names_the_problem(schema: Any) -> None:
    assert not surely_valid(schema)
    assert not meta_valid(schema)
    errors = outcome(schema)
    assert errors is not None
    assert errors == outcome_before(schema)


@pytest.mark.parametrize("schema", VALID)
def test_valid_corner_cases_take_the_fast_path(schema: Any) -> None:
    assert surely_valid(schema)
    assert meta_valid(schema)


class Count(int):
    """An int of another type: jsonschema counts it, the walk leaves it to jsonschema."""


class Schema(dict[str, Any]):
    """A dict of another type, as above."""


@pytest.mark.parametrize(
    "schema",
    [
        {"$dynamicRef": "#meta"},
        {"$dynamicAnchor": "meta"},
        {"$vocabulary": {"https://example.com/v": True}},
        {"$recursiveRef": "#"},
        {"$recursiveAnchor": "a"},
        {"$schema": "https://example.com/my-dialect"},
        {"properties": {1: {}}},
        {"multipleOf": float("nan")},  # jsonschema: NaN <= 0 is false, so valid
        {"minLength": Count(1)},
        Schema(type="string"),
    ],
)
def test_what_the_walk_does_not_check_is_left_to_jsonschema(schema: Any) -> None:
    assert not surely_valid(schema)
    assert meta_valid(schema)  # valid all the same: jsonschema decides


def test_a_deep_schema_is_walked_without_recursion() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(20_000):  # far past the recursion limit
        deep = {"type": "array", "items": deep}
    assert surely_valid(deep)
    bad: dict[str, Any] = {"minLength": -1}
    for _ in range(20_000):
        bad = {"anyOf": [bad]}
    assert not surely_valid(bad)


def test_a_subschema_shared_by_many_places_is_walked_once() -> None:
    shared: dict[str, Any] = {"type": "integer"}
    for _ in range(200):  # 2**200 places, 200 objects
        shared = {"allOf": [shared, shared]}
    assert surely_valid(shared)


# -- real schemas -----------------------------------------------------------------------


def _installed_schemas() -> Iterator[dict[str, Any]]:
    hub = ToolHub()
    try:
        for provider in hub.catalog().providers():
            yield provider.input_schema
            if provider.output_schema is not None:
                yield provider.output_schema
    finally:
        hub.close()


def test_the_installed_packs_schemas_take_the_fast_path() -> None:
    schemas = list(_installed_schemas())
    assert len(schemas) > 10
    for schema in schemas:
        assert surely_valid(schema), json.dumps(schema)[:200]
        assert meta_valid(schema)


# A server of the Python SDK (pydantic's schemas) and one of the TypeScript SDK (zod's,
# each declaring draft-07).
PEERS = ("TOOLPALETTE_MCP_TIME", "TOOLPALETTE_MCP_FILESYSTEM")


def test_real_mcp_servers_schemas_take_the_fast_path() -> None:
    if not all(os.environ.get(v) for v in PEERS):
        pytest.skip("the peer MCP servers are not set: run the tests through `nox -s tests`")
    with tempfile.TemporaryDirectory() as root:
        servers = {
            "time": {"command": os.environ[PEERS[0]], "args": ["--local-timezone", "UTC"]},
            "files": {"command": os.environ[PEERS[1]], "args": [root]},
        }
        hub = ToolHub(autoload=False, config={}, mcp_servers=servers)
        try:
            schemas = [
                schema
                for name in servers
                for provider in hub.providers_for_server(name)
                for schema in (provider.input_schema, provider.output_schema)
                if schema is not None
            ]
            assert hub.problems() == []
        finally:
            hub.close()
    assert len(schemas) > 20  # the files server's input and output schemas among them
    for schema in schemas:
        assert surely_valid(schema), json.dumps(schema)[:200]
        assert meta_valid(schema)
