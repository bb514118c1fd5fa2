"""A strict thinker: normalized schemas out, defaults re-applied on the way in."""

from __future__ import annotations

import json
from typing import Any, Literal

from toolpalette import Thinker, ToolHub, ToolSelector, tool


@tool(read_only=True)
def search(
    text: str, limit: int = 10, exact: bool = False, note: str | None = "n"
) -> dict[str, Any]:
    """Search.

    Args:
        text: What to look for.
        limit: Most results.
        exact: Match exactly.
        note: A note (null is a value here).
    """
    return {"text": text, "limit": limit, "exact": exact, "note": note}


@tool(read_only=True)
def paint(color: Literal["red", "blue"], coats: int) -> str:
    """Paint the wall.

    Args:
        color: The paint's color.
        coats: How many coats.
    """
    return f"{coats} x {color}"


class Strict(Thinker):
    strict = True

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(search).tool(paint)


async def test_a_strict_thinker_sends_normalized_schemas_and_reapplies_defaults() -> None:
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Strict)
    turn = thinker.begin_turn()
    assert turn.strict
    assert turn.strict_report("openai_chat") == {}
    [search_entry, paint_entry] = turn.schemas("openai_chat")
    assert search_entry["function"]["strict"] is True
    assert paint_entry["function"]["parameters"]["properties"]["color"]["enum"] == ["red", "blue"]
    arguments = json.dumps({"text": "a", "limit": None, "exact": None, "note": None})
    result = await thinker.call("search", arguments, call_id="call_1")
    assert json.loads(result.text) == {"text": "a", "limit": 10, "exact": False, "note": None}
    [again] = await thinker.call_many([("search", arguments, "call_2")])
    assert again == result


async def test_a_thinker_that_is_not_strict_refuses_a_null_for_an_optional_field() -> None:
    class Loose(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool(search)

    thinker = ToolHub(autoload=False, config={}).bind(Loose)
    assert not thinker.begin_turn().strict
    result = await thinker.call("search", {"text": "a", "limit": None})
    assert (result.status, result.code) == (400, "invalid_input")
