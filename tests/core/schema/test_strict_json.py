"""The strict JSON input policy, on its own and through ``parse_input``.

The loader (``load_input``) is internal: these are its unit tests, so they import it and
its limits from its module. Policy: at most MAX_INPUT_BYTES of UTF-8
and MAX_DEPTH levels of nesting, both checked before parsing; NaN, Infinity and
overflowing numbers refused;
duplicate keys refused; lone surrogates refused, valid pairs accepted; the top level is
an object; a mapping holds JSON types only; 1.0 for an integer field becomes 1, 1.5 and
booleans are refused by the schema. NUL and other valid Unicode pass unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolpalette import InvalidInputError, tool
from toolpalette._schema.strict_json import (
    MAX_DEPTH,
    MAX_INPUT_BYTES,
    InputPolicyError,
    load_input,
    load_sized,
)
from toolpalette.testing import as_provider

CANARY = "CNRY-7c1e0b2f"


@tool
def count(n: int, label: str = "x") -> int:
    """Count to n."""
    return n


PROVIDER = as_provider(count)


def nested_text(levels: int) -> str:
    """An object whose innermost value sits ``levels`` containers deep (top level included)."""
    return '{"a":' + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "}"


def nested_mapping(levels: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(levels - 1):
        value = [value]
    return {"a": value}


def refused(raw: Any) -> InputPolicyError:
    with pytest.raises(InputPolicyError) as info:
        load_input(raw)
    return info.value


# -- the policy, on its own -----------------------------------------------------------


@pytest.mark.parametrize("raw", ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}'])
def test_non_finite_constants_are_refused(raw: str) -> None:
    assert "finite" in str(refused(raw))


@pytest.mark.parametrize("raw", ['{"a": 1e400}', '{"a": -1e400}', '{"a": [1e999]}'])
def test_numbers_that_overflow_to_infinity_are_refused(raw: str) -> None:
    assert "finite" in str(refused(raw))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_in_a_mapping_are_refused(value: float) -> None:
    refused({"a": {"b": [value]}})


def test_large_finite_numbers_and_big_integers_pass() -> None:
    assert load_input('{"a": 1.5e300, "b": 12345678901234567890}') == {
        "a": 1.5e300,
        "b": 12345678901234567890,
    }


@pytest.mark.parametrize("raw", ['{"a": 1, "a": 2}', '{"x": {"a": 1, "a": 1}}', '[{"a":1,"a":1}]'])
def test_duplicate_keys_are_refused(raw: str) -> None:
    assert "duplicate" in str(refused(raw))


def test_depth_bound_in_text() -> None:
    assert load_input(nested_text(MAX_DEPTH))["a"]
    assert "nesting" in str(refused(nested_text(MAX_DEPTH + 1)))


def test_depth_bound_in_a_mapping() -> None:
    assert load_input(nested_mapping(MAX_DEPTH))
    assert "nesting" in str(refused(nested_mapping(MAX_DEPTH + 1)))


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    text = json.dumps({"a": "[" * (MAX_DEPTH * 3), "b": '\\"{' * MAX_DEPTH})
    assert load_input(text)["a"] == "[" * (MAX_DEPTH * 3)


@pytest.mark.parametrize("levels", [100_000, 1_000])
def test_very_deep_text_is_refused_without_recursion_error(levels: int) -> None:
    refused("[" * levels + "]" * levels)
    refused('{"a":' + "[" * levels)


def test_a_self_containing_mapping_is_refused_by_the_depth_bound() -> None:
    loop: dict[str, Any] = {}
    loop["a"] = loop
    refused(loop)


def test_size_bound_in_text_and_bytes() -> None:
    filler = MAX_INPUT_BYTES - len('{"a":""}')
    exact = '{"a":"' + "x" * filler + '"}'
    assert len(load_input(exact)["a"]) == filler
    assert "bytes" in str(refused('{"a":"' + "x" * (filler + 1) + '"}'))
    assert "bytes" in str(refused(('{"a":"' + "x" * (filler + 1) + '"}').encode()))


def test_size_bound_counts_utf8_bytes_not_characters() -> None:
    # 3 bytes per character: few characters, too many bytes.
    text = '{"a":"' + "€" * (MAX_INPUT_BYTES // 3 + 1) + '"}'
    assert len(text) < MAX_INPUT_BYTES
    refused(text)


@pytest.mark.parametrize(
    "raw",
    [
        '{"a": "\ud800"}',  # a raw lone surrogate in the Python text
        '{"a": "\\ud800"}',  # an escaped high surrogate
        '{"a": "\\udc00x"}',  # an escaped low surrogate
        '{"a": ["ok", "\\uDBFF"]}',  # upper-case escape, nested
        '{"\\ud800": 1}',  # in a key
        '{"a": "\\ude00\\ud83d"}',  # a pair in the wrong order
    ],
)
def test_lone_surrogates_are_refused(raw: str) -> None:
    assert "surrogate" in str(refused(raw)) or "string keys" in str(refused(raw))


def test_lone_surrogates_in_a_mapping_are_refused() -> None:
    refused({"a": "\udfff"})
    refused({"\ud800": "a"})


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ('{"a": "\\ud83d\\ude00"}', "\U0001f600"),
        ('{"a": "\U0001f600"}', "\U0001f600"),
        ('{"a": "\\u0000"}', "\x00"),
        ('{"a": "\\u202eabc\\u200b"}', "\u202eabc\u200b"),
        ('{"a": "e\\u0301"}', "e\u0301"),
        ('{"a": "\\\\ud800"}', "\\ud800"),  # an escaped backslash, not a surrogate
    ],
)
def test_valid_unicode_passes_intact(raw: str, text: str) -> None:
    assert load_input(raw) == {"a": text}


@pytest.mark.parametrize("raw", ["[]", "5", "null", '"s"', "true", "[{}]"])
def test_top_level_must_be_an_object(raw: str) -> None:
    assert "object" in str(refused(raw))


@pytest.mark.parametrize(
    "raw",
    ["", "{", "{'a': 1}", '{"a": 1,}', "\ufeff{}", '{"a": 01}', "{} {}", "1" * 5000],
)
def test_malformed_json_is_refused(raw: str) -> None:
    refused(raw)


def test_invalid_utf8_bytes_are_refused() -> None:
    assert "UTF-8" in str(refused(b'{"a": "\xff"}'))
    assert load_input('{"a": "é"}'.encode()) == {"a": "é"}


@pytest.mark.parametrize(
    "mapping",
    [
        {"a": (1, 2)},
        {"a": {1, 2}},
        {"a": b"bytes"},
        {"a": object()},
        {"a": {"b": [1, 2.5, complex(1, 2)]}},
        {1: "non-string key"},
        {"a": {None: 1}},
    ],
)
def test_non_json_python_objects_in_a_mapping_are_refused(mapping: dict[Any, Any]) -> None:
    refused(mapping)


@pytest.mark.parametrize("raw", [42, None, ["a"], 1.5])
def test_input_that_is_neither_text_nor_mapping_is_refused(raw: Any) -> None:
    refused(raw)


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("-inf"),
        "\udfff",
        10**5000,
        "x" * MAX_INPUT_BYTES,
        (1, 2),
        b"bytes",
        object(),
    ],
    ids=["nan", "-inf", "surrogate", "long-int", "too-large", "tuple", "bytes", "object"],
)
def test_a_flat_mapping_keeps_every_rule_of_a_nested_one(value: Any) -> None:
    # A flat object of plain values is checked in one pass; the rules are the same.
    refused({"a": value, "b": 1})
    refused({"a": {"b": value}})


plain_values = (
    st.text(alphabet=st.characters(max_codepoint=127), max_size=20)
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
    | st.none()
    | st.text(max_size=5)  # non-ASCII text takes the full walk
)


@given(st.dictionaries(st.text(max_size=8), plain_values, max_size=8))
def test_a_flat_mapping_is_sized_and_copied_as_the_full_walk_does(
    mapping: dict[str, Any],
) -> None:
    # Nested one level down, the same object always takes the full walk.
    flat, size = load_sized(mapping)
    nested, nested_size = load_sized({"k": mapping})
    assert flat == mapping == nested["k"]
    assert flat is not mapping
    assert nested_size == size + len('{"k":,')


class Level(int):
    pass


def test_a_flat_mapping_holds_plain_values_not_subclasses() -> None:
    loaded = load_input({"a": Level(3), "b": True})
    assert type(loaded["a"]) is int
    assert loaded == {"a": 3, "b": True}


def test_a_mapping_is_copied() -> None:
    original = {"a": 1}
    loaded = load_input(original)
    loaded["b"] = 2
    assert original == {"a": 1}


def test_policy_messages_never_quote_the_input() -> None:
    for raw in [
        '{"' + CANARY + '": NaN}',
        '{"' + CANARY + '": 1, "' + CANARY + '": 2}',
        '["' + CANARY + '"]',
        '{"a": "' + CANARY + '\\ud800"}',
        "{" + CANARY,
        {CANARY: (CANARY,)},
    ]:
        assert CANARY not in str(refused(raw))


# -- the policy through parse_input ---------------------------------------------------


def test_one_point_zero_for_an_integer_field_becomes_one() -> None:
    value = PROVIDER.parse_input('{"n": 1.0}')
    assert value.n == 1
    assert type(value.n) is int
    assert type(PROVIDER.parse_input({"n": 3.0}).n) is int


@pytest.mark.parametrize("raw", ['{"n": 1.5}', '{"n": true}', '{"n": false}', '{"n": "1"}'])
def test_fractions_booleans_and_strings_are_not_integers(raw: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        PROVIDER.parse_input(raw)
    assert info.value.problems[0].path == "n"
    assert info.value.problems[0].expected == "integer"


@pytest.mark.parametrize(
    "raw",
    ['{"n": NaN}', '{"n": 1, "n": 2}', "[]", '{"n": 1e400}', nested_text(MAX_DEPTH + 1)],
)
def test_policy_refusals_become_invalid_input_errors(raw: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        PROVIDER.parse_input(raw)
    assert info.value.tool_name == "count"
    assert [p.path for p in info.value.problems] == ["(input)"]
    assert info.value.__cause__ is None


def test_a_mapping_with_non_json_values_is_refused_by_parse_input() -> None:
    with pytest.raises(InvalidInputError):
        PROVIDER.parse_input({"n": 1, "label": b"bytes"})


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=40,
)
objects_like_count = st.fixed_dictionaries(
    {"n": json_values}, optional={"label": json_values, "extra": json_values}
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    raw=json_values.map(json.dumps)
    | json_values
    | objects_like_count
    | objects_like_count.map(json.dumps)
    | st.text()
    | st.binary()
)
def test_parse_input_returns_or_raises_invalid_input_only(raw: Any) -> None:
    try:
        value = PROVIDER.parse_input(raw)
    except InvalidInputError as error:
        assert error.problems  # noqa: PT017 - the property is "returns or raises this"
    else:
        assert isinstance(value.n, int)
        assert isinstance(value.label, str)


@pytest.mark.parametrize(
    "sent",
    [
        {"p": {"x": 1, "y": 2, "label": "a"}},
        {"p": {"x": 1}, "q": "zz", "n": None, "f": 1.5, "b": {}},
        {"p": {"deep": {"x": 1}}},  # deeper: the full walk
    ],
)
def test_a_nested_object_is_the_callers_no_more(sent: dict[str, Any]) -> None:
    value = load_input(sent)
    assert value == sent
    value["p"]["x"] = "changed"
    assert sent["p"] != value["p"]  # the caller's nested object was copied


@pytest.mark.parametrize(
    "sent",
    [{"n": 1, "label": "a"}, {"p": {"x": 1, "y": 2, "label": "a"}}],
)
def test_without_copy_plain_input_is_checked_and_returned_as_given(sent: dict[str, Any]) -> None:
    value, size = load_sized(sent, copy=False)
    assert value is sent
    assert size == load_sized(sent)[1]  # the same checks, the same count


def test_without_copy_deeper_input_is_still_copied_and_the_policy_still_holds() -> None:
    sent = {"p": {"deep": {"x": 1}}}
    value, _ = load_sized(sent, copy=False)
    assert value == sent
    assert value["p"] is not sent["p"]
    with pytest.raises(InputPolicyError):
        load_sized({"p": {"x": float("nan")}}, copy=False)
    with pytest.raises(InputPolicyError):
        load_sized({"x": float("inf")}, copy=False)
