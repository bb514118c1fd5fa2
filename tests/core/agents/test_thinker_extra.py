"""Per-turn tools: ``thinker.begin_turn(extra=[...])`` offers tools for one turn only.

They go through the palette's collision rules, the policy and the read-only sweep, are
callable in their turn and gone at the next, and cost what they change.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from toolpalette import (
    SurfaceDiff,
    Thinker,
    Tool,
    ToolCollisionError,
    ToolHub,
    ToolPolicy,
    ToolRegistry,
    ToolSelector,
    function_tool,
    hookimpl,
    tool,
)
from toolpalette.errors import ToolDefinitionError


@tool(read_only=True)
def look(query: str) -> str:
    """Look something up."""
    return f"found {query}"


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather, for this request only."""
    return f"sunny in {city}"


@tool
def book(room: str) -> str:
    """Book a room (changes things)."""
    return f"booked {room}"


@tool(read_only=True)
def later() -> str:
    """Deferred until asked for."""
    return "later"


class EchoInput(BaseModel):
    text: str


@tool(read_only=True)
class Echo(Tool):
    """Say it back."""

    def run(self, input: EchoInput) -> str:
        return input.text


def _shout(text: str) -> str:
    return text.upper()


SHOUT = function_tool(
    "shout",
    "Say it loudly.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    _shout,
    read_only=True,
)


class Worker(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(look).tool(later, deferred=True)


class Reader(Worker):
    read_only = True


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


def changes_of(thinker: Thinker) -> list[SurfaceDiff]:
    """Every change of the thinker's palette from now on."""
    diffs: list[SurfaceDiff] = []
    thinker.palette.on_surface_changed(diffs.append)
    return diffs


async def test_extra_tools_are_offered_and_callable_for_their_turn_only(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    turn = worker.begin_turn(extra=[weather, Echo, SHOUT])
    assert turn.tool_names == ("look", "request_tools", "weather", "echo", "shout")
    assert (await worker.call("weather", {"city": "Oslo"})).text == "sunny in Oslo"
    assert (await worker.call("echo", {"text": "hi"})).text == "hi"
    assert (await worker.call("shout", {"text": "hi"})).text == "HI"
    assert {s["function"]["name"] for s in turn.schemas("openai_chat")} >= {"weather", "shout"}
    assert turn.changes.added == ("echo", "look", "request_tools", "shout", "weather")
    following = worker.begin_turn()
    assert following.tool_names == ("look", "request_tools")
    assert following.changes == SurfaceDiff(following.version, removed=("echo", "shout", "weather"))
    gone = await worker.call("weather", {"city": "Oslo"})
    assert (gone.status, gone.code) == (404, "unknown_tool")


def test_the_same_extra_tools_again_change_nothing(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    diffs = changes_of(worker)
    first = worker.begin_turn(extra=[weather, SHOUT])
    assert [(d.added, d.removed) for d in diffs] == [(("weather",), ()), (("shout",), ())]
    diffs.clear()
    again = worker.begin_turn(extra=[SHOUT, weather])  # the same tools, in another order
    assert diffs == []  # nothing was touched: a look-up each
    assert (again.version, again.tool_names) == (first.version, first.tool_names)
    assert again.schemas_json("anthropic") == first.schemas_json("anthropic")
    assert again.changes == SurfaceDiff(again.version)
    dropped = worker.begin_turn(extra=[SHOUT])
    assert [(d.added, d.removed) for d in diffs] == [((), ("weather",))]
    assert dropped.changes.removed == ("weather",)


def test_an_unchanged_palette_without_extra_tools_touches_nothing(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    first = worker.begin_turn(extra=[weather])
    worker.begin_turn()
    diffs = changes_of(worker)
    turns = [worker.begin_turn() for _ in range(3)]
    assert diffs == []
    assert {t.version for t in turns} == {turns[0].version}
    assert turns[0].version != first.version


def test_a_grant_beside_extra_tools_changes_the_grant_only(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn(extra=[weather])
    diffs = changes_of(worker)
    worker.admit("tool", ["later"])
    turn = worker.begin_turn(extra=[weather])
    assert sorted((d.added, d.removed, d.changed) for d in diffs) == [
        ((), ("request_tools",), ()),
        (("later",), (), ()),
    ]
    assert set(turn.tool_names) == {"look", "weather", "later"}


def test_a_changed_extra_tool_under_the_same_name_replaces_the_last(hub: ToolHub) -> None:
    @tool(name="weather", read_only=True)
    def forecast(city: str, days: int = 3) -> str:
        """The forecast, for this request only."""
        return f"{days} sunny days in {city}"

    worker = hub.bind(Worker)
    worker.begin_turn(extra=[weather])
    turn = worker.begin_turn(extra=[forecast])
    assert turn.changes == SurfaceDiff(turn.version, changed=("weather",))
    schema = next(s for s in turn.schemas("anthropic") if s["name"] == "weather")
    assert "days" in schema["input_schema"]["properties"]


def test_an_extra_tool_that_clashes_with_an_offered_one_is_a_collision(hub: ToolHub) -> None:
    @tool(name="look", read_only=True)
    def other_look(query: str) -> str:
        """Another tool that calls itself look."""
        return query

    worker = hub.bind(Worker)
    before = worker.begin_turn(extra=[weather])
    diffs = changes_of(worker)
    with pytest.raises(ToolCollisionError) as caught:
        worker.begin_turn(extra=[SHOUT, other_look])
    assert caught.value.tool_name == "look"
    assert "'look'" in caught.value.first
    assert "other_look" in caught.value.second
    # The turn was not begun, and the palette keeps what the last turn offered.
    assert diffs == []
    assert worker.turn_number == before.number
    assert worker.begin_turn(extra=[weather]).tool_names == before.tool_names


def test_two_extra_tools_under_one_name_collide(hub: ToolHub) -> None:
    @tool(name="weather", read_only=True)
    def other_weather(city: str) -> str:
        """Another weather."""
        return city

    worker = hub.bind(Worker)
    with pytest.raises(ToolCollisionError) as caught:
        worker.begin_turn(extra=[weather, other_weather])
    assert caught.value.tool_name == "weather"
    assert worker.turn_number == 0


def test_a_meta_tools_name_is_taken(hub: ToolHub) -> None:
    @tool(name="request_tools", read_only=True)
    def impostor(names: list[str]) -> str:
        """Not the real one."""
        return ""

    worker = hub.bind(Worker)
    with pytest.raises(ToolCollisionError):
        worker.begin_turn(extra=[impostor])


async def test_an_extra_tool_equal_to_an_offered_one_is_that_tool(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    first = worker.begin_turn()
    turn = worker.begin_turn(extra=[look])  # the declared tool itself
    assert (turn.tool_names, turn.version) == (first.tool_names, first.version)
    after = worker.begin_turn()  # no longer given: still declared, still offered
    assert "look" in after.tool_names
    assert (await worker.call("look", {"query": "x"})).text == "found x"


async def test_a_read_only_thinker_is_never_offered_a_mutating_extra_tool(hub: ToolHub) -> None:
    reader = hub.bind(Reader)
    turn = reader.begin_turn(extra=[book, weather])
    assert "book" not in turn.tool_names
    assert "weather" in turn.tool_names
    refused = await reader.call("book", {"room": "12"})
    assert (refused.status, refused.code) == (404, "unknown_tool")  # never in its palette
    writer = hub.bind(Worker)
    assert "book" in writer.begin_turn(extra=[book]).tool_names
    assert (await writer.call("book", {"room": "12"})).text == "booked 12"


async def test_a_mutating_tool_a_hook_registers_as_an_extra_one_is_still_refused(
    hub: ToolHub,
) -> None:
    class Widens:
        @hookimpl
        def toolpalette_reconcile(self, registry: ToolRegistry) -> None:
            if registry.has_tool("weather"):  # it sees the turn's extra tools
                registry.register(book)

    hub.add_plugin(Widens(), name="widens")
    reader = hub.bind(Reader)
    turn = reader.begin_turn(extra=[weather])
    assert "book" not in turn.tool_names  # swept after the hooks
    reader.palette.register(book)  # and registered again during the turn
    refused = await reader.call("book", {"room": "12"})
    assert (refused.status, refused.code) == (403, "not_offered")


def test_the_policy_decides_extra_tools_too(hub: ToolHub) -> None:
    worker = hub.bind(Worker, policy=ToolPolicy(deny=["weather"]))
    turn = worker.begin_turn(extra=[weather, SHOUT])
    assert "weather" not in turn.tool_names
    assert "shout" in turn.tool_names


def test_what_is_not_a_tool_is_refused_before_anything_changes(hub: ToolHub) -> None:
    def plain(text: str) -> str:
        return text

    worker = hub.bind(Worker)
    before = worker.begin_turn(extra=[weather])
    with pytest.raises(ToolDefinitionError):
        worker.begin_turn(extra=[SHOUT, plain])
    assert worker.turn_number == before.number
    assert worker.palette.tool_names() == sorted(before.tool_names)


def test_extra_tools_follow_the_palette_and_grants_are_not_theirs(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    turn = worker.begin_turn(extra=[weather])
    assert turn.tool_names[-1] == "weather"
    assert [r for r in hub.grants() if r.name == "weather"] == []  # offered, not granted
    request = next(s for s in turn.schemas("anthropic") if s["name"] == "request_tools")
    assert "weather" not in str(request["input_schema"])


def test_an_extra_tools_guidance_rides_the_preamble_of_its_turn_only(hub: ToolHub) -> None:
    @tool(read_only=True, guidance="Convert before you compare prices.")
    def convert(amount: float) -> float:
        """Convert euros to dollars."""
        return amount * 1.1

    worker = hub.bind(Worker)
    turn = worker.begin_turn(extra=[convert])
    assert turn.guidance == (("convert", "Convert before you compare prices."),)
    assert turn.preamble.endswith(
        '<tool name="convert">\nConvert before you compare prices.\n</tool>\n'
    )
    following = worker.begin_turn()
    assert following.guidance == ()
    assert following.preamble == ""
