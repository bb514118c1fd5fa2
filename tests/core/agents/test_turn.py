"""What a turn says besides its offer: what changed, what it costs, the tools' guidance.

``turn.changes`` (what moved since the thinker's previous turn), ``turn.overhead(fmt)``
(the bytes and estimated tokens of the definitions and the preamble) and the offered
tools' guidance in ``turn.preamble``. Per-turn tools: ``test_thinker_extra.py``.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from toolpalette import (
    Conversation,
    Overhead,
    Skill,
    SurfaceDiff,
    Thinker,
    ToolHub,
    ToolPolicy,
    ToolRegistry,
    ToolSelector,
    Turn,
    function_tool,
    hookimpl,
    tool,
)
from toolpalette.testing import FORMATS


@tool(read_only=True, guidance="Look before you count.")
def look(query: str) -> str:
    """Look something up."""
    return query


@tool(read_only=True)
def count(n: int) -> int:
    """Count to n."""
    return n


@tool(guidance="Poke only what you looked at.")
def poke() -> str:
    """Change something."""
    return "poked"


@tool(read_only=True, guidance="Ask for what you need, once.")
def later() -> str:
    """Deferred until asked for."""
    return "later"


class Worker(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(look).tool(count).tool(poke).tool(later, deferred=True)


class Reader(Worker):
    read_only = True


def _echo(text: str = "") -> str:
    return text


def echo(name: str, guidance: str | None = None, description: str = "Echo a text.") -> Any:
    """A tool under ``name``: a new provider each time, equal to one of the same record."""
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return function_tool(name, description, schema, _echo, read_only=True, guidance=guidance)


class Hooked:
    """A reconcile hook that keeps, every turn, the changes the test has asked of it so far.

    A hook's changes last one turn (the palette is staged afresh each turn), so it
    makes them all again: what the test adds or replaces stays until it is removed.
    """

    def __init__(self) -> None:
        self.add: list[Any] = []
        self.remove: list[str] = []
        self.replace: list[Any] = []
        self._kept: dict[str, tuple[Any, Any]] = {}
        self._gone: set[str] = set()

    @hookimpl
    def toolpalette_reconcile(self, registry: ToolRegistry) -> None:
        for provider in self.add:
            self._kept[provider.name] = (ToolRegistry.register, provider)
            self._gone.discard(provider.name)
        for name in self.remove:
            self._kept.pop(name, None)
            self._gone.add(name)
        for provider in self.replace:
            self._kept[provider.name] = (ToolRegistry.replace, provider)
            self._gone.discard(provider.name)
        self.add, self.remove, self.replace = [], [], []
        for name in self._gone:
            registry.unregister(name)
        for change, provider in self._kept.values():
            change(registry, provider)


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


# -- turn.changes ---------------------------------------------------------------------


def test_the_first_turn_adds_every_name_and_an_unchanged_turn_none(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    first = worker.begin_turn()
    assert first.changes == SurfaceDiff(first.version, added=tuple(sorted(first.tool_names)))
    second = worker.begin_turn()
    assert second.changes == SurfaceDiff(second.version)
    assert second.changes is second.changes  # computed once


def test_a_grant_is_added_and_request_tools_withdrawn(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    assert worker.admit("tool", ["later"])["granted"] == ["later"]
    turn = worker.begin_turn()
    # The catalog is empty now: request_tools goes, the granted tool comes.
    assert turn.changes == SurfaceDiff(turn.version, added=("later",), removed=("request_tools",))


def test_added_removed_and_changed_are_each_sorted_by_name(hub: ToolHub) -> None:
    hooked = Hooked()
    hub.add_plugin(hooked, name="hooked")
    worker = hub.bind(Worker)
    worker.begin_turn()
    hooked.add = [echo("zeta"), echo("alpha"), echo("mid")]
    worker.begin_turn()
    hooked.replace = [echo("zeta", description="Echo again."), echo("alpha")]
    hooked.remove = ["count", "look"]
    turn = worker.begin_turn()
    assert turn.changes.added == ()
    assert turn.changes.removed == ("count", "look")
    # Both are new providers, but alpha's is equal to the one it replaced: no change.
    assert turn.changes.changed == ("zeta",)


def test_a_tool_removed_and_added_back_between_turns_is_no_change(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    worker.palette.unregister("count")
    worker.palette.register(count)
    turn = worker.begin_turn()  # reconciled back: count is where it was, the same tool
    assert turn.changes == SurfaceDiff(turn.version)


def test_changes_are_measured_against_the_previous_turn_not_the_registry(
    hub: ToolHub,
) -> None:
    hooked = Hooked()
    hub.add_plugin(hooked, name="hooked")
    worker = hub.bind(Worker)
    first = worker.begin_turn()
    hooked.add = [echo("one")]
    second = worker.begin_turn()
    hooked.remove = ["one"]
    third = worker.begin_turn()
    # Each turn's changes stay what they were when later turns come.
    assert second.changes.added == ("one",)
    assert third.changes.removed == ("one",)
    assert first.changes.added == tuple(sorted(first.tool_names))


def brute_force(before: Turn, after: Turn) -> tuple[tuple[str, ...], ...]:
    """The changes from one turn to the next, comparing every name."""
    old = {p.name: p for p in before.tools}
    new = {p.name: p for p in after.tools}
    changed = [
        n
        for n in old.keys() & new.keys()
        if old[n] is not new[n] and (old[n] != new[n] or old[n].info != new[n].info)
    ]
    return (
        tuple(sorted(new.keys() - old.keys())),
        tuple(sorted(old.keys() - new.keys())),
        tuple(sorted(changed)),
    )


@pytest.mark.parametrize("seed", range(6))
def test_changes_agree_with_comparing_every_name_whatever_moved(hub: ToolHub, seed: int) -> None:
    rng = random.Random(seed)
    hooked = Hooked()
    hub.add_plugin(hooked, name="hooked")
    worker = hub.bind(Worker)
    names = [f"tool_{i}" for i in range(8)]
    previous = worker.begin_turn()
    for _ in range(25):
        present = set(previous.tool_names)
        for name in rng.sample(names, 3):
            move = rng.choice(["add", "remove", "replace", "same"])
            if move == "add" and name not in present:
                hooked.add.append(echo(name, rng.choice([None, "Use it."])))
            elif move == "remove":
                hooked.remove.append(name)
            elif move in ("replace", "same") and name in present:
                held = next(p for p in previous.tools if p.name == name)
                again = echo(name, held.guidance, held.description)  # equal record
                other = echo(name, held.guidance, held.description + " Again.")
                hooked.replace.append(again if move == "same" else other)
        if rng.random() < 0.3:
            worker.palette.register(echo("direct"))  # touched outside any reconcile
        if rng.random() < 0.3:
            worker.admit("tool", ["later"])
        turn = worker.begin_turn()
        changes = turn.changes
        assert (changes.added, changes.removed, changes.changed) == brute_force(previous, turn)
        assert changes.version == turn.version
        previous = turn


# -- turn.overhead ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_overhead_is_the_bytes_sent_and_a_quarter_of_them_in_tokens(
    hub: ToolHub, fmt: Any
) -> None:
    worker = hub.bind(Worker, Conversation("You are careful. Überprüfe alles."))
    turn = worker.begin_turn()
    overhead = turn.overhead(fmt)
    assert isinstance(overhead, Overhead)
    tools = len(turn.schemas_json(fmt))
    preamble = len(turn.preamble.encode("utf-8"))
    assert (overhead.format, overhead.tools_bytes, overhead.preamble_bytes) == (
        fmt,
        tools,
        preamble,
    )
    assert overhead.bytes == tools + preamble
    assert overhead.tools_tokens == -(-tools // 4)
    assert overhead.preamble_tokens == -(-preamble // 4)
    assert overhead.tokens == overhead.tools_tokens + overhead.preamble_tokens
    assert tools == len(json.dumps(turn.schemas(fmt), sort_keys=True, separators=(",", ":")))


def test_the_overhead_is_kept_until_the_version_or_the_preamble_moves(hub: ToolHub) -> None:
    conversation = Conversation("Host.")
    worker = hub.bind(Worker, conversation)
    first = worker.begin_turn()
    measured = first.overhead("anthropic")
    unchanged = worker.begin_turn()
    assert unchanged.overhead("anthropic") is measured  # another turn, the same palette
    assert unchanged.overhead("mcp") is not measured
    worker.admit("tool", ["later"])
    granted = worker.begin_turn()
    assert granted.overhead("anthropic").tools_bytes == len(granted.schemas_json("anthropic"))
    assert granted.overhead("anthropic").tools_bytes != measured.tools_bytes
    conversation.attach(Skill("plan", "Plan ahead.", bundle="io.example", body="Write it."))
    attached = worker.begin_turn()
    assert attached.version == granted.version  # no skill catalog: the palette stays
    after = attached.overhead("anthropic")
    assert after.tools_bytes == granted.overhead("anthropic").tools_bytes
    assert after.preamble_bytes == len(attached.preamble.encode("utf-8")) > 0
    assert after.preamble_bytes > granted.overhead("anthropic").preamble_bytes


def test_an_unknown_format_is_a_value_error(hub: ToolHub) -> None:
    turn = hub.bind(Worker).begin_turn()
    with pytest.raises(ValueError, match="unknown format"):
        turn.overhead("gemini")  # type: ignore[arg-type]


def test_a_strict_thinker_measures_what_it_sends(hub: ToolHub) -> None:
    class Strict(Worker):
        strict = True

    loose, strict = hub.bind(Worker).begin_turn(), hub.bind(Strict).begin_turn()
    assert strict.overhead("openai_chat").tools_bytes == len(strict.schemas_json("openai_chat"))
    assert strict.schemas_json("openai_chat") != loose.schemas_json("openai_chat")


# -- the tools' guidance in the preamble -----------------------------------------------------


def test_the_offered_tools_guidance_follows_the_skills_in_the_palettes_order(
    hub: ToolHub,
) -> None:
    conversation = Conversation("Host text.")
    conversation.attach(Skill("plan", "Plan ahead.", bundle="io.example", body="Write it."))
    worker = hub.bind(Worker, conversation)
    turn = worker.begin_turn()
    assert turn.preamble == (
        "Host text.\n\n"
        '<skill id="io.example/plan" name="plan">\n'
        "<description>Plan ahead.</description>\n\n"
        "Write it.\n"
        "</skill>\n\n"
        '<tool name="look">\n'
        "Look before you count.\n"
        "</tool>\n\n"
        '<tool name="poke">\n'
        "Poke only what you looked at.\n"
        "</tool>\n"
    )
    assert turn.guidance == (
        ("look", "Look before you count."),
        ("poke", "Poke only what you looked at."),
    )
    # A deferred tool's guidance waits for the tool.
    assert "Ask for what you need" not in turn.preamble


def test_guidance_comes_with_a_grant_and_goes_with_the_tool(hub: ToolHub) -> None:
    hooked = Hooked()
    hub.add_plugin(hooked, name="hooked")
    worker = hub.bind(Worker)
    worker.begin_turn()
    worker.admit("tool", ["later"])
    granted = worker.begin_turn()
    assert [name for name, _ in granted.guidance] == ["look", "poke", "later"]
    assert granted.preamble.endswith('<tool name="later">\nAsk for what you need, once.\n</tool>\n')
    hooked.remove = ["look"]
    removed = worker.begin_turn()
    assert [name for name, _ in removed.guidance] == ["poke", "later"]
    assert "Look before you count." not in removed.preamble


def test_a_tool_replaced_in_place_brings_its_new_guidance_in_its_place(hub: ToolHub) -> None:
    hooked = Hooked()
    hub.add_plugin(hooked, name="hooked")
    worker = hub.bind(Worker)
    hooked.add = [echo("first", "Old advice."), echo("second", "Second advice.")]
    before = worker.begin_turn()
    assert [n for n, _ in before.guidance] == ["look", "poke", "first", "second"]
    hooked.replace = [echo("first", "New advice."), echo("count", "Count carefully.")]
    after = worker.begin_turn()
    assert after.guidance == (
        ("look", "Look before you count."),
        ("count", "Count carefully."),
        ("poke", "Poke only what you looked at."),
        ("first", "New advice."),
        ("second", "Second advice."),
    )
    unchanged = worker.begin_turn()
    assert unchanged.preamble == after.preamble


def test_no_guidance_leaves_the_conversations_preamble_as_it_is(hub: ToolHub) -> None:
    class Counter(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool(count)

    conversation = Conversation("Host text.")
    turn = hub.bind(Counter, conversation).begin_turn()
    assert turn.preamble == conversation.preamble == "Host text.\n"
    assert turn.guidance == ()


def test_a_tool_kept_out_of_the_offer_brings_no_guidance(hub: ToolHub) -> None:
    swept = hub.bind(Reader).begin_turn()  # poke is mutating: swept
    assert [n for n, _ in swept.guidance] == ["look"]
    denied = hub.bind(Worker, policy=ToolPolicy(deny=["look"])).begin_turn()
    assert [n for n, _ in denied.guidance] == ["poke"]
