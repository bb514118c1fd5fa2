"""Issue 19's "done when", host side: a thinker over 10,000 deferred tools.

The pack is built in code: 10,000 providers with hand-written schemas, selected as
deferred. Generating and installing a distribution of that size would cost the suite
far more than it tells (a pack's hand-written schemas are each checked when the pack
is collected, about 3 ms a tool). The thinker:

- is offered a palette whose meta-tools cost the same bytes as over 100;
- finds a tool through ``search_tools`` and calls it in the same turn;
- sees it offered in the next turn.
"""

from __future__ import annotations

import pytest
from toolpalette import Thinker, ToolHub, ToolSelector
from toolpalette.testing import FakeTool

SUBJECTS = ["invoice", "calendar", "ticket", "payroll", "playlist", "parcel", "recipe", "fleet"]
VERBS = ["list", "create", "archive", "export", "count", "rename"]


def pack_tools(size: int) -> list[FakeTool]:
    tools = []
    for i in range(size):
        subject, verb = SUBJECTS[i % len(SUBJECTS)], VERBS[(i // len(SUBJECTS)) % len(VERBS)]
        tools.append(
            FakeTool(
                f"{verb}_{subject}_{i:05d}",
                description=f"{verb.capitalize()} the {subject}s of workspace {i}.",
                input_schema={
                    "type": "object",
                    "properties": {"workspace": {"type": "string", "description": "Its id."}},
                    "required": ["workspace"],
                    "additionalProperties": False,
                },
                read_only=True,
                result=lambda value, i=i: f"tool {i} ran for {value['workspace']}",
            )
        )
    tools[size * 7 // 9] = FakeTool(
        "convert_currency",
        description="Convert an amount of money from one currency to another at today's rate.",
        input_schema={
            "type": "object",
            "properties": {
                "amount": {"type": "number", "description": "How much."},
                "source": {"type": "string", "description": "The currency it is in (ISO code)."},
                "target": {"type": "string", "description": "The currency wanted (ISO code)."},
            },
            "required": ["amount", "source", "target"],
            "additionalProperties": False,
        },
        read_only=True,
        result=lambda value: f"{value['amount'] * 2} {value['target']}",
    )
    return tools


def clerk_class(size: int) -> type[Thinker]:
    tools = pack_tools(size)

    class Clerk(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector()
            for provider in tools:
                selector.provider(provider, deferred=True)
            return selector

    return Clerk


META = {"search_tools", "request_tools"}


def meta_bytes(thinker: Thinker, fmt: str) -> bytes:
    turn = thinker.begin_turn()
    meta = [p for p in turn.tools if p.name in META]
    assert [p.name for p in meta] == ["search_tools"]
    exported = turn.schemas(fmt)  # type: ignore[arg-type]
    names = [p.name for p in turn.tools]
    return repr([e for n, e in zip(names, exported, strict=True) if n in META]).encode()


@pytest.fixture(scope="module")
def clerk() -> type[Thinker]:
    return clerk_class(10_000)


def test_the_meta_tools_cost_the_same_over_10000_deferred_tools_as_over_100(
    clerk: type[Thinker],
) -> None:
    big = ToolHub(autoload=False, config={}).bind(clerk)
    small = ToolHub(autoload=False, config={}).bind(clerk_class(100))
    assert len(big.deferred_tools()) == 10_000
    assert len(small.deferred_tools()) == 100
    for fmt in ("openai_chat", "anthropic"):
        assert meta_bytes(big, fmt) == meta_bytes(small, fmt)
        assert len(big.begin_turn().schemas_json(fmt)) <= 1536  # type: ignore[arg-type]


async def test_a_tool_found_by_search_is_called_in_the_same_turn_and_offered_next(
    clerk: type[Thinker],
) -> None:
    thinker = ToolHub(autoload=False, config={}).bind(clerk)
    turn = thinker.begin_turn()
    assert turn.tool_names == ("search_tools",)
    found = await thinker.call(
        "search_tools", {"query": "convert money to another currency", "limit": 3}
    )
    assert found.status == 200
    matches = found.structured["tools"]  # type: ignore[index]
    assert matches[0]["name"] == "convert_currency"
    assert matches[0]["input_schema"]["required"] == ["amount", "source", "target"]
    ran = await thinker.call("convert_currency", {"amount": 10, "source": "EUR", "target": "NOK"})
    assert (ran.status, ran.text) == (200, "20 NOK")
    following = thinker.begin_turn()
    assert "convert_currency" in following.tool_names
    assert following.tool_names[0] == "search_tools"
    assert "convert_currency" not in {p.name for p in thinker.deferred_tools()}
    assert len(thinker.deferred_tools()) == 10_000 - len(matches)
