"""``function_tool``: a one-line tool from a function and a hand-written schema."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import toolpalette
from toolpalette import (
    InvalidInputError,
    InvalidToolSchemaError,
    ToolContext,
    ToolDefinitionError,
    ToolHub,
    function_tool,
)
from toolpalette.testing import arun_tool, check_tool, make_registry, plugin_of, run_tool

SECRET = "sk-SECRET-0c4f2e19"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city."},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def forecast(city: str, days: int = 1) -> str:
    return f"{city}: sunny for {days} day(s)"


WEATHER = function_tool("weather", "Forecast the weather.", SCHEMA, forecast, read_only=True)


def test_the_function_receives_the_validated_input_as_keyword_arguments() -> None:
    assert run_tool(WEATHER, {"city": "Oslo", "days": 2}) == "Oslo: sunny for 2 day(s)"
    assert run_tool(WEATHER, '{"city": "Rome"}') == "Rome: sunny for 1 day(s)"


async def test_it_runs_through_the_pipeline_like_any_tool() -> None:
    registry = make_registry(WEATHER)
    ok = await toolpalette.execute(registry, "weather", {"city": "Oslo"})
    assert (ok.is_error, ok.text) == (False, "Oslo: sunny for 1 day(s)")
    bad = await toolpalette.execute(registry, "weather", {"city": "Oslo", "days": SECRET})
    assert (bad.status, bad.code) == (400, "invalid_input")
    assert "days" in bad.text
    assert SECRET not in bad.text


def test_input_is_checked_by_the_hand_written_schema_and_never_echoed() -> None:
    with pytest.raises(InvalidInputError) as caught:
        run_tool(WEATHER, {"city": "Oslo", "days": 9})
    assert "at days" in str(caught.value)
    with pytest.raises(InvalidInputError) as caught:
        run_tool(WEATHER, {"city": "Oslo", SECRET: 1})
    assert SECRET not in str(caught.value)


async def test_an_async_function_is_awaited_and_a_context_parameter_gets_the_context() -> None:
    async def lookup(key: str, ctx: ToolContext) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"key": key, "call": ctx.call_id}

    schema = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    provider = function_tool("lookup", "Look a key up.", schema, lookup)
    assert "ctx" not in provider.input_schema["properties"]
    result = await arun_tool(provider, {"key": "k"}, context=ToolContext(call_id="c-1"))
    assert result == {"key": "k", "call": "c-1"}


async def test_an_object_with_an_async_call_is_awaited() -> None:
    class Echo:
        async def __call__(self, text: str) -> str:
            return text

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    provider = function_tool("echo", "Echo a text.", schema, Echo())
    assert await arun_tool(provider, {"text": "hi"}) == "hi"


def test_properties_the_function_does_not_take_are_left_out_unless_it_takes_kwargs() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}

    def only_a(a: int = 0) -> int:
        return a

    def every(**values: int) -> dict[str, int]:
        return values

    assert run_tool(function_tool("only_a", "A.", schema, only_a), {"a": 1, "b": 2}) == 1
    assert run_tool(function_tool("every", "All.", schema, every), {"a": 1, "b": 2}) == {
        "a": 1,
        "b": 2,
    }


def test_every_option_reaches_the_record() -> None:
    output = {"type": "object", "properties": {"hits": {"type": "integer"}}}
    provider = function_tool(
        "search",
        "  Search the index.  ",
        SCHEMA,
        forecast,
        output_schema=output,
        display_name="Index search",
        action_verb="Searching",
        weight=2.0,
        destructive=False,
        idempotent=True,
        open_world=False,
        timeout=3,
        output_cap=1000,
        metadata={"team": "search"},
        guidance="Search before you answer.",
    )
    info = provider.info
    assert (info.name, info.description, info.output_schema) == (
        "search",
        "Search the index.",
        output,
    )
    assert (info.read_only, info.destructive, info.idempotent, info.open_world) == (
        False,
        False,
        True,
        False,
    )
    assert (info.display_name, info.action_verb, info.weight) == ("Index search", "Searching", 2.0)
    assert (info.timeout, info.output_cap, dict(info.metadata)) == (3, 1000, {"team": "search"})
    assert (info.concurrency_safe, info.guidance) == (False, "Search before you answer.")
    # The properties a pipeline reads are the record's.
    assert (provider.timeout, provider.output_cap, provider.read_only) == (3, 1000, False)
    check_tool(provider)  # a valid name, description, schemas, and every format exports


def test_the_defaults_are_those_of_tool() -> None:
    info = WEATHER.info
    assert (info.destructive, info.idempotent, info.open_world) == (True, False, True)
    assert (info.display_name, info.action_verb, info.weight) == ("Weather", "Running", 1.0)
    assert info.concurrency_safe is True  # read-only: calls may overlap
    assert (info.timeout, info.output_cap, info.guidance, info.output_schema) == (
        None,
        None,
        None,
        None,
    )


def test_concurrency_and_resource_key_callables_decide_per_input() -> None:
    provider = function_tool(
        "write",
        "Write a file.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        lambda path: path,
        concurrency_safe=lambda value: value["path"].startswith("/tmp/"),
        resource_key=lambda value: value["path"],
    )
    assert provider.is_concurrency_safe({"path": "/tmp/a"})
    assert not provider.is_concurrency_safe({"path": "/srv/a"})
    assert provider.resource_key({"path": "/srv/a"}) == "/srv/a"
    assert not provider.concurrency_safe


def test_a_model_dependent_tool_takes_its_parents_grade() -> None:
    class Parent:
        grade = "large"

    plain = WEATHER
    dependent = function_tool("graded", "G.", SCHEMA, forecast, model_dependent=True)
    assert plain.grade_for(Parent()) is None
    assert dependent.grade_for(Parent()) == "large"


def test_equal_for_one_function_and_one_record() -> None:
    again = function_tool("weather", "Forecast the weather.", SCHEMA, forecast, read_only=True)
    assert again == WEATHER
    assert hash(again) == hash(WEATHER)
    assert again != function_tool("weather", "Forecast the weather.", SCHEMA, forecast)
    assert again != function_tool("weather", "Forecast.", SCHEMA, lambda city, days=1: city)


@pytest.mark.parametrize(
    ("arguments", "options", "error", "reason"),
    [
        (("bad name", "D.", SCHEMA, forecast), {}, ToolDefinitionError, "names are"),
        (("weather", "  ", SCHEMA, forecast), {}, ToolDefinitionError, "description"),
        (("weather", "D.", SCHEMA, "forecast"), {}, ToolDefinitionError, "fn must"),
        (("weather", "D.", SCHEMA, forecast), {"timeout": 0}, ToolDefinitionError, "timeout"),
        (("weather", "D.", SCHEMA, forecast), {"output_cap": -1}, ToolDefinitionError, "cap"),
        (
            ("weather", "D.", SCHEMA, forecast),
            {"guidance": "x" * 1025},
            ToolDefinitionError,
            "guidance must be at most 1024",
        ),
        (
            ("weather", "D.", {"type": "array"}, forecast),
            {},
            InvalidToolSchemaError,
            "type 'object'",
        ),
        (
            ("weather", "D.", {"type": "object", "properties": {"a": {"type": 5}}}, forecast),
            {},
            InvalidToolSchemaError,
            "input schema",
        ),
        (
            ("weather", "D.", {"type": "object", "$ref": "https://example.com/s.json"}, forecast),
            {},
            InvalidToolSchemaError,
            "input schema",
        ),
        (
            ("weather", "D.", SCHEMA, forecast),
            {"output_schema": {"type": 5}},
            InvalidToolSchemaError,
            "output schema",
        ),
    ],
)
def test_a_definition_no_tool_may_have_is_refused(
    arguments: tuple[Any, ...], options: dict[str, Any], error: type[Exception], reason: str
) -> None:
    with pytest.raises(error, match=reason):
        function_tool(*arguments, **options)


def test_a_function_that_cannot_take_what_the_schema_accepts_is_refused() -> None:
    def needs_days(city: str, days: int) -> str:
        return city

    def no_city(days: int = 1) -> str:
        return ""

    def context_named_like_a_property(city: ToolContext) -> str:
        return ""

    def positional(city: str, /) -> str:
        return city

    for fn, reason in [
        (needs_days, "'days' has no default and the schema does not require it"),
        (no_city, "the schema requires 'city' and fn takes no such parameter"),
        (context_named_like_a_property, "property 'city', fn's context parameter"),
        (positional, "'city' is positional-only"),
    ]:
        with pytest.raises(ToolDefinitionError, match=reason):
            function_tool("weather", "D.", SCHEMA, fn)


def test_a_pack_can_return_it() -> None:
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(plugin_of(WEATHER), name="forecasts")
    provider = hub.catalog().get_provider("weather")
    assert provider.origin is not None
    assert provider.origin.pack == "forecasts"
    assert provider.info == WEATHER.info
    check_tool(provider)
