"""Model input cannot stall the loop: validation work is bounded by the input's size.

No assertion here is about time. Each input would take minutes or hours on an
unbounded path (a backtracking regular expression, a pairwise uniqueness check, one
error object per bad item), so a regression hangs the test until pytest-timeout fails
it; the bounded path is also visible in what the refusal holds (one problem, and a
pydantic error with one entry, not a million).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import pydantic
import pytest
import toolpalette
from toolpalette import InvalidInputError, tool
from toolpalette.testing import FakeTool, make_registry, run_tool

SECRET = "sk-SECRET-bounds"


@tool
def pick(names: set[str]) -> int:
    """Pick some names."""
    return len(names)


@tool
def shaped(code: Annotated[str, pydantic.Field(pattern=r"^(a+)+$")]) -> str:
    """Take a code matching a pattern prone to backtracking."""
    return code


@tool
def tags(items: list[str]) -> int:
    """Count tags."""
    return len(items)


def _refusal(obj: Any, raw: Any) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as info:
        run_tool(obj, raw)
    assert SECRET not in str(info.value)
    return info.value


def test_a_set_parameter_with_many_names_and_one_integer_answers_at_once() -> None:
    names = [f"name-{i}" for i in range(16_000)]
    for raw in ({"names": [*names, 1]}, json.dumps({"names": [*names, 1]})):
        error = _refusal(pick, raw)
        assert [str(p) for p in error.problems] == ["at names[16000]: expected string"]


def test_duplicates_in_a_set_parameter_are_named_as_duplicates_not_a_wrong_type() -> None:
    error = _refusal(pick, {"names": [SECRET, "b", SECRET]})
    assert [str(p) for p in error.problems] == ["at names: expected items without duplicates"]
    assert run_tool(pick, {"names": ["a", "b"]}) == 2


def test_a_backtracking_pattern_is_matched_in_linear_time() -> None:
    # (a+)+$ against 60 a's and a '!' is 2**60 steps for a backtracking engine.
    error = _refusal(shaped, {"code": "a" * 60 + "!"})
    assert [str(p) for p in error.problems] == [
        "at code: expected text matching the pattern ^(a+)+$"
    ]
    assert run_tool(shaped, {"code": "aaa"}) == "aaa"


def test_a_hand_written_schema_with_a_backtracking_pattern_is_matched_in_linear_time() -> None:
    fake = FakeTool(
        "hand",
        input_schema={
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^(a+)+$"},
                "tags": {"type": "array", "uniqueItems": True},
            },
            "patternProperties": {"^(b+)+$": {"type": "integer"}},
        },
    )
    error = _refusal(fake, {"code": "a" * 60 + "!"})
    assert [str(p) for p in error.problems] == [
        "at code: expected text matching the pattern ^(a+)+$"
    ]
    # 9,000 distinct unhashable items (within the bound on arrays and objects): pairwise
    # comparison would be 4e7 steps.
    error = _refusal(fake, {"tags": [[i] for i in range(9_000)] + [[0]]})
    assert [str(p) for p in error.problems] == ["at tags: expected items without duplicates"]
    assert fake.parse_input({"b" * 60 + "!": "x", "code": "aa"})["code"] == "aa"


def test_a_refinement_with_a_backtracking_pattern_is_refused_at_definition() -> None:
    def lookahead(schema: dict[str, Any]) -> None:
        schema["properties"]["items"]["items"]["pattern"] = "^(?=a)a+$"

    def fresh(items: list[str]) -> int:
        """Count items."""
        return len(items)

    with pytest.raises(toolpalette.errors.InvalidToolSchemaError, match="linear-time"):
        toolpalette.FunctionToolProvider(tool(refine_schema=lookahead)(fresh))


def test_a_refinement_still_constrains_input_with_bounded_work() -> None:
    def short_ids(schema: dict[str, Any]) -> None:
        schema["properties"]["items"].update(uniqueItems=True, maxItems=3)
        schema["properties"]["items"]["items"]["pattern"] = "^(a+)+$"

    @tool(refine_schema=short_ids)
    def refined(items: list[str]) -> int:
        """Count refined items."""
        return len(items)

    assert run_tool(refined, {"items": ["a", "aa"]}) == 2
    assert [str(p) for p in _refusal(refined, {"items": ["a" * 60 + "!"]}).problems] == [
        "at items[0]: expected text matching the pattern ^(a+)+$"
    ]
    assert [str(p) for p in _refusal(refined, {"items": ["a", "a"]}).problems] == [
        "at items: expected items without duplicates"
    ]


def test_a_megabyte_of_wrong_items_is_one_problem() -> None:
    raw = json.dumps({"items": [1] * 340_000})
    assert 1_000_000 < len(raw) <= 1_048_576
    error = _refusal(tags, raw)
    assert [str(p) for p in error.problems] == ["at items[0]: expected string"]
    assert isinstance(error.__cause__, pydantic.ValidationError)
    assert error.__cause__.error_count() == 1  # the validator stopped at the first


def test_a_megabyte_of_extra_fields_is_one_problem() -> None:
    raw = {f"k{i}": 0 for i in range(70_000)} | {"items": []}
    error = _refusal(tags, raw)
    assert [str(p) for p in error.problems] == [
        "at (input): expected no other fields (allowed: items)"
    ]
    assert error.__cause__.error_count() == 1  # type: ignore[union-attr]


class Inner(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    n: int
    tags: list[str] = []


class Outer(pydantic.BaseModel):
    inners: list[Inner]


@tool
class Nested(toolpalette.Tool):
    """Take nested models."""

    def run(self, input: Outer) -> int:
        return len(input.inners)


def test_nested_models_are_bounded_too() -> None:
    error = _refusal(Nested, {"inners": [{"n": 1, "tags": [SECRET] * 10 + [1] * 200_000}]})
    assert [str(p) for p in error.problems] == ["at inners[0].tags[10]: expected string"]
    extra = {f"{SECRET}{i}": 1 for i in range(20_000)}
    error = _refusal(Nested, {"inners": [{"n": 1, **extra}]})
    assert [str(p) for p in error.problems] == [
        "at inners[0]: expected no other fields (allowed: n, tags)"
    ]
    assert run_tool(Nested, {"inners": [{"n": 1.0, "tags": ["x"] * 10_000}]}) == 1


def test_a_mapping_has_the_same_size_limit_as_text() -> None:
    error = _refusal(tags, {"items": ["x" * 2_000_000]})
    assert [str(p) for p in error.problems] == [
        "at (input): expected at most 1048576 bytes of JSON"
    ]


async def test_a_5000_digit_integer_for_a_string_answers_400() -> None:
    registry = make_registry(
        tags,
        FakeTool("hand", input_schema={"type": "object", "properties": {"s": {"type": "string"}}}),
    )
    for name, raw in [
        ("tags", {"items": [10**5000]}),
        ("hand", {"s": 10**5000}),
        ("tags", '{"items": [' + "9" * 5000 + "]}"),
    ]:
        result = await toolpalette.execute(registry, name, raw)
        assert (result.status, result.code) == (400, "invalid_input"), result.text
        assert "at most 4300 digits" in result.text
