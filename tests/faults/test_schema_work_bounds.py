"""A hand-written schema cannot make one validation step cost work that grows with it.

The step budget of ``test_schema_bounds`` counts steps; these classes made a single step
cost as much as the schema is large, so the count held while the loop stalled: an item
compared with each of 2,000 long ``enum`` values (61 KB of input held the loop 16.7 s),
600 patterns recompiled at every call once they overflowed a shared cache, ``allOf``
and ``anyOf`` branches that no keyword charged, a descent through a schema object's
hundred thousand keys, ``unevaluatedProperties`` searching with a backtracking engine.
Now a step's work is bounded or charged, patterns are compiled once per schema, and a
schema whose own size makes any input exceed the bounds is refused when the tool is
defined, or when an MCP server's listing is read.

As in ``test_schema_bounds``, nothing here is timed: the work is counted (comparisons
with the schema's values, patterns compiled), or the verdict names the budget, or the
loop is seen turning while a worker validates. The suite's leak check asserts no
thread, task or process is left behind.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pydantic_core
import pytest
from toolpalette import Executor, InvalidInputError, ToolHub
from toolpalette.testing import FakeTool, check_tool, make_registry, plugin_of, run_tool
from watched_fixture import Watched

SECRET = "sk-SECRET-schema-work"
SERVER = Path(__file__).parent / "servers" / "schema_server.py"
STEPS = "steps (the bound on a hand-written schema's work, 1 per byte of input and at least"
PER_VALUE = "checking one value may go through more than 10000 subschemas"


class Counted(int):
    """An integer of the schema that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        Counted.compared += 1
        return int(self) == other

    __hash__ = int.__hash__


def _problems(fake: FakeTool, raw: Any) -> list[str]:
    with pytest.raises(InvalidInputError) as info:
        run_tool(fake, raw)
    assert SECRET not in str(info.value)
    return [str(p) for p in info.value.problems]


# -- one step, one piece of work bounded by the input --------------------------------------


async def test_two_thousand_long_enum_values_cost_a_look_up_per_item_not_a_comparison_each() -> (
    None
):
    # 2,000 allowed arrays of 40 numbers that differ in their last one only: comparing
    # an item with each of them is 80,000 comparisons; looking it up, one array's.
    allowed = [[Counted(0)] * 39 + [Counted(i)] for i in range(2_000)]
    schema = {
        "type": "object",
        "properties": {"rows": {"type": "array", "items": {"enum": allowed}}},
    }
    fake = FakeTool("rows", input_schema=schema, result="ok")
    executor = Executor(make_registry(fake))
    rows = [[0] * 39 + [i] for i in range(500)]
    raw = json.dumps({"rows": [*rows, [0] * 39 + [SECRET]]})
    assert 60_000 < len(raw) < 64 * 1024  # validated on the loop
    # At most one comparison per value of the input (the matching array's), each time
    # it is validated: on the loop, and again in a worker if the loop's share ran out.
    most = 2 * (1 + 1 + 41 * (len(rows) + 1))
    Counted.compared = 0
    result = await executor.execute("rows", raw)
    assert (result.status, result.code) == (400, "invalid_input"), result.text
    assert "at rows[500]: expected one of the allowed values" in result.text
    assert SECRET not in result.text
    assert Counted.compared <= most
    Counted.compared = 0
    result = await executor.execute("rows", json.dumps({"rows": rows}))
    assert (result.status, result.text) == (200, "ok")
    assert Counted.compared <= most


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The patterns compiled from now on (every linear-time matcher is pydantic-core's)."""
    patterns: list[str] = []
    real = pydantic_core.SchemaValidator

    def counting(schema: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(schema, dict) and schema.get("regex_engine") == "rust-regex":
            patterns.append(schema["pattern"])
        return real(schema, *args, **kwargs)

    monkeypatch.setattr(pydantic_core, "SchemaValidator", counting)
    return patterns


async def test_six_hundred_patterns_are_compiled_once_for_the_schema(compiled: list[str]) -> None:
    fields = {f"p{i}": {"type": "string", "pattern": f"^p{i}-[a-z]+$"} for i in range(600)}
    fake = FakeTool("many", input_schema={"type": "object", "properties": fields}, result="ok")
    executor = Executor(make_registry(fake))
    valid = {f"p{i}": f"p{i}-abc" for i in range(600)}
    result = await executor.execute("many", json.dumps(valid))
    assert (result.status, result.text) == (200, "ok")
    assert sorted(compiled) == sorted(field["pattern"] for field in fields.values())
    compiled.clear()
    for raw in (json.dumps(valid), {**valid, "p599": SECRET}, valid):
        result = await executor.execute("many", raw)
        assert result.status in (200, 400), result.text
        assert SECRET not in result.text
    assert compiled == []  # later calls match with what the first one compiled
    assert (
        "at p599: expected text matching the pattern ^p599-[a-z]+$"
        in (await executor.execute("many", {**valid, "p599": SECRET})).text
    )


@pytest.mark.parametrize(
    ("branches", "keyword", "place"),
    [
        ([{}] * 20_000, "allOf", "xs[0]"),
        ([True] * 20_000, "allOf", "xs[0]"),
        # anyOf keeps its branches' errors to itself: the budget is named at the top.
        ([False] * 20_000, "anyOf", "(input)"),
    ],
    ids=["allOf of empty schemas", "allOf of true", "anyOf of false"],
)
async def test_branches_no_keyword_charges_are_counted_each(
    branches: list[Any], keyword: str, place: str
) -> None:
    # Each branch is a descent that checks nothing: 20,000 of them per item, 3,000 items.
    items = {keyword: branches}
    schema = {"type": "object", "properties": {"xs": {"type": "array", "items": items}}}
    fake = FakeTool("branches", input_schema=schema, result="ok")
    raw = json.dumps({"xs": [1] * 3_000})
    refusal = f"at {place}: expected input the schema can check in 10000 steps"
    (problem,) = _problems(fake, raw)
    assert problem.startswith(refusal), problem
    assert STEPS in problem
    result = await Executor(make_registry(fake)).execute("branches", raw)
    assert (result.status, result.code) == (400, "invalid_input")
    assert refusal in result.text
    assert fake.calls == []


async def test_a_descent_through_a_hundred_thousand_keys_is_left_to_a_worker() -> None:
    # One branch's object has 100,000 annotation keys: descending into it reads them
    # all, work no single step may do on the loop. The loop turns while a worker does it.
    wide: dict[str, Any] = {f"x-note-{i}": i for i in range(100_000)}
    wide["type"] = "integer"
    schema = {"type": "object", "properties": {"n": {"anyOf": [wide, {"type": "string"}]}}}
    fake = Watched("wide", input_schema=schema, result="ok", is_async=True)
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
        first = await executor.execute("wide", {"n": 1})
        second = await executor.execute("wide", {"n": 2})
    finally:
        done = True
        await task
    assert [(first.status, first.text), (second.status, second.text)] == [(200, "ok")] * 2
    assert fake.apart.is_set()
    assert turns_during > 0


def test_unevaluated_properties_never_search_keys_with_a_backtracking_engine() -> None:
    # The schema check lets ^(a+)+$ through (a linear-time engine matches it); searched
    # by a backtracking one, 40 a's and a '!' take 2**40 steps.
    schema = {
        "type": "object",
        "patternProperties": {"^(a+)+$": {"type": "integer"}},
        "unevaluatedProperties": False,
    }
    check_tool(FakeTool("p", input_schema=schema))
    fake = FakeTool("p", input_schema=schema, result="ok")
    assert run_tool(fake, {"aaaa": 1}) == "ok"
    assert _problems(fake, {"a" * 40 + "!": 1}) == ["at (input): expected no other fields"]


def test_unevaluated_items_of_a_long_array_are_found_by_hashing() -> None:
    # Which items are evaluated was a list, searched once per item: 100,000 items were
    # five billion comparisons. Now a set, and the walk is charged to the budget.
    strings = {"type": "array", "prefixItems": [{}], "unevaluatedItems": {"type": "string"}}
    fake = FakeTool(
        "u", input_schema={"type": "object", "properties": {"xs": strings}}, result="ok"
    )
    assert run_tool(fake, json.dumps({"xs": ["ab"] * 100_000})) == "ok"
    assert _problems(fake, json.dumps({"xs": ["ab"] * 100_000 + [1]})) == ["at xs: expected array"]
    contains = {"type": "array", "contains": {"type": "integer"}, "unevaluatedItems": False}
    fake = FakeTool("c", input_schema={"type": "object", "properties": {"xs": contains}})
    (problem,) = _problems(fake, json.dumps({"xs": [1] * 40_000}))
    assert STEPS in problem  # five steps an item, for two bytes


# -- refused when the tool is defined --------------------------------------------------------


def _doubling() -> dict[str, Any]:
    defs: dict[str, Any] = {"d0": {"type": "integer"}}
    for level in range(1, 41):
        below = {"$ref": f"#/$defs/d{level - 1}"}
        defs[f"d{level}"] = {"allOf": [below, dict(below)]}
    return {"type": "object", "$defs": defs, "properties": {"n": {"$ref": "#/$defs/d40"}}}


HOSTILE = {
    "doubling": (_doubling(), PER_VALUE),
    "cycle": (
        {
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"$ref": "#/$defs/a"}},
        },
        "a $ref cycle checks one value against the same subschemas forever",
    ),
    "costly_pattern": (
        {"type": "object", "properties": {"s": {"type": "string", "pattern": "\\w{500}"}}},
        "a pattern too costly to compile",
    ),
    "costly_patterns": (
        {
            "type": "object",
            "properties": {
                f"p{i}": {"type": "string", "pattern": f"^\\w{{8}}{i}$"} for i in range(600)
            },
        },
        "patterns too costly to compile together",
    ),
    "dangling": (
        {"type": "object", "properties": {"n": {"$ref": "#/$defs/missing"}}},
        "does not resolve inside the schema",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_schema_over_the_bounds_is_refused_when_the_tool_is_defined(name: str) -> None:
    schema, bound = HOSTILE[name]
    with pytest.raises(AssertionError, match="input schema") as info:
        check_tool(FakeTool(name, input_schema=schema))
    assert bound in str(info.value)
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(plugin_of(FakeTool(name, input_schema=schema), FakeTool("fine")), name="pack")
    assert [p.name for p in hub.providers_for_pack("pack")] == ["fine"]
    (problem,) = [p for p in hub.problems() if p.pack == "pack"]
    assert (problem.kind, problem.item) == ("invalid-tool", name)
    assert bound in problem.reason


def test_an_mcp_servers_tools_over_the_bounds_are_refused_when_its_listing_is_read() -> None:
    pytest.importorskip("mcp", reason="the MCP client needs the mcp extra")
    server = {"command": sys.executable, "args": [str(SERVER)], "timeout": 30}
    hub = ToolHub(autoload=False, config={}, mcp_servers={"hostile": server})
    try:
        assert [p.name for p in hub.providers_for_server("hostile")] == ["fine"]
        refused = {p.item: p.reason for p in hub.problems() if p.kind == "invalid-tool"}
        assert sorted(refused) == ["cycle", "doubling", "patterns"]
        assert PER_VALUE in refused["doubling"]
        assert "patterns too costly to compile together" in refused["patterns"]
        assert "a $ref cycle" in refused["cycle"]
    finally:
        hub.close()
