"""``Thinker.max_granted``: the grants a thinker keeps are bounded, the least recently used go.

An evicted grant is on the record as ``evicted``, stays callable until its turn ends,
leaves the palette at the next turn and returns to the catalog, to be asked for again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from toolpalette import Thinker, ToolHub, ToolSelector
from toolpalette.testing import FakeTool

SUBJECTS = ["invoice", "calendar", "weather", "ticket", "payroll", "playlist", "parcel"]
TOOLS = [
    FakeTool(
        f"{subject}_{i}",
        description=f"Look up the {subject} number {i}.",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
        read_only=True,
        result=f"{subject} {i}",
    )
    for subject in SUBJECTS
    for i in range(30)
]


def thinker_class(bound: Any = 3, tools: Sequence[FakeTool] = TOOLS) -> type[Thinker]:
    class Capped(Thinker):
        tool_search = "search"
        max_granted = bound

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector()
            for provider in tools:
                selector.provider(provider, deferred=True)
            return selector

    return Capped


@pytest.fixture
def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


def decisions(hub: ToolHub) -> list[tuple[str, str]]:
    return [(g.name, g.decision) for g in hub.grants()]


def test_the_default_bound_is_twenty() -> None:
    assert Thinker.max_granted == 20


def test_grants_beyond_the_bound_evict_the_oldest_on_the_record(hub: ToolHub) -> None:
    thinker = hub.bind(thinker_class(3))
    thinker.begin_turn()
    for name in ("invoice_0", "invoice_1", "invoice_2", "invoice_3", "invoice_4"):
        assert thinker.admit("tool", [name])["granted"] == [name]
    assert decisions(hub) == [
        ("invoice_0", "granted"),
        ("invoice_1", "granted"),
        ("invoice_2", "granted"),
        ("invoice_3", "granted"),
        ("invoice_0", "evicted"),
        ("invoice_4", "granted"),
        ("invoice_1", "evicted"),
    ]
    evicted = [g for g in hub.grants() if g.decision == "evicted"]
    assert all("max_granted" in g.reason for g in evicted)
    names = thinker.begin_turn().tool_names
    assert [n for n in names if n.startswith("invoice_")] == ["invoice_2", "invoice_3", "invoice_4"]
    catalog = {p.name for p in thinker.deferred_tools()}
    assert {"invoice_0", "invoice_1"} <= catalog
    assert "invoice_2" not in catalog


async def test_a_called_grant_is_used_and_evicted_last(hub: ToolHub) -> None:
    thinker = hub.bind(thinker_class(3))
    thinker.begin_turn()
    thinker.admit("tool", ["ticket_0", "ticket_1", "ticket_2"])
    thinker.begin_turn()
    assert (await thinker.call("ticket_0", {"id": "a"})).text == "ticket 0"
    thinker.admit("tool", ["ticket_3"])
    assert ("ticket_1", "evicted") in decisions(hub)
    assert ("ticket_0", "evicted") not in decisions(hub)
    names = set(thinker.begin_turn().tool_names)
    assert {"ticket_0", "ticket_2", "ticket_3"} <= names
    assert "ticket_1" not in names


async def test_an_evicted_grant_is_callable_until_its_turn_ends_then_asked_for_again(
    hub: ToolHub,
) -> None:
    thinker = hub.bind(thinker_class(2))
    thinker.begin_turn()
    thinker.admit("tool", ["parcel_0", "parcel_1"])  # in the palette at once
    thinker.admit("tool", ["parcel_2"])
    assert ("parcel_0", "evicted") in decisions(hub)
    assert (await thinker.call("parcel_0", {"id": "x"})).status == 200  # this turn's offer
    thinker.begin_turn()
    assert (await thinker.call("parcel_0", {"id": "x"})).status != 200
    assert thinker.admit("tool", ["parcel_0"])["granted"] == ["parcel_0"]  # asked again
    assert (await thinker.call("parcel_0", {"id": "x"})).status == 200


async def test_a_long_conversation_of_searches_stays_within_the_bound(hub: ToolHub) -> None:
    bounded = hub.bind(thinker_class(20))
    unbounded = hub.bind(thinker_class(None))
    sizes: dict[str, list[int]] = {"bounded": [], "unbounded": []}
    for thinker, key in ((bounded, "bounded"), (unbounded, "unbounded")):
        first = thinker.begin_turn()
        for i in range(20):
            query = f"{SUBJECTS[i % len(SUBJECTS)]} number {i}"
            found = await thinker.call("search_tools", {"query": query, "limit": 5})
            assert found.status == 200
            turn = thinker.begin_turn()
            sizes[key].append(len(turn.tool_names) - len(first.tool_names))
        tokens = thinker.begin_turn().overhead("openai_chat").tools_tokens
        sizes[key].append(tokens)
    assert max(sizes["bounded"][:-1]) == 20
    assert sizes["unbounded"][-2] > 20  # every search's grants kept
    assert sizes["bounded"][-1] < sizes["unbounded"][-1]


@pytest.mark.parametrize("bound", [0, -1, True, 2.5, "3"])
def test_a_bound_that_is_not_a_whole_number_of_at_least_one_is_refused(
    hub: ToolHub, bound: Any
) -> None:
    with pytest.raises(ValueError, match="max_granted"):
        hub.bind(thinker_class(bound))
