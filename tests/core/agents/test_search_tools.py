"""search_tools and search_skills: the meta-tools of large catalogs, and the modes choosing them.

A thinker's ``tool_search`` mode picks ``request_tools`` (an enum of the catalog) or
``search_tools`` (a definition of constant size); a search ranks the thinker's own
catalog, admits each match (hooks, policy, the record), and its grants can be called
at once and are offered from the next turn. The index is built once per thinker class
and catalog, and shared.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from toolpalette import (
    ENUM_LIMIT,
    SKILL_ENUM_LIMIT,
    Approval,
    Decision,
    LexicalRanker,
    SearchSkillsProvider,
    SearchToolsProvider,
    Skill,
    SkillSelector,
    Thinker,
    ToolDocument,
    ToolHub,
    ToolIndex,
    ToolPolicy,
    ToolSelector,
    hookimpl,
)
from toolpalette.testing import FakeTool

WORDS = ["invoice", "calendar", "weather", "ticket", "payroll", "playlist", "parcel", "recipe"]


def catalog(size: int, *, read_only: bool = True) -> list[FakeTool]:
    """``size`` deferred tools, each about one of a few subjects."""
    return [
        FakeTool(
            f"tool_{i:05d}",
            description=f"Handle the {WORDS[i % len(WORDS)]} number {i}.",
            input_schema={
                "type": "object",
                "properties": {"id": {"type": "string", "description": "Which one."}},
                "required": ["id"],
                "additionalProperties": False,
            },
            read_only=read_only,
            result={"done": i},
        )
        for i in range(size)
    ]


SEND = FakeTool(
    "send_invoice",
    description="Send an invoice to a customer by e-mail.",
    input_schema={"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]},
    result="sent",
)
WEATHER = FakeTool(
    "weather_forecast",
    description="Tomorrow's weather forecast for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    read_only=True,
    result="sunny",
)


def thinker_class(
    tools: Sequence[FakeTool], mode: str = "auto", *, read_only: bool = False, ranker: Any = None
) -> type[Thinker]:
    class Searcher(Thinker):
        tool_search = mode  # type: ignore[assignment]
        tool_ranker = ranker

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector()
            for provider in tools:
                selector.provider(provider, deferred=True)
            return selector

    Searcher.read_only = read_only  # type: ignore[misc]
    return Searcher


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


def meta_names(turn: Any) -> list[str]:
    meta = {"request_tools", "search_tools", "request_skill", "search_skills"}
    return [name for name in turn.tool_names if name in meta]


# -- choosing the meta-tool ------------------------------------------------------------------


def test_auto_keeps_the_enum_up_to_the_limit_and_searches_above(hub: ToolHub) -> None:
    small = hub.bind(thinker_class(catalog(ENUM_LIMIT))).begin_turn()
    large = hub.bind(thinker_class(catalog(ENUM_LIMIT + 1))).begin_turn()
    assert meta_names(small) == ["request_tools"]
    assert meta_names(large) == ["search_tools"]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("enum", "request_tools"), ("search", "search_tools"), ("native", "search_tools")],
)
def test_each_mode_offers_its_meta_tool_whatever_the_size(
    hub: ToolHub, mode: str, expected: str
) -> None:
    for size in (1, ENUM_LIMIT + 5):
        turn = hub.bind(thinker_class(catalog(size), mode)).begin_turn()
        assert meta_names(turn) == [expected]


def test_an_unknown_mode_is_refused_at_bind_time(hub: ToolHub) -> None:
    with pytest.raises(ValueError, match="tool_search must be one of auto, enum, search, native"):
        hub.bind(thinker_class(catalog(3), "magic"))


def test_the_definition_is_the_same_whatever_the_catalog(hub: ToolHub) -> None:
    small = hub.bind(thinker_class(catalog(20), "search")).begin_turn()
    large = hub.bind(thinker_class(catalog(2_000), "search")).begin_turn()
    for fmt in ("openai_chat", "openai_responses", "anthropic", "mcp"):
        assert small.schemas_json(fmt) == large.schemas_json(fmt)  # type: ignore[arg-type]
    assert "tool_00019" not in small.schemas_json("openai_chat").decode()


@pytest.mark.parametrize("provider", [SearchToolsProvider(), SearchSkillsProvider()])
def test_both_searches_are_strict_ready_as_they_stand(hub: ToolHub, provider: Any) -> None:
    class Plain(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().provider(provider)

    turn = hub.bind(Plain).begin_turn()
    for fmt in ("openai_chat", "openai_responses", "anthropic"):
        assert turn.strict_report(fmt) == {}, fmt  # type: ignore[arg-type]
    assert provider.output_schema["type"] == "object"  # MCP clients get structuredContent


def test_skills_follow_their_own_limit(hub: ToolHub) -> None:
    skills = [
        Skill(f"skill-{i}", f"Do kind {i} of work well.", bundle="io.example.work", body="Go.")
        for i in range(SKILL_ENUM_LIMIT + 1)
    ]
    hub.skills().add_skills(skills[:SKILL_ENUM_LIMIT], pack="few", distribution=None)

    class Few(Thinker):
        @classmethod
        def declare_skills(cls) -> SkillSelector:
            return SkillSelector().prefix("io.example")

    assert meta_names(hub.bind(Few).begin_turn()) == ["request_skill"]
    more = ToolHub(autoload=False, config={})
    more.skills().add_skills(skills, pack="many", distribution=None)
    assert meta_names(more.bind(Few).begin_turn()) == ["search_skills"]


# -- what a search answers --------------------------------------------------------------------


async def test_a_search_finds_grants_and_the_match_is_callable_at_once(hub: ToolHub) -> None:
    thinker = hub.bind(thinker_class([*catalog(50), SEND, WEATHER]))
    turn = thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "weather forecast tomorrow", "limit": 1})
    assert result.status == 200
    assert result.structured == json.loads(result.text)
    [match] = result.structured["tools"]  # type: ignore[index]
    assert match == {
        "name": "weather_forecast",
        "description": "Tomorrow's weather forecast for a city.",
        "input_schema": WEATHER.input_schema,
    }
    assert "next turn" in result.structured["note"]  # type: ignore[index]
    assert "weather_forecast" not in turn.tool_names  # this turn's offer to the model is fixed
    ran = await thinker.call("weather_forecast", {"city": "Lyon"})
    assert (ran.status, ran.text) == (200, "sunny")
    assert thinker.begin_turn().tool_names[-1] == "weather_forecast"
    assert [(g.kind, g.name, g.decision) for g in hub.grants()] == [
        ("tool", "weather_forecast", "granted")
    ]


async def test_a_destructive_match_is_offered_not_granted_until_called(hub: ToolHub) -> None:
    # A mutating tool that does not say destructive=False may destroy: the search shows
    # it like a grant, but it never joins the palette; each call is decided when made.
    thinker = hub.bind(thinker_class([*catalog(50), SEND, WEATHER]))
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "send an invoice by e-mail", "limit": 1})
    [match] = result.structured["tools"]  # type: ignore[index]
    assert match == {
        "name": "send_invoice",
        "description": "Send an invoice to a customer by e-mail.",
        "input_schema": SEND.input_schema,
    }
    assert [(g.name, g.decision) for g in hub.grants()] == [("send_invoice", "offered")]
    for to in ("a@example.org", "b@example.org"):
        ran = await thinker.call("send_invoice", {"to": to})
        assert (ran.status, ran.text) == (200, "sent")
    assert "send_invoice" not in thinker.begin_turn().tool_names
    assert "send_invoice" in {p.name for p in thinker.deferred_tools()}
    assert [(g.name, g.decision) for g in hub.grants()] == [
        ("send_invoice", "offered"),
        ("send_invoice", "granted"),
        ("send_invoice", "granted"),
    ]
    assert [g.reason for g in hub.grants()][1:] == ["admitted for one call"] * 2


async def test_matches_come_in_rank_order_up_to_the_limit(hub: ToolHub) -> None:
    thinker = hub.bind(thinker_class(catalog(80)))
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "weather", "limit": 3})
    names = [t["name"] for t in result.structured["tools"]]  # type: ignore[index]
    assert names == ["tool_00002", "tool_00010", "tool_00018"]  # ties in catalog order
    default = await thinker.call("search_tools", {"query": "payroll"})  # limit left out
    assert len(default.structured["tools"]) == 5  # type: ignore[index]
    again = await thinker.call("search_tools", {"query": "weather", "limit": None})
    names = [t["name"] for t in again.structured["tools"]]  # type: ignore[index]
    assert "tool_00002" not in names  # granted: no longer in the catalog
    assert len(names) == 5


@pytest.mark.parametrize("limit", [0, 21, -1, 2.5, "5"])
async def test_a_limit_out_of_range_is_refused(hub: ToolHub, limit: object) -> None:
    thinker = hub.bind(thinker_class(catalog(30)))
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "weather", "limit": limit})
    assert (result.status, result.code) == (400, "invalid_input")
    assert hub.grants() == []


async def test_no_match_says_so_and_grants_nothing(hub: ToolHub) -> None:
    thinker = hub.bind(thinker_class(catalog(30)))
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "zebra xylophone", "limit": 5})
    assert result.structured == {
        "tools": [],
        "matches": 0,
        "more": False,
        "note": "No tool matched: try other words.",
    }
    assert hub.grants() == []


async def test_a_read_only_thinker_finds_only_read_only_tools(hub: ToolHub) -> None:
    tools = [*catalog(20, read_only=False), SEND, WEATHER]
    thinker = hub.bind(thinker_class(tools, "search", read_only=True))
    turn = thinker.begin_turn()
    [meta] = [p for p in turn.tools if p.name == "search_tools"]
    assert meta.read_only  # survives the sweep
    assert thinker.deferred_tools() == (WEATHER,)
    result = await thinker.call("search_tools", {"query": "invoice weather", "limit": 20})
    names = [t["name"] for t in result.structured["tools"]]  # type: ignore[index]
    assert names == ["weather_forecast"]
    assert thinker.deferred_tools() == ()  # granted: offered now


# -- admission of each match ---------------------------------------------------------------


class Gate:
    """A plugin whose admit hook refuses the names it is given."""

    def __init__(self, refused: set[str]) -> None:
        self.refused = refused
        self.asked: list[str] = []

    @hookimpl
    def toolpalette_admit(self, thinker: Any, kind: str, name: str) -> bool | None:
        self.asked.append(name)
        return False if name in self.refused else None


async def test_refused_matches_are_left_out_and_recorded(hub: ToolHub) -> None:
    gate = Gate({"tool_00002"})
    hub.add_plugin(gate, name="gate")

    class NoTen(ToolPolicy):
        def decide_grant(self, thinker: Any, kind: str, name: str, item: Any) -> Decision:
            return Decision.DENY if name == "tool_00010" else Decision.ALLOW

    thinker = hub.bind(thinker_class(catalog(40)), policy=NoTen())
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "weather", "limit": 2})
    names = [t["name"] for t in result.structured["tools"]]  # type: ignore[index]
    assert names == ["tool_00018", "tool_00026"]
    assert gate.asked == ["tool_00002", "tool_00010", "tool_00018", "tool_00026"]
    assert [(g.name, g.decision, g.reason) for g in hub.grants()] == [
        ("tool_00002", "refused", "refused by a host hook"),
        ("tool_00010", "refused", "denied by policy"),
        ("tool_00018", "granted", ""),
        ("tool_00026", "granted", ""),
    ]


async def test_a_match_that_needs_a_person_is_returned_marked_and_each_call_asks(
    hub: ToolHub,
) -> None:
    asked: list[Approval] = []
    holder: dict[str, Thinker] = {}

    def approver(approval: Approval) -> None:
        asked.append(approval)
        holder["thinker"].resolve_approval(approval.token, approve=len(asked) == 1)

    thinker = hub.bind(
        thinker_class([*catalog(20), SEND]),
        policy=ToolPolicy(ask=["send_invoice"]),
        approver=approver,
    )
    holder["thinker"] = thinker
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "send invoice e-mail", "limit": 1})
    assert result.structured["tools"][0]["approval"] == "required"  # type: ignore[index]
    assert "approves each call" in result.structured["note"]  # type: ignore[index]
    assert asked == []  # not a pending grant: nobody is asked until it is called
    assert thinker.pending_approvals() == []
    first = await thinker.call("send_invoice", {"to": "a@example.org"})
    assert (first.status, first.text) == (200, "sent")
    assert [(a.kind, a.name, a.input) for a in asked] == [
        ("call", "send_invoice", {"to": "a@example.org"})
    ]
    second = await thinker.call("send_invoice", {"to": "b@example.org"})
    assert (second.status, second.code) == (403, "denied")  # asked again, and refused
    assert "send_invoice" not in thinker.begin_turn().tool_names  # never kept
    assert [(g.kind, g.name, g.decision) for g in hub.grants()] == [
        ("tool", "send_invoice", "pending"),
        ("call", "send_invoice", "granted"),
        ("tool", "send_invoice", "granted"),
        ("call", "send_invoice", "refused"),
        ("tool", "send_invoice", "refused"),
    ]


async def test_a_search_judges_a_bounded_number_of_matches(hub: ToolHub) -> None:
    gate = Gate({f"tool_{i:05d}" for i in range(400)})
    hub.add_plugin(gate, name="gate")
    thinker = hub.bind(thinker_class(catalog(400)))
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "weather", "limit": 2})
    assert result.structured["tools"] == []  # type: ignore[index]
    assert len(gate.asked) == 8  # four per match it may return, not the 50 that match


# -- the index: built once per class and catalog, shared, replaceable ------------------------


class CountingRanker:
    """The default ranker, counting its builds and the documents each one read."""

    def __init__(self) -> None:
        self.builds: list[list[str]] = []

    def build(self, documents: Sequence[ToolDocument]) -> ToolIndex:
        self.builds.append([d.name for d in documents])
        return LexicalRanker().build(documents)


async def test_the_index_is_built_once_per_class_and_catalog_and_shared(hub: ToolHub) -> None:
    ranker = CountingRanker()
    cls = thinker_class(catalog(40), ranker=ranker)
    first, second = hub.bind(cls), hub.bind(cls)
    for thinker in (first, second, first):
        thinker.begin_turn()
        await thinker.call("search_tools", {"query": "weather", "limit": 1})
    assert len(ranker.builds) == 1
    assert len(ranker.builds[0]) == 40
    hub.register_system_tool(FakeTool("joined", read_only=True))  # the catalog changes
    second.begin_turn()
    await second.call("search_tools", {"query": "weather", "limit": 1})
    assert len(ranker.builds) == 2
    other = hub.bind(thinker_class(catalog(40), ranker=ranker))  # another class
    other.begin_turn()
    await other.call("search_tools", {"query": "weather", "limit": 1})
    assert len(ranker.builds) == 3


class Reversed:
    """A host's ranker: the catalog in reverse order, whatever the query."""

    def build(self, documents: Sequence[ToolDocument]) -> ToolIndex:
        return _ReversedIndex(len(documents))


class _ReversedIndex:
    def __init__(self, size: int) -> None:
        self.size = size

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        return [(p, 1.0) for p in range(self.size - 1, -1, -1)][:limit]


async def test_a_hosts_ranker_ranks(hub: ToolHub) -> None:
    thinker = hub.bind(thinker_class(catalog(30), ranker=Reversed()))
    thinker.begin_turn()
    result = await thinker.call("search_tools", {"query": "anything", "limit": 2})
    names = [t["name"] for t in result.structured["tools"]]  # type: ignore[index]
    assert names == ["tool_00029", "tool_00028"]


# -- skills ------------------------------------------------------------------------------------


SKILLS = [
    Skill(
        "write-sql", "Write safe, parameterized SQL queries.", bundle="io.example.db", body="Bind."
    ),
    Skill(
        "tidy-notes", "Keep meeting notes tidy.", bundle="io.example.notes", body="One per topic."
    ),
    *(
        Skill(
            f"other-{i}", f"Another kind of work, number {i}.", bundle="io.example.misc", body="x"
        )
        for i in range(SKILL_ENUM_LIMIT)
    ),
]


class Skilled(Thinker):
    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().prefix("io.example")


async def test_search_skills_attaches_the_best_match_from_the_next_turn(hub: ToolHub) -> None:
    hub.skills().add_skills(SKILLS, pack="code", distribution=None)
    thinker = hub.bind(Skilled)
    turn = thinker.begin_turn()
    assert meta_names(turn) == ["search_skills"]
    result = await thinker.call("search_skills", {"query": "write a SQL query", "limit": 1})
    assert result.structured == {
        "skills": [
            {
                "name": "io.example.db/write-sql",
                "description": "Write safe, parameterized SQL queries.",
            }
        ],
        "matches": 1,
        "more": False,
        "note": "1 of 1 matching skills. "
        "These skills are added to your instructions from your next turn.",
    }
    assert "Bind." not in turn.preamble
    assert "Bind." in thinker.begin_turn().preamble


async def test_a_thinker_that_keeps_nothing_gets_the_skills_instructions(hub: ToolHub) -> None:
    hub.skills().add_skills(SKILLS, pack="code", distribution=None)
    thinker = hub.bind(Skilled, keep_grants=False)
    thinker.begin_turn()
    result = await thinker.call("search_skills", {"query": "meeting notes", "limit": 1})
    [match] = result.structured["skills"]  # type: ignore[index]
    assert (match["name"], match["instructions"]) == (
        "io.example.notes/tidy-notes",
        "One per topic.",
    )
    assert thinker.conversation.attached == ()
    assert "One per topic." not in thinker.begin_turn().preamble
