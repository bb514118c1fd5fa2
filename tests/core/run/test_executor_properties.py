"""Property-based tests of the pipeline.

1. Totality and shape: any name with any raw input gets a well-formed result, never an
   exception, and the tool runs exactly when the name is offered and the input valid.
2. No echo: no refusal or error text repeats a value the model sent.
3. Differential validation: the pipeline accepts exactly what jsonschema's own
   validator accepts, and hands the tool the value unchanged.

Also no cross-talk: concurrent calls each get their own result. The output-cap property
lives in test_executor_output.py.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
from typing import Any, Literal

import jsonschema
import pydantic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolpalette import (
    Executor,
    FunctionToolProvider,
    ToolContext,
    ToolError,
    ToolRegistry,
    ToolResult,
    tool,
)
from toolpalette.testing import FakeTool

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TIMEOUT = 2.0
GRACE = 3.0
SPY_SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}
OFFERED = ["spy"]
NOT_OFFERED = ["hidden"]

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)
tool_names = (
    st.sampled_from(OFFERED)
    | st.sampled_from(NOT_OFFERED)
    | st.text(max_size=70)
    | st.none()
    | st.integers()
    | st.sampled_from(OFFERED).map(str.upper)
    | st.lists(st.text(max_size=3), max_size=2)
)
raw_args = (
    json_values.map(json.dumps)
    | st.text(max_size=60)
    | st.binary(max_size=40).map(lambda b: b.decode("latin-1"))
    | st.integers().map(lambda n: json.dumps({"n": n}))
    | st.dictionaries(st.sampled_from(["n", "m"]), json_scalars, max_size=2)
)


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({k for k, _ in pairs}) != len(pairs):
        raise ValueError("duplicate key")
    return dict(pairs)


def reference_accepts(raw: Any, schema: dict[str, Any]) -> bool:
    """The reference: strict JSON, then jsonschema's own Draft 2020-12 validator."""
    if isinstance(raw, str):
        try:
            data = json.loads(
                raw, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates
            )
        except (ValueError, RecursionError):
            return False
    else:
        data = raw
        if any(isinstance(v, float) and not math.isfinite(v) for v in data.values()):
            return False
    return isinstance(data, dict) and jsonschema.Draft202012Validator(schema).is_valid(data)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _well_formed(result: Any) -> None:
    data = json.loads(result.to_json())
    assert tuple(data) == tuple(ToolResult("").as_dict())  # the one shape, in its order
    assert isinstance(result.is_error, bool)
    assert isinstance(result.status, int)
    assert isinstance(result.code, str)
    assert isinstance(result.text, str)
    assert result.text.encode("utf-8")
    assert result.is_error == (result.status != 200)


@SETTINGS
@given(name=tool_names, raw=raw_args)
def test_property_1_totality_and_shape(name: Any, raw: Any):
    spy = FakeTool("spy", input_schema=SPY_SCHEMA, result=lambda value: value["n"])
    hidden = FakeTool("hidden", input_schema=SPY_SCHEMA, result="hidden")
    executor = Executor(ToolRegistry([spy, hidden]), offered=OFFERED, timeout=TIMEOUT)
    started = time.monotonic()
    result = run(executor.execute(name, raw, context=ToolContext(run_id="p1")))
    assert time.monotonic() - started < TIMEOUT + GRACE
    _well_formed(result)
    should_run = name == "spy" and reference_accepts(raw, SPY_SCHEMA)
    assert spy.call_count == (1 if should_run else 0)
    assert hidden.call_count == 0
    assert (result.status == 200) == should_run


# -- property 2: no echo, no leak -----------------------------------------------------


class Filters(pydantic.BaseModel):
    tags: list[str] = []
    limit: int = 10


@tool
def search(
    query: str,
    page: int = 1,
    mode: Literal["fast", "deep"] = "fast",
    filters: Filters | None = None,
) -> str:
    """Search, and fail with the query in the exception message."""
    raise ValueError(f"backend rejected {query!r} on page {page}")


canaries = st.builds(lambda: f"CNRY-{uuid.uuid4().hex[:12]}")


def _plant(base: Any, canary: str, draw: Any) -> Any:
    """Put ``canary`` somewhere in ``base``: a leaf value, or a key."""
    if isinstance(base, dict) and base:
        key = draw(st.sampled_from(sorted(base)))
        if draw(st.booleans()):
            return {**base, canary: base[key]}  # an unexpected key
        return {**base, key: _plant(base[key], canary, draw)}
    if isinstance(base, list) and base:
        i = draw(st.integers(0, len(base) - 1))
        return [*base[:i], _plant(base[i], canary, draw), *base[i + 1 :]]
    return canary


@SETTINGS
@given(data=st.data())
def test_property_2_no_echo_no_leak(data: st.DataObject):
    canary = data.draw(canaries)
    base = data.draw(
        st.fixed_dictionaries(
            {"query": st.just("weather"), "page": st.integers(-3, 3)},
            optional={
                "mode": st.sampled_from(["fast", "deep", "other"]),
                "filters": st.fixed_dictionaries({"tags": st.lists(st.just("t"), max_size=2)}),
            },
        )
    )
    planted = _plant(base, canary, data.draw)
    reports: list[Any] = []
    executor = Executor(ToolRegistry([search]), on_tool_error=reports.append)
    as_text = data.draw(st.booleans())
    raw = json.dumps(planted) if as_text else planted
    result = run(executor.execute("search", raw, context=ToolContext(run_id="p2")))
    assert result.is_error  # invalid input, or the tool's own failure
    assert canary not in result.to_json()
    assert "weather" not in result.text
    assert executor.reports.join()
    (report,) = reports
    if result.code == "invalid_input":  # refused before validation passed: the raw input
        assert report.input is raw
    else:  # validated: the input the tool got, as JSON data (unknown keys dropped)
        assert isinstance(report.input, dict)
        assert repr(report.input["query"]) in str(report.error)
    if result.code == "internal_error":
        assert canary in str(report.error) or "weather" in str(report.error)
    if result.code == "invalid_input":
        assert "expected" in result.text


# -- property 3: differential validation ----------------------------------------------


def _schemas(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    leaves = st.one_of(
        st.builds(
            lambda lo, span: {"type": "integer", "minimum": lo, "maximum": lo + span},
            st.integers(-5, 5),
            st.integers(0, 10),
        ),
        st.just({"type": "number"}),
        st.builds(lambda n: {"type": "string", "maxLength": n}, st.integers(0, 5)),
        st.just({"type": "string", "enum": ["a", "b"]}),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.just({"type": ["integer", "null"]}),
    )
    if depth == 0:
        return leaves
    inner = _schemas(depth - 1)
    return st.one_of(
        leaves,
        st.builds(
            lambda item, n: {"type": "array", "items": item, "maxItems": n},
            inner,
            st.integers(0, 3),
        ),
        _object_schemas(inner),
    )


def _object_schemas(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def build(props: dict[str, Any], required: list[str], closed: bool) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": props}
        schema["required"] = sorted(set(required) & set(props))
        if closed:
            schema["additionalProperties"] = False
        return schema

    names = st.sampled_from(["a", "b", "c"])
    return st.builds(
        build, st.dictionaries(names, inner, max_size=3), st.lists(names), st.booleans()
    )


def _near(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Instances that mostly fit ``schema``, with some type flips mixed in."""
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        fitting: st.SearchStrategy[Any] = st.fixed_dictionaries(
            {}, optional={k: _near(v) for k, v in props.items()}
        ) | st.fixed_dictionaries({k: _near(v) for k, v in props.items()})
    elif kind == "array":
        fitting = st.lists(_near(schema["items"]), max_size=4)
    elif kind == "integer":
        fitting = st.integers(schema["minimum"] - 1, schema["maximum"] + 1) | st.just(1.0)
    elif kind == "string":
        fitting = (
            st.sampled_from(schema["enum"] + ["c"]) if "enum" in schema else st.text(max_size=7)
        )
    else:
        fitting = json_scalars.filter(lambda v: not (isinstance(v, float) and not math.isfinite(v)))
    flips = (
        st.none()
        | st.booleans()
        | st.integers(-3, 3)
        | st.text(max_size=3)
        | st.just([])
        | st.just({})
    )
    return st.one_of(fitting, fitting, fitting, flips)


@SETTINGS
@given(data=st.data())
def test_property_3_differential_validation_foreign_schemas(data: st.DataObject):
    schema = data.draw(_object_schemas(_schemas(1)))
    instance = data.draw(_near(schema))
    tool_ = FakeTool("t", input_schema=schema, result=lambda value: value)
    executor = Executor(ToolRegistry([tool_]))
    raw = json.dumps(instance) if data.draw(st.booleans()) else instance
    result = run(executor.execute("t", raw))
    expected = jsonschema.Draft202012Validator(schema).is_valid(instance)
    assert (result.status != 400) == expected, (schema, instance, result)
    if expected:
        assert tool_.calls[0].input == instance  # reaches the tool unchanged


class Item(pydantic.BaseModel):
    sku: str
    qty: int = 1


@tool
def order(
    customer: str,
    items: list[Item],
    priority: Literal["low", "high"] = "low",
    note: str | None = None,
    discount: float = 0.0,
    gift: bool = False,
) -> int:
    """Place an order."""
    return len(items)


@tool
def scale(factor: int, values: list[int] = [], label: str = "x") -> int:  # noqa: B006
    """Scale values."""
    return factor


@SETTINGS
@given(data=st.data())
def test_property_3_differential_validation_pydantic_tools(data: st.DataObject):
    fn = data.draw(st.sampled_from([order, scale]))
    provider = FunctionToolProvider(fn)
    schema = provider.input_schema
    base = data.draw(_near(_flatten(schema)))
    executor = Executor(ToolRegistry([fn]))
    result = run(executor.execute(provider.name, json.dumps(base)))
    reference = jsonschema.Draft202012Validator(schema)
    assert (result.status != 400) == reference.is_valid(base), (base, result)


def _flatten(schema: dict[str, Any]) -> dict[str, Any]:
    """A $ref-free, simplified view of a pydantic schema, to draw instances near it."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
            if "anyOf" in node:
                return walk(node["anyOf"][0])
            if node.get("type") == "integer":
                return {"type": "integer", "minimum": -3, "maximum": 3}
            if "enum" in node or "const" in node:
                return {"type": "string", "enum": list(node.get("enum", [node.get("const")]))}
            return {k: walk(v) for k, v in node.items() if k != "default"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk({k: v for k, v in schema.items() if k != "$defs"})


# -- bonus: no cross-talk ---------------------------------------------------------------

plans = st.lists(
    st.tuples(st.floats(0, 0.005), st.sampled_from(["ok", "tool_error", "crash", "invalid"])),
    min_size=1,
    max_size=60,
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(plan=plans, together=st.booleans())
def test_property_no_cross_talk(plan: list[tuple[float, str]], together: bool):
    """Concurrent calls with random delays and failures each get their own result."""

    async def behave(value: Any) -> Any:
        await asyncio.sleep(value["delay"])
        if value["kind"] == "tool_error":
            raise ToolError(f"call {value['i']} refused", code=f"c{value['i']}")
        if value["kind"] == "crash":
            raise RuntimeError(f"call {value['i']} crashed")
        return {"i": value["i"]}

    schema = {"type": "object", "required": ["i"], "properties": {"i": {"type": "integer"}}}
    tool_ = FakeTool("t", input_schema=schema, result=behave, is_async=True, read_only=True)
    executor = Executor(ToolRegistry([tool_]), concurrency=8)
    calls = [
        ("t", {"i": "bad" if kind == "invalid" else i, "delay": delay, "kind": kind}, f"id{i}")
        for i, (delay, kind) in enumerate(plan)
    ]

    async def go() -> list[Any]:
        if together:
            return await executor.execute_many(calls)
        return list(await asyncio.gather(*(executor.execute(n, v, call_id=c) for n, v, c in calls)))

    results = run(go())
    assert len(results) == len(plan)
    for i, ((_, kind), result) in enumerate(zip(plan, results, strict=False)):
        expected = {
            "ok": (200, "ok", f'{{"i":{i}}}'),
            "tool_error": (422, f"c{i}", f"call {i} refused"),
            "crash": (500, "internal_error", "Tool 't' failed with an internal error."),
            "invalid": (400, "invalid_input", None),
        }[kind]
        assert (result.status, result.code) == expected[:2]
        if kind in ("ok", "tool_error"):
            assert result.text == expected[2]
    ran = sorted(call.context.call_id for call in tool_.calls)
    assert ran == sorted(f"id{i}" for i, (_, kind) in enumerate(plan) if kind != "invalid")
