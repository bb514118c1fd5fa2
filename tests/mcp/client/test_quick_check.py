"""The quick input check of MCP tools says yes only where the bounded validator does.

Generated schemas of the subset it decides (types, properties, required, additional
properties, items, sizes, bounds, enum, const, anyOf, allOf, local ``$ref``) mixed with
annotations and with keywords it leaves to the validator, and instances near them: every
instance the quick check accepts is accepted by the bounded validator (a hand-written
schema's tool, ``function_tool``) and by jsonschema itself. The schemas the real servers
list get a quick check.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolpalette import InvalidInputError, ToolHub, function_tool
from toolpalette._schema.quick_check import MAX_WORK, compile_check

from .conftest import PROGRESS_SERVER, peer

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 2.5, -1.0, 1e20, 2**53 + 1])
    | st.sampled_from(["", "a", "b", "ab", "é", "abc"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=3)
    ),
    max_leaves=8,
)
annotations = st.fixed_dictionaries(
    {},
    optional={
        "title": st.just("T"),
        "description": st.just("D"),
        "default": scalars,
        "format": st.sampled_from(["email", "date-time", "uri"]),  # never asserted
        "x-vendor": st.just(1),  # unknown: ignored
    },
)


def leaves() -> st.SearchStrategy[Any]:
    types = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
    return st.one_of(
        st.builds(lambda t: {"type": t}, types),
        st.builds(lambda ts: {"type": ts}, st.lists(types, min_size=1, max_size=3, unique=True)),
        st.builds(
            lambda lo, span, key: {"type": "number", key[0]: lo, key[1]: lo + span},
            st.integers(-3, 3),
            st.integers(0, 4),
            st.sampled_from([("minimum", "maximum"), ("exclusiveMinimum", "exclusiveMaximum")]),
        ),
        st.builds(
            lambda lo, hi: {"minLength": lo, "maxLength": lo + hi},
            st.integers(0, 2),
            st.integers(0, 2),
        ),
        st.builds(
            lambda vs: {"enum": vs}, st.lists(scalars | st.just([1]), min_size=1, max_size=4)
        ),
        st.builds(lambda v: {"const": v}, scalars),
        st.just({}),
        st.just(True),
        st.just(False),
        st.just({"pattern": "^a"}),  # left to the validator: no quick check at all
        st.just({"$ref": "#/$defs/Leaf"}),
    )


def subschemas(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return leaves()
    inner = subschemas(depth - 1)
    return st.one_of(
        leaves(),
        st.builds(
            lambda item, lo, n: {
                "type": "array",
                "items": item,
                "minItems": lo,
                "maxItems": lo + n,
            },
            inner,
            st.integers(0, 1),
            st.integers(0, 3),
        ),
        objects(inner),
        st.builds(lambda bs: {"anyOf": bs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda bs: {"allOf": bs}, st.lists(inner, min_size=1, max_size=2)),
    ).flatmap(lambda s: annotations.map(lambda a: {**a, **s} if isinstance(s, dict) else s))


def objects(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    names = st.sampled_from(["a", "b", "c"])

    def build(props: dict[str, Any], required: list[str], extra: Any, most: int) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if extra is not None:
            schema["additionalProperties"] = extra
        if most < 4:
            schema["maxProperties"] = most
        return schema

    return st.builds(
        build,
        st.dictionaries(names, inner, max_size=3),
        st.lists(names, unique=True, max_size=2),
        st.none() | st.booleans() | inner,
        st.integers(0, 4),
    )


def near(schema: Any) -> st.SearchStrategy[Any]:
    """Instances that often fit ``schema`` (and often do not)."""
    if not isinstance(schema, dict):
        return json_values
    fitting: st.SearchStrategy[Any] = json_values
    if schema.get("type") == "object" and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        fitting = st.fixed_dictionaries({}, optional={k: near(v) for k, v in props.items()})
    elif schema.get("type") == "array" and "items" in schema:
        fitting = st.lists(near(schema["items"]), max_size=3)
    elif "enum" in schema:
        fitting = st.sampled_from(schema["enum"])
    elif "const" in schema:
        fitting = st.just(schema["const"])
    elif schema.get("anyOf"):
        fitting = st.one_of([near(b) for b in schema["anyOf"]])
    return st.one_of(fitting, fitting, fitting, json_values)


def roots() -> st.SearchStrategy[dict[str, Any]]:
    def root(body: dict[str, Any], leaf: Any) -> dict[str, Any]:
        return {**body, "$defs": {"Leaf": leaf}}

    return st.builds(
        root, objects(subschemas(2)), leaves().filter(lambda s: s != {"$ref": "#/$defs/Leaf"})
    )


def bounded_accepts(schema: dict[str, Any], instance: dict[str, Any]) -> bool:
    provider = function_tool("t", "A tool.", schema, lambda **_kw: None)
    try:
        provider.parse_input(instance)
    except InvalidInputError:
        return False
    return True


@SETTINGS
@given(data=st.data())
def test_what_the_quick_check_accepts_the_validator_accepts(data: st.DataObject):
    schema = data.draw(roots())
    quick = compile_check(schema)
    instance = data.draw(near(schema).filter(lambda v: isinstance(v, dict)))
    if quick is None or not quick(instance):
        return  # the validator answers: nothing to compare
    assert bounded_accepts(schema, instance), (schema, instance)
    assert jsonschema.Draft202012Validator(schema).is_valid(instance), (schema, instance)


@SETTINGS
@given(data=st.data())
def test_the_quick_check_accepts_plain_valid_input_of_plain_schemas(data: st.DataObject):
    # Without anyOf, const or enum of numbers, what is valid should be seen as valid: the
    # check is only worth having if it says yes to the common case.
    props = data.draw(
        st.dictionaries(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(
                [
                    {"type": "string"},
                    {"type": "integer", "minimum": 0},
                    {"type": "boolean"},
                    {"type": ["string", "null"]},
                    {"type": "array", "items": {"type": "string"}},
                    {"enum": ["x", "y"]},
                ]
            ),
            max_size=3,
        )
    )
    schema = {"type": "object", "properties": props, "required": sorted(props)[:1]}
    instance = data.draw(near(schema).filter(lambda v: isinstance(v, dict)))
    quick = compile_check(schema)
    assert quick is not None
    assert quick(instance) == jsonschema.Draft202012Validator(schema).is_valid(instance)


EDGE_VALUES = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    0.5,
    2**53 + 1,
    1e20,
    "",
    "1",
    "é",
    [],
    [1],
    {},
    {"a": 1},
]
EDGE_SCHEMAS = [
    *({"type": t} for t in ("string", "integer", "number", "boolean", "null", "array", "object")),
    {"type": ["integer", "null"]},
    {"type": ["number", "string"]},
    {"enum": [1, "1", None]},
    {"enum": [True]},
    {"enum": [1.0, [1]]},
    {"const": 1},
    {"const": False},
    {"const": {"a": 1}},
    {"minimum": 0.5},
    {"exclusiveMaximum": 1},
    {"maxLength": 0},
    {"minItems": 1},
    {"maxProperties": 0},
    {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 1}]},
    {"allOf": [{"type": "number"}, {"maximum": 1}]},
    {"type": "array", "items": {"type": "integer"}},
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "object", "required": ["a"]},
]


@pytest.mark.parametrize("sub", EDGE_SCHEMAS, ids=str)
def test_every_edge_value_is_seen_as_the_validator_sees_it(sub: dict[str, Any]):
    # Booleans are not numbers, 1.0 is an integer, 1 equals 1.0 but not True, a keyword
    # holds only for its own type: for each value, the quick yes is the validator's yes.
    schema = {"type": "object", "properties": {"v": sub}}
    quick = compile_check(schema)
    assert quick is not None
    for value in EDGE_VALUES:
        instance = {"v": value}
        if quick(instance):
            assert bounded_accepts(schema, instance), (sub, value)
        elif not isinstance(value, (list, dict)) or not ("enum" in sub or "const" in sub):
            # Only an array or object against enum or const is left to the validator.
            assert not bounded_accepts(schema, instance), (sub, value)


def test_a_schema_with_a_keyword_left_to_the_validator_gets_no_quick_check():
    for schema in (
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}},
        {"type": "object", "oneOf": [{"required": ["a"]}]},
        {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}},
        {"type": "object", "$id": "https://example.com/s.json"},
    ):
        assert compile_check(schema) is None, schema


def test_work_past_the_bound_is_left_to_the_validator():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
    }
    quick = compile_check(schema)
    assert quick is not None
    assert quick({"a": list(range(10))})
    assert not quick({"a": list(range(MAX_WORK))})  # valid, but the validator says so


def real_schemas(make_hub: Callable[..., ToolHub]) -> list[tuple[str, dict[str, Any]]]:
    servers: dict[str, Any] = {
        "time": {"command": peer("TOOLPALETTE_MCP_TIME"), "args": ["--local-timezone", "UTC"]},
        "progress": {"command": sys.executable, "args": [str(PROGRESS_SERVER)]},
    }
    hub = make_hub(mcp_servers=servers)
    return [(p.name, p.input_schema) for name in servers for p in hub.providers_for_server(name)]


def test_real_servers_schemas_get_a_quick_check(make_hub: Callable[..., ToolHub]):
    found = real_schemas(make_hub)
    assert {name for name, _ in found} == {"get_current_time", "convert_time", "crawl"}
    assert [name for name, schema in found if compile_check(schema) is None] == []


@pytest.mark.parametrize("value", [3.0, 3])
def test_an_integral_float_is_an_integer_as_the_validator_says(value: Any):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    quick = compile_check(schema)
    assert quick is not None
    assert quick({"n": value}) == bounded_accepts(schema, {"n": value}) is True
