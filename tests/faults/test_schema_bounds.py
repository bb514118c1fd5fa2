"""A hand-written JSON Schema cannot make validation stall the loop: its work is bounded.

Tools that bring their own schema (MCP servers' tools, meta-tools, providers written by
hand) are validated by jsonschema, in Python, one keyword at a time. Two documented
bounds keep that work small whatever the model sends: at most 10,000 arrays and objects
in the input (counted before JSON text is parsed), and at most 10,000 validation steps
(a keyword checked somewhere, or an item or key a keyword goes through). Arrays of plain
values whose ``items`` schema names only a type are checked in C and cost one step.

No assertion here is about time: each class is shown by what the refusal says (the
bound and where it ran out, never a value) and by valid input within the bounds still
being accepted. The suite's leak check asserts no thread or task is left behind.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import toolpalette
from toolpalette import InvalidInputError
from toolpalette.testing import FakeTool, make_registry, run_tool

SECRET = "sk-SECRET-schema-bounds"
CONTAINERS = (
    "at (input): expected at most 10000 arrays and objects in all "
    "(the bound on input for a hand-written schema)"
)
STEPS = (
    "expected input the schema can check in 10000 steps "
    "(the bound on a hand-written schema's work; send fewer items)"
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rows": {"type": "array", "uniqueItems": True},
        "ints": {"type": "array", "items": {"type": "integer", "description": "a count"}},
        "codes": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "either": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"const": "x"}]}},
        "has": {"type": "array", "contains": {}, "minContains": 300_000},
        "grid": {"type": "array", "items": {"type": "array", "uniqueItems": True}},
        "shape": {"enum": [[[0] * 50] * 50, {"rows": [[0] * 50] * 50}]},
        "text": {"type": "string"},
        "any": {"type": "array"},
    },
}
HAND = FakeTool("hand", input_schema=SCHEMA, result="ok")


def _problems(raw: Any, fake: FakeTool = HAND) -> list[str]:
    with pytest.raises(InvalidInputError) as info:
        run_tool(fake, raw)
    assert SECRET not in str(info.value)
    return [str(p) for p in info.value.problems]


def test_more_arrays_and_objects_than_the_bound_are_refused_before_any_check() -> None:
    rows = [[SECRET, i] for i in range(10_000)]
    for raw in ({"rows": rows}, json.dumps({"rows": rows}), json.dumps({"rows": rows}).encode()):
        assert _problems(raw) == [CONTAINERS]
    # At the bound: the top-level object, the array and 9,998 rows.
    assert run_tool(HAND, {"any": [[i] for i in range(9_998)]}) == "ok"
    assert run_tool(HAND, json.dumps({"any": [[i] for i in range(9_998)]})) == "ok"
    assert _problems(json.dumps({"any": [[i] for i in range(9_999)]})) == [CONTAINERS]


def test_brackets_inside_strings_are_not_arrays() -> None:
    text = "[{" * 20_000
    assert run_tool(HAND, json.dumps({"text": text})) == "ok"
    assert run_tool(HAND, json.dumps({"text": text}).encode()) == "ok"


def test_a_cyclic_mapping_is_refused_by_the_bound_not_walked_forever() -> None:
    cyclic: dict[str, Any] = {"rows": []}
    cyclic["rows"].append(cyclic)
    assert _problems(cyclic) == [CONTAINERS]


def test_uniqueness_of_arrays_within_the_bound_is_still_checked() -> None:
    rows: list[Any] = [[SECRET, i] for i in range(9_000)]
    assert _problems({"rows": [*rows, [SECRET, 0]]}) == [
        "at rows: expected items without duplicates"
    ]
    assert run_tool(HAND, {"rows": rows}) == "ok"
    # JSON equality: 1 and 1.0 are one value, 1 and true are not.
    assert _problems({"rows": [[1], [1.0]]}) == ["at rows: expected items without duplicates"]
    assert run_tool(HAND, {"rows": [[1], [True]]}) == "ok"


def test_nested_unique_items_are_each_checked() -> None:
    grid = [list(range(i, i + 20)) for i in range(2_000)]
    assert run_tool(HAND, {"grid": grid}) == "ok"
    assert _problems({"grid": [*grid, [SECRET, SECRET]]}) == [
        "at grid[2000]: expected items without duplicates"
    ]


def test_items_typed_alone_are_checked_in_one_step_and_the_bad_one_is_named() -> None:
    ints = [1] * 340_000
    assert run_tool(HAND, json.dumps({"ints": ints})) == "ok"
    assert _problems(json.dumps({"ints": [*ints, SECRET]})) == ["at ints[340000]: expected integer"]
    # An integral float is an integer in JSON Schema; a boolean is not.
    assert run_tool(HAND, {"ints": [*ints, 1.0]}) == "ok"
    assert _problems({"ints": [*ints, True]}) == ["at ints[340000]: expected integer"]


@pytest.mark.parametrize(
    ("field", "items", "place"),
    [
        ("codes", ["a"] * 200_000 + [SECRET], "codes"),  # an enum descends into each item
        ("either", [1] * 300_000 + [SECRET], "either"),  # each item tries both branches
        ("has", [1] * 300_000, "has"),  # contains tries every item
    ],
)
def test_item_by_item_work_beyond_the_budget_is_refused_where_it_ran_out(
    field: str, items: list[Any], place: str
) -> None:
    assert _problems({field: items}) == [f"at {place}: {STEPS}"]


def test_within_the_budget_the_same_schemas_name_the_bad_item() -> None:
    assert _problems({"codes": ["a"] * 2_000 + [SECRET]}) == [
        "at codes[2000]: expected one of the allowed values"
    ]
    assert _problems({"either": [1] * 2_000 + [SECRET]}) == [
        "at either[2000]: expected integer or one of the allowed values"
    ]
    assert run_tool(HAND, {"codes": ["a", "b"] * 1_000}) == "ok"


def test_a_budget_spent_inside_a_branch_is_reported_as_the_budget() -> None:
    # anyOf keeps its branches' errors to itself: the refusal still names the bound.
    fake = FakeTool(
        "branches",
        result="ok",
        input_schema={
            "type": "object",
            "anyOf": [
                {"properties": {"xs": {"items": {"enum": [1]}}}},
                {"required": ["never"]},
            ],
        },
    )
    assert _problems({"xs": [1] * 20_000}, fake) == [f"at (input): {STEPS}"]
    assert run_tool(fake, {"xs": [1] * 2_000}) == "ok"


def test_enum_of_arrays_compares_as_json_values() -> None:
    grid = [[0] * 50] * 50
    assert run_tool(HAND, {"shape": grid}) == "ok"
    assert run_tool(HAND, {"shape": [[0.0] * 50] * 50}) == "ok"
    assert _problems({"shape": [*grid[:49], [0] * 49 + [1]]}) == [
        "at shape: expected one of the allowed values"
    ]


async def test_the_executor_answers_400_and_leaves_nothing_running() -> None:
    fresh = FakeTool("hand", input_schema=SCHEMA)
    registry = make_registry(fresh)
    for raw in (
        json.dumps({"rows": [[i] for i in range(100_000)] + [[0]]}),
        {"codes": ["a"] * 200_000 + [SECRET]},
    ):
        result = await toolpalette.execute(registry, "hand", raw)
        assert (result.status, result.code) == (400, "invalid_input"), result.text
        assert SECRET not in result.text
    assert fresh.calls == []


def test_a_refusal_of_a_large_value_quotes_only_its_start_even_in_logs() -> None:
    # jsonschema's own messages print the whole instance, once per anyOf branch.
    fake = FakeTool(
        "quoted",
        input_schema={
            "type": "object",
            "properties": {
                "xs": {"anyOf": [{"type": "object"}, {"type": "string"}, {"type": "null"}]},
                "ys": {"type": "object", "minProperties": 2},
            },
        },
    )
    big = [SECRET] * 30_000
    for raw, problem in [
        ({"xs": big}, "at xs: expected null or object or string"),
        ({"ys": big}, "at ys: expected object"),
        ({"ys": {"a": big}}, "at ys: expected object"),
    ]:
        with pytest.raises(InvalidInputError) as info:
            run_tool(fake, raw)
        assert SECRET not in str(info.value)
        assert len(str(info.value.__cause__)) < 1_000
        assert [str(p) for p in info.value.problems] == [problem]
