"""The output cap (413, never truncated) and output that is not JSON (500)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolpalette import Executor, ToolRegistry
from toolpalette.testing import FakeTool

DEFAULT_OUTPUT_CAP = Executor(ToolRegistry()).output_cap

CANARY = "CNRY-0b9e33aa"


def run(value: Any, *, cap: int | None = None, tool_cap: int | None = None) -> Any:
    tool = FakeTool("out", result=lambda _v: value, output_cap=tool_cap)
    executor = Executor(ToolRegistry([tool]), **({"output_cap": cap} if cap else {}))
    return executor.execute_sync("out", {})


def test_text_output_ships_as_it_is_and_other_output_as_compact_json():
    assert run("plain text").text == "plain text"
    assert run({"a": [1, 2.5, None, True]}).text == '{"a":[1,2.5,null,true]}'
    assert run("é").text == "é"


def test_the_default_cap_counts_utf8_bytes():
    assert not run("x" * DEFAULT_OUTPUT_CAP).is_error
    over = run("x" * (DEFAULT_OUTPUT_CAP + 1))
    assert (over.status, over.code) == (413, "output_too_large")
    assert str(DEFAULT_OUTPUT_CAP) in over.text
    # 2 bytes per character: half the characters reach the cap.
    assert not run("é" * (DEFAULT_OUTPUT_CAP // 2)).is_error
    assert run("é" * (DEFAULT_OUTPUT_CAP // 2 + 1)).status == 413


def test_the_tool_cap_overrides_the_executor_cap():
    assert run("x" * 11, cap=1000, tool_cap=10).status == 413
    assert not run("x" * 500, cap=10, tool_cap=1000).is_error


def test_scalar_keys_are_coerced_as_json_does():
    assert run({1: "a", None: "b"}).text == '{"1":"a","null":"b"}'


def test_a_huge_output_is_refused_not_truncated():
    result = run(["y" * 1000] * 10_000, cap=4096)
    assert result.status == 413
    assert "y" * 10 not in result.text


def _recursive() -> dict[str, Any]:
    data: dict[str, Any] = {}
    data["self"] = data
    return data


class LeakyRepr:
    def __repr__(self) -> str:
        return CANARY

    __str__ = __repr__


def _deep() -> list[Any]:
    value: list[Any] = []
    for _ in range(100_000):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        {1, 2},
        object(),
        LeakyRepr(),
        {"k": LeakyRepr()},
        math.nan,
        {"x": math.inf},
        _recursive(),
        b"bytes",
        (i for i in range(3)),
        "lone \ud800 surrogate",
        {"key": "\udfff"},
        _deep(),
    ],
    ids=lambda v: type(v).__name__,
)
def test_output_that_is_not_json_is_a_500_without_repr(value: Any):
    result = run(value)
    assert (result.status, result.code) == (500, "invalid_output")
    assert CANARY not in result.to_json()
    result.text.encode("utf-8")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)
outputs = (
    json_values
    | st.text(max_size=400)
    | st.binary(max_size=20)
    | st.sets(st.integers(), max_size=3)
    | st.just(math.nan)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=outputs, cap=st.integers(min_value=1, max_value=300))
def test_property_output_cap(value: Any, cap: int):
    """The output-cap property, for a refuse-don't-truncate policy.

    The model-visible payload is valid UTF-8 and at most ``cap`` bytes; it is the whole
    output when the output fits, and a 413 exactly when its JSON text is over the cap.
    """
    result = run(value, cap=cap)
    encoded = result.text.encode("utf-8")
    try:
        expected = (
            value
            if isinstance(value, str)
            else json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        )
        size = len(expected.encode("utf-8"))
    except (TypeError, ValueError):
        assert result.code == "invalid_output"
        return
    if size > cap:
        assert (result.status, result.code) == (413, "output_too_large")
    else:
        assert not result.is_error
        assert result.text == expected
        assert len(encoded) <= cap
        if not isinstance(value, str):
            assert json.loads(result.text) == value or value != value


def test_a_sync_tool_returning_a_coroutine_is_a_500_and_the_coroutine_is_closed():
    async def never_awaited() -> str:
        return "x"

    result = run(never_awaited())  # filterwarnings=error would catch a "never awaited"
    assert (result.status, result.code) == (500, "invalid_output")
