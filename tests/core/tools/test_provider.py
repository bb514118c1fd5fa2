"""Providers: function and class tools, equality, metadata, parse_input, origins."""

from __future__ import annotations

import asyncio
import enum
import json
from collections.abc import Callable
from typing import Any, Literal

import jsonschema
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolpalette import (
    BoundTool,
    ClassToolProvider,
    FunctionToolProvider,
    InvalidInputError,
    Origin,
    Tool,
    ToolContext,
    ToolProvider,
    tool,
)
from toolpalette.errors import InvalidToolSchemaError, ToolDefinitionError
from toolpalette.testing import FakeTool, as_provider

SECRET = "sk-SECRET-5d1c9a77"


# -- tools used below (module level, so their annotations resolve) ---------------------


class Address(pydantic.BaseModel):
    city: str
    zip_code: int


class Order(pydantic.BaseModel):
    quantity: int
    note: str = ""


class Receipt(pydantic.BaseModel):
    total: int


@tool(read_only=True)
def lookup(
    name: str,
    age: int,
    address: Address,
    tags: list[int],
    scores: dict[str, int],
    nickname: str | None = None,
) -> str:
    """Look a person up.

    Longer explanation for the model.

    Args:
        name: The person's full name.
        age: Age in years.
        address: Where they live.
    """
    return f"{name} {age}"


@tool
def with_context(path: str, ctx: ToolContext) -> Any:
    """Read a path relative to the workspace."""
    return (path, ctx)


@tool(name="fetch_async")
async def fetch(url: str) -> str:
    """Fetch a URL."""
    await asyncio.sleep(0)
    return url.upper()


@tool(
    display_name="Place an order",
    action_verb="Ordering",
    weight=3.0,
    metadata={"tier": "gold"},
    timeout=2.5,
    output_cap=512,
    resource_key=lambda value: value.quantity % 2,
    concurrency_safe=lambda value: value.quantity < 10,
)
class PlaceOrder(Tool):
    """Place an order."""

    def run(self, input: Order) -> Receipt:
        return Receipt(total=input.quantity * 2)


@tool(read_only=True)
class AsyncOrder(Tool):
    """Place an order, asynchronously."""

    async def run(self, input: Order) -> int:
        await asyncio.sleep(0)
        return input.quantity


@tool
class ContextOrder(Tool):
    """See the context."""

    def run(self, input: Order, ctx: ToolContext) -> Any:
        return (self.parent, ctx)


@tool(model_dependent=True)
class GradeFollower(Tool):
    """Depends on the model grade."""

    def run(self, input: Order) -> int:
        return 0


@tool(model_dependent=True, grade="small")
class GradeFixed(Tool):
    """Has its own grade."""

    def run(self, input: Order) -> int:
        return 0


class Parent:
    grade = "large"


# -- function tools -------------------------------------------------------------------


def test_function_tool_name_description_and_field_docs() -> None:
    provider = as_provider(lookup)
    assert isinstance(provider, FunctionToolProvider)
    assert provider.name == "lookup"
    assert provider.description == "Look a person up.\n\nLonger explanation for the model."
    props = provider.input_schema["properties"]
    assert props["name"]["description"] == "The person's full name."
    assert props["age"]["description"] == "Age in years."
    assert "description" not in props["tags"]
    assert provider.input_schema["required"] == ["name", "age", "address", "tags", "scores"]
    assert "title" not in provider.input_schema


def test_explicit_description_wins_over_the_docstring() -> None:
    @tool(description="Given explicitly.")
    def described(a: int) -> int:
        """From the docstring."""
        return a

    assert as_provider(described).description == "Given explicitly."


def test_a_tool_without_description_is_refused() -> None:
    def silent(a: int) -> int:
        return a

    with pytest.raises(ToolDefinitionError, match="description"):
        as_provider(tool(silent))


def test_a_function_name_that_is_no_tool_name_is_refused() -> None:
    def ünïcode(a: int) -> int:
        """Doc."""
        return a

    with pytest.raises(ToolDefinitionError, match="name="):
        as_provider(tool(ünïcode))
    assert as_provider(tool(name="unicode")(ünïcode)).name == "unicode"


def test_context_parameter_is_excluded_and_injected() -> None:
    provider = as_provider(with_context)
    assert set(provider.input_schema["properties"]) == {"path"}
    bound = provider.create()
    assert bound.takes_context
    context = ToolContext(call_id="c1")
    path, received = bound.invoke(provider.parse_input({"path": "a.txt"}), context)
    assert path == "a.txt"
    assert received is context


def test_context_defaults_to_a_fresh_one() -> None:
    provider = as_provider(with_context)
    _, received = provider.create().invoke(provider.parse_input({"path": "a"}))
    assert isinstance(received, ToolContext)


async def test_async_function_tool() -> None:
    provider = as_provider(fetch)
    assert provider.name == "fetch_async"
    bound = provider.create()
    assert bound.is_async
    assert not bound.takes_context
    assert await bound.invoke(provider.parse_input('{"url": "x"}')) == "X"


def test_function_providers_are_equal_by_function() -> None:
    first, second = as_provider(lookup), FunctionToolProvider(lookup)
    assert first == second
    assert hash(first) == hash(second)
    assert first != as_provider(with_context)
    assert first != "lookup"


def test_same_function_under_another_name_is_another_provider() -> None:
    assert FunctionToolProvider(lookup) != FunctionToolProvider(
        lookup, tool(name="other")(lambda: 0).__toolpalette_spec__
    )


def test_the_input_schema_is_generated_once() -> None:
    provider = as_provider(lookup)
    assert provider.input_schema is provider.input_schema


def test_defaults_of_a_plain_function_tool() -> None:
    @tool
    def make_thing(a: int) -> int:
        """Make."""
        return a

    provider = as_provider(make_thing)
    assert provider.read_only is False
    assert provider.concurrency_safe is False
    assert provider.display_name == "Make thing"
    assert provider.action_verb == "Running"
    assert provider.weight == 1.0
    assert provider.metadata == {}
    assert provider.timeout is None
    assert provider.output_cap is None
    assert provider.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
        "x-toolpalette-wrapped": True,
        "x-fastmcp-wrap-result": True,
    }
    assert provider.resource_key(None) is None
    assert provider.grade_for(Parent()) is None


def test_annotations_default_to_the_mcp_hints_and_follow_the_decorator() -> None:
    @tool
    def wipe(a: int) -> int:
        """Wipe."""
        return a

    @tool(destructive=False, idempotent=True, open_world=False)
    def append_row(a: int) -> int:
        """Append."""
        return a

    plain, declared = as_provider(wipe), as_provider(append_row)
    assert (plain.destructive, plain.idempotent, plain.open_world) == (True, False, True)
    assert (declared.destructive, declared.idempotent, declared.open_world) == (False, True, False)


def test_read_only_tools_are_concurrency_safe_by_default() -> None:
    assert as_provider(lookup).concurrency_safe is True


# -- class tools ----------------------------------------------------------------------


def test_class_tool_options_and_metadata() -> None:
    provider = as_provider(PlaceOrder)
    assert isinstance(provider, ClassToolProvider)
    assert provider.name == "place_order"
    assert provider.description == "Place an order."
    assert provider.display_name == "Place an order"
    assert provider.action_verb == "Ordering"
    assert provider.weight == 3.0
    assert provider.metadata == {"tier": "gold"}
    assert (provider.timeout, provider.output_cap) == (2.5, 512)
    assert provider.read_only is False
    assert provider.concurrency_safe is False  # a callable decides per input
    assert provider.is_concurrency_safe(Order(quantity=3)) is True
    assert provider.is_concurrency_safe(Order(quantity=30)) is False
    assert provider.resource_key(Order(quantity=3)) == 1
    assert provider.output_schema is not None
    assert provider.output_schema["properties"] == {"total": {"title": "Total", "type": "integer"}}
    assert provider.dump_output(Receipt(total=4)) == {"total": 4}


def test_class_tool_input_schema_is_the_model() -> None:
    schema = as_provider(PlaceOrder).input_schema
    assert set(schema["properties"]) == {"quantity", "note"}
    assert schema["required"] == ["quantity"]


def test_class_tool_built_per_parent() -> None:
    provider = as_provider(ContextOrder)
    first, second = object(), object()
    bound_first, bound_second = provider.create(first), provider.create(second)
    value = provider.parse_input({"quantity": 1})
    context = ToolContext(parent=first)
    parent, received = bound_first.invoke(value, context)
    assert parent is first
    assert received is context
    assert bound_second.invoke(value)[0] is second


def test_sync_class_tool_runs() -> None:
    provider = as_provider(PlaceOrder)
    bound = provider.create()
    assert not bound.is_async
    assert not bound.takes_context
    assert bound.invoke(provider.parse_input('{"quantity": 2}')) == Receipt(total=4)


async def test_async_class_tool_runs() -> None:
    provider = as_provider(AsyncOrder)
    bound = provider.create()
    assert bound.is_async
    assert await bound.invoke(provider.parse_input({"quantity": 7})) == 7


def test_class_providers_are_equal_by_class() -> None:
    assert as_provider(PlaceOrder) == ClassToolProvider(PlaceOrder)
    assert hash(as_provider(PlaceOrder)) == hash(ClassToolProvider(PlaceOrder))
    assert as_provider(PlaceOrder) != as_provider(AsyncOrder)


def test_model_dependent_tool_takes_its_parents_grade() -> None:
    follower, fixed = as_provider(GradeFollower), as_provider(GradeFixed)
    assert follower.grade_for(Parent()) == "large"
    assert follower.grade_for(object()) is None
    assert fixed.grade_for(Parent()) == "small"


def test_class_without_run_is_refused() -> None:
    @tool
    class NoRun(Tool):
        """No run."""

    with pytest.raises(ToolDefinitionError, match="run"):
        as_provider(NoRun)


class NotAModel:
    pass


def test_class_whose_input_is_not_a_model_is_refused() -> None:
    @tool
    class BadInput(Tool):
        """Bad input."""

        def run(self, input: NotAModel) -> None: ...

    @tool
    class NoInput(Tool):
        """No input."""

        def run(self) -> None:  # type: ignore[override]
            ...

    for cls in (BadInput, NoInput):
        with pytest.raises(ToolDefinitionError, match="pydantic BaseModel"):
            as_provider(cls)


def test_as_provider_refuses_what_is_not_a_tool() -> None:
    class Undecorated(Tool):
        """Undecorated."""

        def run(self, input: Order) -> None: ...

    def plain(a: int) -> int:
        return a

    with pytest.raises(ToolDefinitionError, match="needs the @tool decorator"):
        as_provider(Undecorated)
    for obj in (plain, 42, "name", None):
        with pytest.raises(ToolDefinitionError, match="expected an @tool"):
            as_provider(obj)


def test_as_provider_passes_providers_through() -> None:
    fake = FakeTool("fake")
    assert as_provider(fake) is fake


def test_a_failing_refiner_refuses_the_tool_and_publishes_nothing() -> None:
    def broken(schema: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    @tool(refine_schema=broken)
    def refined(a: int) -> int:
        """Refined."""
        return a

    with pytest.raises(InvalidToolSchemaError) as info:
        as_provider(refined)
    assert info.value.tool_name == "refined"


def test_a_refiner_that_returns_an_invalid_schema_refuses_the_tool() -> None:
    @tool(refine_schema=lambda schema: {"type": "object", "properties": []})
    def invalid(a: int) -> int:
        """Invalid."""
        return a

    @tool(refine_schema=lambda schema: {"type": "array"})
    def not_object(a: int) -> int:
        """Not an object."""
        return a

    for fn in (invalid, not_object):
        with pytest.raises(InvalidToolSchemaError):
            as_provider(fn)


def test_a_narrowing_refiner_is_published_and_validated() -> None:
    def only_small_even(schema: dict[str, Any]) -> dict[str, Any]:
        schema["properties"]["quantity"].update(maximum=100, multipleOf=2)
        return schema

    @tool(refine_schema=only_small_even)
    class Narrow(Tool):
        """Narrowed."""

        def run(self, input: Order) -> int:
            return input.quantity

    provider = as_provider(Narrow)
    assert provider.input_schema["properties"]["quantity"]["maximum"] == 100
    assert provider.parse_input({"quantity": 4}).quantity == 4
    for bad, expected in [(102, "number <= 100"), (3, "a multiple of 2")]:
        with pytest.raises(InvalidInputError) as info:
            provider.parse_input({"quantity": bad})
        assert [str(p) for p in info.value.problems] == [f"at quantity: expected {expected}"]


# -- parse_input never echoes a value --------------------------------------------------

VALID: dict[str, Any] = {
    "name": "Ada",
    "age": 36,
    "address": {"city": "London", "zip_code": 1},
    "tags": [1, 2],
    "scores": {"math": 1},
}


def _refusal(provider: ToolProvider, raw: Any) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as info:
        provider.parse_input(raw)
    error = info.value
    assert SECRET not in str(error)
    assert SECRET not in repr(error)
    for problem in error.problems:
        assert SECRET not in problem.path
        assert SECRET not in problem.expected
    return error


@pytest.mark.parametrize(
    ("change", "path", "expected", "quoted"),
    [
        ({"age": SECRET}, "age", "integer", True),
        ({"age": None}, "age", "integer", False),
        ({"name": {"k": SECRET}}, "name", "string", True),
        ({"address": {"city": "x", "zip_code": SECRET}}, "address.zip_code", "integer", True),
        ({"tags": [1, SECRET]}, "tags[1]", "integer", True),
        ({"scores": {SECRET: SECRET}}, "scores.*", "integer", True),
        ({"scores": {SECRET: 1, "b": SECRET}}, "scores.*", "integer", True),
        ({"nickname": [SECRET]}, "nickname", "null or string", True),
    ],
)
def test_wrong_values_name_field_and_type_never_the_value(
    change: dict[str, Any], path: str, expected: str, quoted: bool
) -> None:
    provider = as_provider(lookup)
    for raw in ({**VALID, **change}, json.dumps({**VALID, **change})):
        error = _refusal(provider, raw)
        assert [(p.path, p.expected) for p in error.problems] == [(path, expected)]
        assert f"at {path}: expected {expected}" in str(error)
        assert error.tool_name == "lookup"
        if quoted:
            assert SECRET in str(error.__cause__)


def test_missing_fields_are_named_from_the_schema() -> None:
    provider = as_provider(lookup)
    raw = {k: v for k, v in VALID.items() if k not in ("age", "tags")}
    error = _refusal(provider, raw)
    assert [(p.path, p.expected) for p in error.problems] == [
        ("age", "required field of type integer"),
        ("tags", "required field of type array"),
    ]


def test_missing_nested_field() -> None:
    error = _refusal(as_provider(lookup), {**VALID, "address": {"city": SECRET}})
    assert [(p.path, p.expected) for p in error.problems] == [
        ("address.zip_code", "required field of type integer")
    ]


def test_extra_field_with_a_secret_key_and_value() -> None:
    error = _refusal(as_provider(lookup), {**VALID, SECRET: SECRET})
    assert [p.path for p in error.problems] == ["(input)"]
    assert error.problems[0].expected.startswith("no other fields (allowed: address, age,")
    assert SECRET in str(error.__cause__)


def test_extra_nested_field_in_a_forbidding_model() -> None:
    class Strict(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        a: int

    fake = FakeTool(
        "strict",
        input_schema={
            "type": "object",
            "properties": {"inner": Strict.model_json_schema()},
            "required": ["inner"],
        },
    )
    error = _refusal(fake, {"inner": {"a": 1, SECRET: SECRET}})
    assert [(p.path, p.expected) for p in error.problems] == [
        ("inner", "no other fields (allowed: a)")
    ]


def test_several_problems_are_all_reported() -> None:
    error = _refusal(as_provider(lookup), {"name": 5, "age": SECRET, "tags": [SECRET]})
    paths = {p.path for p in error.problems}
    assert {"name", "age", "tags[0]", "address", "scores"} <= paths


def test_a_hand_written_schema_is_validated_with_jsonschema() -> None:
    fake = FakeTool(
        "hand",
        input_schema={
            "type": "object",
            "properties": {"pin": {"type": "string", "maxLength": 4}},
            "additionalProperties": False,
        },
    )
    assert fake.parse_input('{"pin": "1234"}') == {"pin": "1234"}
    error = _refusal(fake, {"pin": SECRET})
    assert [str(p) for p in error.problems] == ["at pin: expected text of at most 4 characters"]
    assert SECRET in str(error.__cause__)
    error = _refusal(fake, {SECRET: 1})
    assert [str(p) for p in error.problems] == [
        "at (input): expected no other fields (allowed: pin)"
    ]


def test_a_class_model_that_ignores_extras_accepts_them() -> None:
    value = as_provider(PlaceOrder).parse_input({"quantity": 1, "unknown": SECRET})
    assert value == Order(quantity=1)


# -- BoundTool and origins ------------------------------------------------------------


def test_bound_tool_invokes_with_a_context() -> None:
    seen: list[Any] = []
    bound = BoundTool(
        lambda value, ctx: seen.append((value, ctx)), is_async=False, takes_context=True
    )
    bound.invoke(1)
    context = ToolContext()
    bound.invoke(2, context)
    assert seen[0][0] == 1
    assert isinstance(seen[0][1], ToolContext)
    assert seen[1] == (2, context)


def test_origin_describe() -> None:
    assert Origin().describe() == "unknown module"
    assert Origin(pack="files").describe() == "files"
    assert Origin(module="pkg.mod", distribution="tp-files").describe() == "pkg.mod (tp-files ?)"
    assert (
        Origin(module="pkg.mod", distribution="tp-files", version="1.2").describe()
        == "pkg.mod (tp-files 1.2)"
    )


def test_describe_names_where_the_tool_is_defined() -> None:
    assert as_provider(lookup).describe() == f"FunctionToolProvider 'lookup' from {__name__}.lookup"
    assert (
        as_provider(PlaceOrder).describe()
        == f"ClassToolProvider 'place_order' from {__name__}.PlaceOrder"
    )
    provider = as_provider(PlaceOrder)
    provider.origin = Origin(module="shop.tools", distribution="tp-shop", version="2.0")
    assert provider.describe() == "ClassToolProvider 'place_order' from shop.tools (tp-shop 2.0)"


def test_repr() -> None:
    assert repr(as_provider(lookup)) == "<FunctionToolProvider 'lookup'>"


class WithCallable(pydantic.BaseModel):
    callback: Callable[[int], int]


def test_a_class_model_without_a_json_schema_is_refused_as_a_schema_error() -> None:
    @tool
    class Unschematic(Tool):
        """Takes a callable."""

        def run(self, input: WithCallable) -> int:
            return input.callback(1)

    with pytest.raises(InvalidToolSchemaError, match="no JSON schema") as info:
        as_provider(Unschematic)
    assert info.value.tool_name == "unschematic"


# -- differential: parse_input accepts exactly what the published schema accepts -------


class Inner(pydantic.BaseModel):
    n: int
    tag: str = "x"


@tool
def many(
    i: int,
    f: float,
    s: str,
    b: bool,
    li: list[int],
    d: dict[str, float],
    o: str | None = None,
    inner: Inner | None = None,
    lit: Literal["a", "b"] = "a",
    t: tuple[int, str] | None = None,
) -> int:
    """Take one of everything."""
    return 0


MANY = as_provider(many)
MANY_VALIDATOR = jsonschema.Draft202012Validator(MANY.input_schema)  # the reference
GOOD: dict[str, Any] = {"i": 1, "f": 1.5, "s": "x", "b": True, "li": [1], "d": {"a": 1.0}}
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(min_value=-(2.0**62), max_value=2.0**62)
    | st.text(max_size=3)
    | st.sampled_from(["a", "b", 1.0, -0.0, 2.0**53, 10**40])
)
values = st.recursive(
    scalars,
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(st.sampled_from(["n", "tag", "k"]) | st.text(max_size=2), c, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from([*GOOD, "o", "inner", "lit", "t", "zz"]), values, max_size=4)
)
def test_parse_input_accepts_exactly_what_the_published_schema_accepts(
    override: dict[str, Any],
) -> None:
    data = {**GOOD, **override}
    expected = MANY_VALIDATOR.is_valid(data)
    try:
        MANY.parse_input(data)
    except InvalidInputError:
        accepted = False
    else:
        accepted = True
    assert accepted == expected


@pytest.mark.parametrize("number", [2.0**63, 1e20, -1e300])
def test_integral_floats_beyond_int64_are_refused_for_integer_fields(number: float) -> None:
    # The schema's "integer" admits them, but they are not exact integers any more:
    # the model must send an integer (huge JSON integers themselves are fine).
    with pytest.raises(InvalidInputError) as info:
        MANY.parse_input({**GOOD, "i": number})
    assert [str(p) for p in info.value.problems] == ["at i: expected integer"]
    assert MANY.parse_input({**GOOD, "i": 10**40}).i == 10**40


def test_a_remembered_refusal_still_lets_each_input_decide() -> None:
    # Refusals are remembered per error type and location; whether one was about
    # representation only (JSON's 1.0 for an integer) is still asked of each input.
    provider = as_provider(many)
    for _ in range(2):
        with pytest.raises(InvalidInputError) as info:
            provider.parse_input({**GOOD, "i": "one", "li": [1, "two"]})
        assert [str(p) for p in info.value.problems] == [
            "at i: expected integer",
            "at li[1]: expected integer",
        ]
        with pytest.raises(InvalidInputError) as info:
            provider.parse_input({**GOOD, "i": 1.5})
        assert [str(p) for p in info.value.problems] == ["at i: expected integer"]
        assert provider.parse_input({**GOOD, "i": 2.0, "li": [1, 3.0]}).li == [1, 3]


CANARY = "CNRY-3f9a"
canary_text = st.sampled_from([CANARY, f"{CANARY}-long-{'x' * 40}", f"pre {CANARY}", "a", "b"])
canary_values = st.recursive(
    st.none() | st.booleans() | st.integers() | canary_text,
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(canary_text | st.sampled_from(["n", "tag"]), c, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    override=st.dictionaries(
        st.sampled_from([*GOOD, "o", "inner", "lit", "t"]) | canary_text, canary_values, max_size=4
    ),
    as_text=st.booleans(),
)
def test_no_refusal_ever_echoes_a_planted_value(override: dict[str, Any], as_text: bool) -> None:
    data = {**GOOD, **override}
    try:
        MANY.parse_input(json.dumps(data) if as_text else data)
    except InvalidInputError as error:
        assert CANARY not in str(error)  # noqa: PT017 - the property is about the error
        assert all(CANARY not in p.path + p.expected for p in error.problems)  # noqa: PT017


class Mode(enum.IntEnum):
    FAST = 1


@tool
def level() -> int:
    """The current level."""
    return Mode.FAST


@tool
def flag() -> bool:
    """Whether it is on."""
    return True


def test_a_scalar_return_dumps_as_its_annotation_says() -> None:
    # An exact int or bool skips the serializer; a subclass or another type still goes
    # through it and ships as its plain JSON value.
    assert as_provider(level).dump_output(Mode.FAST) == 1
    assert type(as_provider(level).dump_output(Mode.FAST)) is int
    assert as_provider(level).dump_output(7) == 7
    assert as_provider(flag).dump_output(True) is True


# -- the tool never holds the caller's objects, copied or not --------------------------


class _Point(pydantic.BaseModel):
    x: int
    tags: list[str] = []


def _held_fresh(p: _Point, names: list[str] | None = None) -> tuple[_Point, list[str] | None]:
    """Return what it was given (fields a model builds anew)."""
    return p, names


def _held_any(p: dict[str, Any], extra: Any = None) -> tuple[dict[str, Any], Any]:
    """Return what it was given (fields that take the input as it is)."""
    return p, extra


@pytest.mark.parametrize(
    ("fn", "sent"),
    [
        (_held_fresh, {"p": {"x": 1}, "names": ["a"]}),
        (_held_fresh, {"p": {"x": 1.0}}),  # 1.0 for an int: the JSON pass, on no copy
        (_held_fresh, {"p": {"x": 1.0, "tags": ["t"]}, "names": []}),
        (_held_any, {"p": {"x": 1}, "extra": [1]}),
        (_held_any, {"p": {"x": {"deep": [1]}}, "extra": {"k": [2]}}),
    ],
)
def test_a_tool_holds_none_of_the_callers_objects(fn: Any, sent: dict[str, Any]) -> None:
    before = json.dumps(sent)  # text: 1.0 turned into 1 in place would show
    provider = as_provider(tool(fn))
    first, second = provider.create().invoke(provider.parse_input(sent), ToolContext())
    for held in (first, second):
        if isinstance(held, pydantic.BaseModel):
            held.tags.append("changed")
            held = held.__dict__
        if isinstance(held, dict):
            for child in held.values():
                if isinstance(child, (dict, list)):
                    child.clear()
            held["added"] = True
        elif isinstance(held, list):
            held.append("changed")
    assert json.dumps(sent) == before
