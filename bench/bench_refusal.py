"""Refusing adversarial model input: answered in milliseconds, the event loop never stalled.

Each case is about 1 MiB of input built to hit a super-linear path of a naive validator
(a pairwise uniqueness check, a backtracking regular expression, one error object per
bad item, one per extra key). Each is sent through ``Executor.execute`` while a ticker
task runs on the same loop; the table gives the median time to the 400 and the longest
gap between the ticker's turns (the loop's longest stall) over ``BENCH_ROUNDS`` rounds.
Goal (issue: reliability, item 1): every case answers 400 and stalls the loop < 50 ms.

Input that needs more than the loop's share of a hand-written schema's work (10,000
steps, or 10,000 arrays and objects) is validated in the worker pool, so a case may take
longer to answer than it stalls the loop. One valid case keeps that honest: 2,000 typed
rows against a hand-written schema (16,000 steps, validated apart) must answer 200, with
the same stall goal.

The prepared inputs stay alive for the whole run and are frozen out of the garbage
collector's way (``gc.freeze``) once built: a full collection, which any allocation may
trigger, walks every live object, so without that the stall would measure this
process's own heap. A host with a large heap pays such collections too, whatever code
allocates; ``gc.freeze`` after start-up is the remedy there as well.

The hand-written cases go through the JSON Schema validator (a tool that brings its own
schema, as an MCP server's tools do), one per class of work it bounds: uniqueItems over
arrays (text and mapping, and nested), a typed ``items`` schema over half a million
values, item-by-item keywords (``enum`` items, ``anyOf`` items, ``contains``), an
``enum`` of arrays, and error messages (jsonschema's quote the whole instance, once per
``anyOf`` branch; ours a short prefix). Parsing a megabyte of JSON text is common to
every text case.

The hostile-schema cases (issue: faults, item 1) turn it around: small input (at most
64 KiB of text, so it starts on the loop) against a schema built so that one step of a
naive validator costs work that grows with the schema: 2,000 long ``enum`` arrays, 600
patterns, branches that check nothing (``allOf`` of ``{}``, ``anyOf`` of ``false``), a
hundred thousand declared properties or annotation keys, ``unevaluated*`` walks, a nested
``$schema`` that would switch to jsonschema's stock validator, hashes chosen to collide,
``allOf`` doubling through ``$ref``. The tools are ``FakeTool``s, which skip the
definition-time check that refuses most of these schemas: the bounds hold without it.
The table gives each case's status, median time and longest loop stall; the summary
records the worst stall over them (goal < 50 ms, as for the refusal cases).

The invalid-input comparison with the mcp SDK and pydantic is in ``bench_pipeline``
(same run under ``python -m bench``).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import time
from typing import Annotated, Any

import pydantic
from toolpalette import Executor, Tool, tool
from toolpalette.testing import FakeTool, make_registry

from bench._summary import record

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "31")) // 3 or 1
MiB = 1024 * 1024
STALL_GOAL_MS = 50.0


@tool
def pick(names: set[str]) -> int:
    """A set parameter, as request_skill has."""
    return len(names)


@tool
def tags(items: list[str]) -> int:
    """A list of strings."""
    return len(items)


@tool
def shaped(code: Annotated[str, pydantic.Field(pattern=r"^(a+)+$")]) -> str:
    """A pattern a backtracking engine takes exponential time on."""
    return code


class Inner(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    n: int
    tags: list[str] = []


class Outer(pydantic.BaseModel):
    inners: list[Inner]


@tool
class Nested(Tool):
    """Nested models."""

    def run(self, input: Outer) -> int:
        return len(input.inners)


HAND = FakeTool(
    "hand",
    input_schema={
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^(a+)+$"},
            "rows": {"type": "array", "uniqueItems": True},
            "ints": {"type": "array", "items": {"type": "integer"}},
            "codes": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "either": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"const": "x"}]}},
            # minimum keeps this one item by item: a descent per item, in jsonschema.
            "stepwise": {
                "type": "array",
                "items": {"anyOf": [{"type": "integer", "minimum": 0}, {"const": "x"}]},
            },
            "has": {"type": "array", "contains": {}, "minContains": 600_000},
            "grid": {"type": "array", "items": {"type": "array", "uniqueItems": True}},
            "shape": {"enum": [[[0] * 50] * 50, {"rows": [[0] * 50] * 50}]},
            "whole": {"anyOf": [{"type": "object"}, {"type": "string"}, {"type": "null"}]},
        },
    },
)


ROWS = FakeTool(
    "rows",
    result="ok",
    input_schema={
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
                },
            }
        },
    },
)
VALID = "2,000 valid rows, hand-written schema"


def _two_thousand_rows() -> dict[str, Any]:
    return {"rows": [{"id": i, "name": f"row {i}", "tags": ["a", "b"]} for i in range(2_000)]}


def _fill(prefix: str, item: str, suffix: str, budget: int = MiB - 64) -> str:
    count = (budget - len(prefix) - len(suffix)) // (len(item) + 1)
    return prefix + ",".join([item] * count) + suffix


def _names_and_an_int() -> str:
    names, size, i = [], 20, 0
    while size < MiB - 64:
        name = f'"skill-{i:07d}"'
        names.append(name)
        size += len(name) + 1
        i += 1
    return '{"names": [' + ",".join(names) + ", 1]}"


def _unique_then_duplicate() -> str:
    text = _names_and_an_int()
    return text[: -len(", 1]}")] + ', "skill-0000000"]}'


def _a_run() -> str:
    return "a" * (MiB - 64) + "!"


def _rows() -> str:
    rows, size, i = [], 20, 0
    while size < MiB - 64:
        row = f"[{i}]"
        rows.append(row)
        size += len(row) + 1
        i += 1
    return '{"rows": [' + ",".join(rows) + ",[0]]}"


def _grid() -> str:
    row = "[" + ",".join(str(i) for i in range(20)) + "]"
    return _fill('{"grid": [', row, ",[1,1]]}")


CASES: list[tuple[str, str, Any]] = [
    ("set[str]: names + one integer (text)", "pick", _names_and_an_int),
    ("set[str]: names + one duplicate (text)", "pick", _unique_then_duplicate),
    ("list[str]: 340k integers (text)", "tags", lambda: _fill('{"items": [', "1", "]}")),
    ("extra fields: 70k keys (mapping)", "tags", lambda: {f"k{i}": 0 for i in range(70_000)}),
    (
        "pydantic pattern ^(a+)+$: 1 MiB a's + '!'",
        "shaped",
        lambda: {"code": "a" * (MiB - 64) + "!"},
    ),
    (
        "nested models: a bad item after 100k good ones",
        "nested",
        lambda: {"inners": [{"n": 1, "tags": ["x"] * 100_000 + [1]}]},
    ),
    ("hand-written pattern ^(a+)+$", "hand", lambda: {"code": _a_run()}),
    ("hand-written uniqueItems: 100k rows + dup", "hand", _rows),
    (
        "hand-written uniqueItems: 100k rows + dup (mapping)",
        "hand",
        lambda: {"rows": [[i] for i in range(100_000)] + [[0]]},
    ),
    (
        "hand-written items integer: 520k + a string",
        "hand",
        lambda: _fill('{"ints": [', "1", ',"x"]}'),
    ),
    (
        "hand-written items anyOf, item by item: 520k + a bad one",
        "hand",
        lambda: _fill('{"stepwise": [', "1", ',"y"]}'),
    ),
    (
        "hand-written items enum: 200k + a bad one",
        "hand",
        lambda: _fill('{"codes": [', '"a"', ',"c"]}'),
    ),
    (
        "hand-written items anyOf: 520k + a bad one",
        "hand",
        lambda: _fill('{"either": [', "1", ',"y"]}'),
    ),
    (
        "hand-written contains {}: 520k items, too few",
        "hand",
        lambda: _fill('{"has": [', "1", "]}"),
    ),
    ("hand-written nested uniqueItems: 20k rows", "hand", _grid),
    (
        "hand-written anyOf of 3 types: a 520k array (messages)",
        "hand",
        lambda: _fill('{"whole": [', "1", "]}"),
    ),
    (
        "hand-written enum of arrays: a 50x50 grid off by one",
        "hand",
        lambda: {"shape": [[0] * 50] * 49 + [[0] * 49 + [1]]},
    ),
    (VALID, "rows", _two_thousand_rows),
]


_COLLIDE = (1 << 61) - 1
"""Python hashes integers modulo this: multiples of it, plus one, all hash alike."""


def _hostile(name: str, schema: dict[str, Any]) -> FakeTool:
    return FakeTool(name, input_schema={"type": "object", "properties": schema}, result="ok")


def _doubling() -> FakeTool:
    defs: dict[str, Any] = {"d0": {"type": "integer"}}
    for level in range(1, 41):
        below = {"$ref": f"#/$defs/d{level - 1}"}
        defs[f"d{level}"] = {"allOf": [below, dict(below)]}
    schema = {"type": "object", "$defs": defs, "properties": {"n": {"$ref": "#/$defs/d40"}}}
    return FakeTool("doubling", input_schema=schema, result="ok")


def _wide() -> dict[str, Any]:
    wide: dict[str, Any] = {f"x-note-{i}": i for i in range(100_000)}
    wide["type"] = "integer"
    return wide


HOSTILE: list[tuple[str, FakeTool, Any]] = [
    (
        "2,000 long enum arrays: 61 KB of items",
        _hostile(
            "enums",
            {"xs": {"items": {"enum": [[0] * 39 + [i] for i in range(2_000)]}}},
        ),
        lambda: json.dumps({"xs": [[0] * 39 + [5_000]] * 500}),
    ),
    (
        "600 distinct patterns: 21 KB",
        _hostile(
            "patterns",
            {f"p{i}": {"type": "string", "pattern": f"^\\w{{4}}-{i}$"} for i in range(600)},
        ),
        lambda: json.dumps({f"p{i}": f"abcd-{i}" for i in range(600)}),
    ),
    (
        "allOf of 20,000 empty schemas: 30 items",
        _hostile("empties", {"xs": {"items": {"allOf": [{}] * 20_000}}}),
        lambda: json.dumps({"xs": [1] * 30}),
    ),
    (
        "anyOf of 2,000 false: an object of 6,000 items",
        _hostile("falses", {"ys": {"anyOf": [{"properties": {"a": False}}] * 2_000}}),
        lambda: json.dumps({"ys": {"a": list(range(6_000))}}),
    ),
    (
        "100,000 declared properties: 30 empty objects",
        _hostile(
            "declared", {"xs": {"items": {"properties": {f"k{i}": {} for i in range(100_000)}}}}
        ),
        lambda: json.dumps({"xs": [{}] * 30}),
    ),
    (
        "100,000 annotation keys in an anyOf branch: 30 items",
        _hostile("annotated", {"xs": {"items": {"anyOf": [_wide(), {"type": "string"}]}}}),
        lambda: json.dumps({"xs": [1] * 30}),
    ),
    (
        "required of 2,000 names: 300 empty objects",
        _hostile("needy", {"xs": {"items": {"required": [f"r{i}" for i in range(2_000)]}}}),
        lambda: json.dumps({"xs": [{}] * 300}),
    ),
    (
        "unevaluatedProperties, patternProperties ^(a+)+$: one key",
        FakeTool(
            "unevaluated_keys",
            input_schema={
                "type": "object",
                "patternProperties": {"^(a+)+$": {}},
                "unevaluatedProperties": False,
            },
        ),
        lambda: json.dumps({"a" * 24 + "!": 1}),
    ),
    (
        "unevaluatedItems after contains: 20,000 items",
        _hostile("unevaluated_items", {"xs": {"contains": {}, "unevaluatedItems": False}}),
        lambda: json.dumps({"xs": [1] * 20_000}),
    ),
    (
        "nested draft-07 $schema, uniqueItems: 3,000 objects",
        _hostile(
            "dialect",
            {
                "xs": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "uniqueItems": True,
                }
            },
        ),
        lambda: json.dumps({"xs": [{"a": i} for i in range(3_000)]}),
    ),
    (
        "uniqueItems: 3,000 integers whose hashes collide",
        _hostile("colliding", {"xs": {"uniqueItems": True}}),
        lambda: json.dumps({"xs": [k * _COLLIDE + 1 for k in range(1, 3_001)]}),
    ),
    (
        "enum of 2,000 colliding integers: 2,500 items",
        _hostile(
            "colliding_enum", {"xs": {"items": {"enum": [k * _COLLIDE + 1 for k in range(2_000)]}}}
        ),
        lambda: json.dumps({"xs": [2_001 * _COLLIDE + 1] * 2_500}),
    ),
    ("allOf doubling through $ref, 40 deep: one value", _doubling(), lambda: {"n": 1}),
]
"""Hand-written schemas built so that one step of a naive validator grows with them."""


async def _one(executor: Executor, name: str, raw: Any) -> tuple[float, float, int]:
    """Milliseconds to the answer, the longest loop stall in ms, and the status."""
    gaps: list[float] = []
    done = False

    async def ticker() -> None:
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    started = time.perf_counter()
    result = await executor.execute(name, raw)
    elapsed = time.perf_counter() - started
    done = True
    await task
    return elapsed * 1e3, max(gaps, default=0.0) * 1e3, result.status


async def measure(
    cases: list[tuple[str, str, Any]], *tools: Any
) -> list[tuple[str, float, float, int]]:
    registry = make_registry(*tools)
    executor = Executor(registry, timeout=300)
    inputs = [(label, name, make()) for label, name, make in cases]
    for _, name, raw in inputs:  # warm-up: build validators once
        await _one(executor, name, raw)
    # The prepared inputs (several million objects) live for the whole run, and a full
    # collection walks every live object whatever allocation triggers it: frozen out of
    # the collector's way, the stall measured is the pipeline's work, not this heap's.
    gc.freeze()
    times: dict[str, list[float]] = {label: [] for label, _, _ in inputs}
    stalls: dict[str, list[float]] = {label: [] for label, _, _ in inputs}
    statuses: dict[str, int] = {}
    for _ in range(ROUNDS):
        for label, name, raw in inputs:
            ms, stall, status = await _one(executor, name, raw)
            times[label].append(ms)
            stalls[label].append(stall)
            statuses[label] = status
    return [
        (label, statistics.median(times[label]), max(stalls[label]), statuses[label])
        for label, _, _ in inputs
    ]


def main(argv: list[str]) -> None:
    """Print one row per adversarial case, then one per hostile schema."""
    rows = asyncio.run(measure(CASES, pick, tags, shaped, Nested, HAND, ROWS))
    hostile = asyncio.run(
        measure(
            [(label, fake.name, make) for label, fake, make in HOSTILE], *(f for _, f, _ in HOSTILE)
        )
    )
    print(
        f"{ROUNDS} rounds per case, each input about 1 MiB; the stall is the worst over "
        f"the rounds (goal < {STALL_GOAL_MS:.0f} ms, status 400).\n"
    )
    print("| case | status | median ms to answer | longest loop stall ms | goal |")
    print("|---|---|---|---|---|")
    for label, ms, stall, status in rows:
        ok = status == _expected(label) and stall < STALL_GOAL_MS
        print(f"| {label} | {status} | {ms:.1f} | {stall:.1f} | {'met' if ok else 'MISSED'} |")
    print(
        "\nHostile schemas, input of at most 64 KiB (validated on the loop as far as its share "
        f"goes); goal < {STALL_GOAL_MS:.0f} ms of stall whatever the status.\n"
    )
    print("| hostile schema | status | median ms to answer | longest loop stall ms | goal |")
    print("|---|---|---|---|---|")
    for label, ms, stall, status in hostile:
        ok = stall < STALL_GOAL_MS
        print(f"| {label} | {status} | {ms:.1f} | {stall:.1f} | {'met' if ok else 'MISSED'} |")
    worst = max(hostile, key=lambda row: row[2])
    record(
        f"longest loop stall over the hostile schemas ({worst[0]})",
        worst[2],
        "the stall budget (a fixed goal)",
        STALL_GOAL_MS,
        unit="ms",
        goal="<= 1.0",
    )
    refused = all(status == _expected(label) for label, _, _, status in rows)
    valid = next(row for row in rows if row[0] == VALID)
    record(
        f"{VALID}: time to 200" + ("" if valid[3] == 200 else ", NOT 200"),
        valid[1],
        "the stall budget (a fixed goal)",
        STALL_GOAL_MS,
        unit="ms",
    )
    rows = [row for row in rows if row[0] != VALID]
    slowest = max(rows, key=lambda row: row[1])
    stalled = max([*rows, valid], key=lambda row: row[2])
    record(
        f"refusal of 1 MiB, slowest case ({slowest[0]}){'' if refused else ', NOT ALL 400'}",
        slowest[1],
        "the stall budget (a fixed goal)",
        STALL_GOAL_MS,
        unit="ms",
    )
    record(
        f"longest loop stall ({stalled[0]})",
        stalled[2],
        "the stall budget (a fixed goal)",
        STALL_GOAL_MS,
        unit="ms",
        goal="<= 1.0" if refused else ">= 1e9",  # a case not refused misses the goal
    )


def _expected(label: str) -> int:
    return 200 if label == VALID else 400


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
