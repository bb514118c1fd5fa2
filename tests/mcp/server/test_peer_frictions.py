"""What MCP peers stumbled on: a search's ``limit``, and names behind a renaming gateway.

Over MCP ``search_tools.limit`` is an optional integer with its default (the provider
formats keep the nullable, required form their strict modes want), and a search's
answer says that ``call_tool`` reaches each match by the name it gives.
"""

from __future__ import annotations

import json

import palette_fixture as fx
import pytest
import toolpalette.mcp
from mcp import Client
from toolpalette import ToolHub

ERAS = ["legacy", "auto"]


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub()


@pytest.mark.parametrize("mode", ERAS)
async def test_search_limit_is_an_optional_integer_with_a_default(hub: ToolHub, mode: str):
    async with Client(toolpalette.mcp.server(hub, fx.Searching), mode=mode) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        with_limit = await client.call_tool(
            "search_tools", {"query": "look up a secret", "limit": 1}
        )
        without = await client.call_tool("search_tools", {"query": "wipe a table"})
    schema = listed["search_tools"].input_schema
    assert schema["required"] == ["query"]
    assert schema["properties"]["limit"] == {
        "type": "integer",
        "description": "How many tools to return, from 1 to 20.",
        "minimum": 1,
        "maximum": 20,
        "default": 5,
    }
    assert not without.is_error
    assert not with_limit.is_error
    assert len(json.loads(with_limit.content[0].text)["tools"]) == 1  # type: ignore[union-attr]
    # The strict provider exports keep the form their strict modes need.
    strict = toolpalette.SearchToolsProvider().input_schema
    assert strict["required"] == ["query", "limit"]
    assert strict["properties"]["limit"]["type"] == ["integer", "null"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_search_says_call_tool_reaches_its_matches(hub: ToolHub, mode: str):
    async with Client(toolpalette.mcp.server(hub, fx.Searching), mode=mode) as client:
        found = await client.call_tool("search_tools", {"query": "look up a secret"})
        answer = found.structured_content or {}
        name = answer["tools"][0]["name"]
        called = await client.call_tool("call_tool", {"name": name, "arguments": {"key": "k"}})
    assert "call_tool" in answer["note"]
    assert json.loads(found.content[0].text) == answer  # type: ignore[union-attr]
    assert not called.is_error
