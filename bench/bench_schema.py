"""Defining a tool: checking the JSON Schema it brings, beside jsonschema's metaschema check.

Every hand-written schema (a ``function_tool``'s, each tool of an MCP server's listing,
a refined one) goes through ``check_schema`` when the tool is defined: valid Draft
2020-12, self-contained, linear-time patterns, within the work bounds. Validity used to
be jsonschema's metaschema check alone, milliseconds per schema (the 2020-12
metaschema's ``$dynamicRef`` sends each subschema through every vocabulary), so a
thousand-tool server took seconds to bind; it is now decided by a walk of the common
keywords (``toolpalette._schema.metaschema``), jsonschema only on doubt.

The schemas are the Berkeley Function Calling Leaderboard's functions (``bench/_bfcl.py``,
its type names made JSON Schema's), each timed per schema, in interleaved rounds:

- ``check_schema`` (every check it makes), against the anchor: jsonschema's metaschema
  check, ``Draft202012Validator(META_SCHEMA).iter_errors``, what ``check_schema`` ran
  before. Goal: at most 0.05x;
- the walk alone (``surely_valid``), for information.

The module first checks that every schema takes the fast path and that jsonschema finds
each valid (it stops otherwise). Without the data it says why and records nothing.
``BENCH_ROUNDS`` scales the run.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from toolpalette._schema.checks import check_schema
from toolpalette._schema.metaschema import surely_valid

from bench import _bfcl
from bench._summary import record

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))


def _jsonschema(schema: dict[str, Any]) -> None:
    list(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema))


def _check_schema(schema: dict[str, Any]) -> None:
    check_schema(schema, "bench")


def _per_schema_us(run: Callable[[dict[str, Any]], Any], schemas: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for schema in schemas:
        run(schema)
    return (time.perf_counter() - start) / len(schemas) * 1e6


def main(argv: list[str]) -> None:
    try:
        data = _bfcl.load()
    except _bfcl.Unavailable as why:
        print(f"No BFCL data ({why}): nothing measured.")
        return
    schemas = [_bfcl.json_schema(parameters) for _, _, parameters in data.functions]
    fast = sum(surely_valid(schema) for schema in schemas)
    invalid = sum(
        1
        for schema in schemas
        if next(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema), None)
    )
    for schema in schemas:
        check_schema(schema, "bench")  # raises if any is refused
    print(
        f"{len(schemas)} BFCL schemas ({_bfcl.DISTRIBUTION} {data.version}): {fast} take the "
        f"fast path, {invalid} invalid for jsonschema.\n"
    )
    if fast != len(schemas) or invalid:
        raise SystemExit("every BFCL schema must take the fast path and be valid")
    cases: dict[str, Callable[[dict[str, Any]], Any]] = {
        "jsonschema metaschema check": _jsonschema,
        "check_schema": _check_schema,
        "surely_valid (the walk alone)": surely_valid,
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, run in cases.items():
            samples[name].append(_per_schema_us(run, schemas))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    anchor = medians["jsonschema metaschema check"]
    print("Per schema, median of the rounds (best round beside it), microseconds.\n")
    print("| case | median (µs) | best (µs) | vs jsonschema |")
    print("|---|---:|---:|---:|")
    for name, value in medians.items():
        print(f"| {name} | {value:,.1f} | {min(samples[name]):,.1f} | {value / anchor:.3f}x |")
    record(
        "check_schema per BFCL schema",
        medians["check_schema"],
        "jsonschema's metaschema check",
        anchor,
        unit="µs",
        goal="<= 0.05",
    )
    record(
        "the metaschema walk per BFCL schema",
        medians["surely_valid (the walk alone)"],
        "jsonschema's metaschema check",
        anchor,
        unit="µs",
    )
