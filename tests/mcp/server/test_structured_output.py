"""Structured output for every return type, as the SDK's own client receives it.

A tool whose JSON is not an object (a list of models, a number, a date, an optional
model) publishes the schema of ``{"result": VALUE}``, marked ``x-toolpalette-wrapped``,
and its results carry that object as ``structuredContent``; the text stays the bare
value. Checked in both protocol eras (``mode="auto"``, the SDK's default, is the
2026-07-28 era; ``mode="legacy"`` the 2025-11-25 handshake), and through toolpalette's
own MCP client, which unwraps it.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pydantic
import pytest
import toolpalette.mcp
from jsonschema import Draft202012Validator
from mcp import Client
from toolpalette import Thinker, ToolHub, ToolSelector, tool

ERAS = ["auto", "legacy"]


class Event(pydantic.BaseModel):
    title: str
    day: datetime.date


@tool(read_only=True)
def events() -> list[Event]:
    """List the upcoming events."""
    return [Event(title="launch", day=datetime.date(2026, 12, 1))]


@tool(read_only=True)
def count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


@tool(read_only=True)
def next_day() -> datetime.date:
    """The day after the launch."""
    return datetime.date(2026, 12, 2)


@tool(read_only=True)
def maybe(found: bool) -> Event | None:
    """An event, or nothing."""
    return Event(title="found", day=datetime.date(2026, 1, 1)) if found else None


@tool(read_only=True)
def tally() -> dict[str, int]:
    """Word counts: an object, published as it is."""
    return {"a": 2, "b": 1}


@tool(read_only=True)
def shout(text: str) -> str:
    """Text is text: no schema."""
    return text.upper()


class Typed(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector()
        for each in (events, count, next_day, maybe, tally, shout):
            selector.tool(each)
        return selector


CALLS: list[tuple[str, dict[str, Any], Any]] = [
    ("events", {}, [{"title": "launch", "day": "2026-12-01"}]),
    ("count", {"text": "a b c"}, 3),
    ("next_day", {}, "2026-12-02"),
    ("maybe", {"found": True}, {"title": "found", "day": "2026-01-01"}),
    ("maybe", {"found": False}, None),
]
"""Calls of the wrapped tools, and the bare value each returns as JSON."""


def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


@pytest.mark.parametrize("mode", ERAS)
async def test_every_declared_type_arrives_as_structured_content_valid_for_its_schema(mode: str):
    async with Client(toolpalette.mcp.server(hub(), Typed), mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        answers = [(await client.call_tool(name, args), value) for name, args, value in CALLS]
        counted = await client.call_tool("tally", {})
        shouted = await client.call_tool("shout", {"text": "hi"})
    for name in ("events", "count", "next_day", "maybe"):
        schema = tools[name].output_schema
        assert schema is not None
        assert schema["x-toolpalette-wrapped"] is True
        assert (schema["type"], schema["required"]) == ("object", ["result"])
        Draft202012Validator.check_schema(schema)
    for (name, _, _), (answer, value) in zip(CALLS, answers, strict=True):
        assert not answer.is_error
        assert answer.structured_content == {"result": value}
        schema = tools[name].output_schema
        assert schema is not None
        assert Draft202012Validator(schema).is_valid(answer.structured_content)
        # The text is the bare value, as a model reads it in a host.
        (block,) = answer.content
        text = block.text  # type: ignore[union-attr]
        assert text == value if isinstance(value, str) else json.loads(text) == value
    tally_schema = tools["tally"].output_schema
    assert tally_schema is not None
    assert "x-toolpalette-wrapped" not in tally_schema
    assert counted.structured_content == {"a": 2, "b": 1}
    assert tools["shout"].output_schema is None
    assert shouted.structured_content is None


class Remote(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().mcp_server("typed")


async def test_toolpalettes_own_client_unwraps_what_a_toolpalette_server_wraps():
    server = toolpalette.mcp.server(hub(), Typed)
    with ToolHub(autoload=False, config={}, mcp_servers={"typed": server}) as remote_hub:
        remote = remote_hub.bind(Remote)
        remote.begin_turn()
        local = hub().bind(Typed)
        local.begin_turn()
        for name, args, value in CALLS:
            through_mcp = await remote.call(name, args)
            in_process = await local.call(name, args)
            assert through_mcp.structured == in_process.structured == {"result": value}
            assert through_mcp.text == in_process.text  # the bare value, both ways
        schemas = [t.palette.get_provider("events").output_schema for t in (remote, local)]
        assert schemas[0] == schemas[1]
