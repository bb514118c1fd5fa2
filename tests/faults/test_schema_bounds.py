"""A hand-written JSON Schema cannot make validation stall the loop, nor refuse real input.

Tools that bring their own schema (MCP servers' tools, meta-tools, providers written by
hand) are validated by jsonschema, in Python, one keyword at a time. Its work is bounded
by the input's size: at most one step per byte of input (a keyword checked somewhere, or
an item or key a keyword goes through; at least 10,000), on input of at most 16,384
arrays and objects. Arrays of plain values whose ``items`` schema names only a type are
checked in C and cost one step.

On the event loop the executor does the first 10,000 steps (within 20 ms) on at most
10,000 arrays and objects; input that needs more is validated again in the worker pool,
under the call's timeout and abort, while the loop keeps turning.

No assertion here is about time: each class is shown by what the refusal says (the
bound and where it ran out, never a value), by valid input within the bounds being
accepted, and by what the loop did while a worker validated. The suite's leak check
asserts no thread or task is left behind.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
import toolpalette
from toolpalette import AbortSignal, Executor, InvalidInputError
from toolpalette.testing import FakeTool, make_registry, run_tool
from watched_fixture import Watched

SECRET = "sk-SECRET-schema-bounds"
CONTAINERS = (
    "at (input): expected at most 16384 arrays and objects in all "
    "(the bound on input for a hand-written schema)"
)
STEPS = (
    "steps (the bound on a hand-written schema's work, 1 per byte of input and at least "
    "10000; send fewer items)"
)


def _over_budget(problem: str, place: str) -> bool:
    """``problem`` is the step budget's refusal at ``place`` (its figure is the input's size)."""
    head = f"at {place}: expected input the schema can check in "
    return problem.startswith(head) and problem.endswith(STEPS)


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rows": {"type": "array", "uniqueItems": True},
        "ints": {"type": "array", "items": {"type": "integer", "description": "a count"}},
        # minLength keeps these two item by item (a descent per item).
        "codes": {"type": "array", "items": {"type": "string", "enum": ["a", "b"], "minLength": 1}},
        "either": {
            "type": "array",
            "items": {"anyOf": [{"const": "x", "minLength": 1}, {"type": "integer"}]},
        },
        "picked": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "mixed": {"type": "array", "items": {"anyOf": [{"const": "x"}, {"type": "integer"}]}},
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
    rows = [[] for _ in range(17_000)]
    for raw in ({"rows": rows}, json.dumps({"rows": rows}), json.dumps({"rows": rows}).encode()):
        assert _problems(raw) == [CONTAINERS]
    # At the bound: the top-level object, the array and 16,382 rows.
    at_bound = {"any": [[] for _ in range(16_382)]}
    assert run_tool(HAND, at_bound) == "ok"
    assert run_tool(HAND, json.dumps(at_bound, separators=(",", ":"))) == "ok"
    over = json.dumps({"any": [[] for _ in range(16_383)]})
    assert _problems(over) == [CONTAINERS]


async def test_more_arrays_and_objects_than_the_loop_checks_are_accepted_apart() -> None:
    # 10,000 rows: more than the loop's share, validated in a worker, and accepted.
    fresh = FakeTool("hand", input_schema=SCHEMA, result="ok")
    rows = [[SECRET, i] for i in range(10_000)]
    executor = Executor(make_registry(fresh))
    for raw in ({"rows": rows}, json.dumps({"rows": rows})):
        result = await executor.execute("hand", raw)
        assert (result.status, result.text) == (200, "ok")
    assert len(fresh.calls) == 2


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


def test_item_by_item_work_beyond_the_budget_is_refused_where_it_ran_out() -> None:
    # Each item tries the const, then the type: four steps for two bytes. The budget
    # runs out inside a branch, which keeps its errors to itself: named at the top.
    (problem,) = _problems({"either": [1] * 30_000 + [SECRET]})
    assert _over_budget(problem, "(input)"), problem


def test_items_allowed_by_type_or_string_value_are_checked_in_c_and_the_bad_one_named() -> None:
    # Far past the step budget if each item descended: strings by value, anyOf of simple
    # branches; each wrong item is still named, where it is.
    assert _problems({"picked": ["a", "b"] * 100_000 + [SECRET]}) == [
        "at picked[200000]: expected one of the allowed values"
    ]
    assert _problems({"mixed": [1, "x"] * 100_000 + [2.5, SECRET]}) == [
        "at mixed[200000]: expected integer or one of the allowed values",
        "at mixed[200001]: expected integer or one of the allowed values",
    ]
    assert run_tool(HAND, {"picked": ["a", "b"] * 100_000}) == "ok"
    assert run_tool(HAND, {"mixed": [1, "x"] * 100_000}) == "ok"


def test_item_by_item_work_within_the_budget_names_the_bad_item() -> None:
    # Three steps an item for five bytes: far more than the loop's share, within budget.
    assert _problems({"codes": ["a"] * 20_000 + [SECRET]}) == [
        "at codes[20000]: expected one of the allowed values"
    ]
    assert run_tool(HAND, {"has": [1] * 300_000}) == "ok"


def test_within_the_budget_the_same_schemas_name_the_bad_item() -> None:
    assert _problems({"codes": ["a"] * 2_000 + [SECRET]}) == [
        "at codes[2000]: expected one of the allowed values"
    ]
    assert _problems({"either": [1] * 1_500 + [SECRET]}) == [
        "at either[1500]: expected integer or one of the allowed values"
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
                {"properties": {"xs": {"items": {"anyOf": [{"const": 2}, {"enum": [1]}]}}}},
                {"required": ["never"]},
            ],
        },
    )
    (problem,) = _problems({"xs": [1] * 20_000}, fake)
    assert _over_budget(problem, "(input)"), problem
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
    for raw, problem in (
        (
            json.dumps({"rows": [[i] for i in range(12_000)] + [[0]]}),
            "at rows: expected items without duplicates",
        ),
        ({"codes": ["a"] * 50_000 + [SECRET]}, "at codes[50000]: expected one of the allowed"),
        ({"either": [1] * 30_000 + [SECRET]}, "at (input): expected input the schema can check"),
    ):
        result = await toolpalette.execute(registry, "hand", raw)
        assert (result.status, result.code) == (400, "invalid_input"), result.text
        assert problem in result.text
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


# -- validation apart: the work beyond the loop's share -----------------------------------

ROWS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rows": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["id", "name"],
            },
        },
        "either": SCHEMA["properties"]["either"],
    },
    "required": [],
}


def _rows(count: int) -> dict[str, Any]:
    return {"rows": [{"id": i, "name": f"row {i}", "tags": ["a", "b"]} for i in range(count)]}


def _megabyte_of_either() -> str:
    """About 1 MiB: 520k integers, each trying two branches, and a bad one at the end."""
    count = (1024 * 1024 - 64) // 2
    return '{"either": [' + ",".join(["1"] * count) + ', "y"]}'


def _counting(data: dict[str, Any]) -> int:
    return len(data.get("rows", []))


async def test_two_thousand_typed_rows_are_accepted_in_every_way_a_call_runs() -> None:
    # 16,000 steps: past the loop's share (refused before validation moved apart).
    fake = Watched("rows", input_schema=ROWS_SCHEMA, result=_counting, read_only=True)
    executor = Executor(make_registry(fake))
    raw = _rows(2_000)
    result = await executor.execute("rows", raw)
    assert (result.status, result.text) == (200, "2000"), result.text
    assert fake.apart.is_set()
    result = await executor.execute("rows", json.dumps(raw))
    assert (result.status, result.text) == (200, "2000"), result.text
    results = await executor.execute_many([("rows", raw), ("rows", {"either": ["y"]})])
    assert [r.status for r in results] == [200, 400]
    result = await asyncio.to_thread(executor.execute_sync, "rows", raw)
    assert (result.status, result.text) == (200, "2000"), result.text
    assert run_tool(fake, raw) == 2_000
    assert len(fake.calls) == 5


async def test_input_within_the_loops_share_is_validated_on_the_loop() -> None:
    fake = Watched("rows", input_schema=ROWS_SCHEMA, result=_counting)
    executor = Executor(make_registry(fake))
    result = await executor.execute("rows", _rows(100))
    assert (result.status, result.text) == (200, "100"), result.text
    result = await executor.execute("rows", {"rows": [{"id": "x", "name": SECRET}]})
    assert result.status == 400
    assert "at rows[0].id: expected integer" in result.text
    assert not fake.apart.is_set()


async def test_long_json_text_is_parsed_and_validated_apart_even_when_cheap() -> None:
    # One string of 100 KB: one step, but parsing it would hold the loop; as a mapping
    # (already parsed) the same input stays on the loop.
    fake = Watched("note", input_schema={"type": "object"}, result="ok")
    executor = Executor(make_registry(fake))
    text = json.dumps({"note": "x" * 100_000})
    assert (await executor.execute("note", json.loads(text))).status == 200
    assert not fake.apart.is_set()
    assert (await executor.execute("note", text)).status == 200
    assert fake.apart.is_set()


def test_two_thousand_typed_rows_are_accepted_by_execute_sync() -> None:
    fake = FakeTool("rows", input_schema=ROWS_SCHEMA, result=_counting)
    result = Executor(make_registry(fake)).execute_sync("rows", _rows(2_000))
    assert (result.status, result.text) == (200, "2000"), result.text


async def test_a_megabyte_built_to_cost_the_most_ends_at_the_deadline() -> None:
    fake = Watched("rows", input_schema=ROWS_SCHEMA, timeout=0.3)
    result = await Executor(make_registry(fake)).execute("rows", _megabyte_of_either())
    assert (result.status, result.code) == (504, "timeout"), result.text
    assert "could not be checked within 0.3 seconds" in result.text
    assert fake.calls == []
    await _until(fake.apart_ended.is_set)  # the worker stopped on its own


async def test_the_loop_keeps_turning_while_a_worker_validates() -> None:
    # The deadline is a ceiling for a slow machine (coverage, the ticker's own spinning
    # sharing the GIL); the test is about the loop turning, not how fast the worker is.
    fake = Watched("rows", input_schema=ROWS_SCHEMA, result=_counting, is_async=True, timeout=90)
    executor = Executor(make_registry(fake))
    turns_during = 0
    done = False

    async def ticker() -> None:
        nonlocal turns_during
        while not done:
            await asyncio.sleep(0)
            if fake.apart.is_set() and not fake.apart_ended.is_set():
                turns_during += 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    try:
        result = await executor.execute("rows", _rows(2_000))
    finally:
        done = True
        await task
    assert (result.status, result.text) == (200, "2000"), result.text
    assert turns_during > 0


async def test_a_call_aborted_while_a_worker_validates_answers_499() -> None:
    fake = Watched("rows", input_schema=ROWS_SCHEMA)
    executor = Executor(make_registry(fake))
    abort = AbortSignal()
    call = asyncio.create_task(executor.execute("rows", _megabyte_of_either(), abort=abort))
    await _until(fake.apart.is_set)
    abort.abort("The user stopped it.")
    result = await call
    assert (result.status, result.code, result.text) == (499, "aborted", "The user stopped it.")
    assert fake.calls == []
    await _until(fake.apart_ended.is_set)  # the worker saw the stop and ended


def test_execute_sync_validates_apart_under_its_deadline_too() -> None:
    fake = FakeTool("rows", input_schema=ROWS_SCHEMA, timeout=0.3)
    result = Executor(make_registry(fake)).execute_sync("rows", _megabyte_of_either())
    assert (result.status, result.code) == (504, "timeout"), result.text
    assert fake.calls == []


async def _until(condition: Any, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.01)
