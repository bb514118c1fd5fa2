"""The palette hooks, one test each: toolpalette_reconcile, toolpalette_admit, toolpalette_grant.

More cases: ``test_palette.py`` (reconcile against the read-only sweep) and
``test_thinker_admission.py`` (admit and grant along the admission door).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from toolpalette import (
    GrantRecord,
    RequestSkillProvider,
    Skill,
    SkillSelector,
    Thinker,
    ToolHub,
    ToolRegistry,
    ToolSelector,
    hookimpl,
    tool,
)


@tool(read_only=True)
def base() -> str:
    """Declared."""
    return "base"


@tool(read_only=True)
def extra() -> str:
    """Added by a reconcile hook."""
    return "extra"


@tool
def later() -> str:
    """Deferred."""
    return "later"


class Agent(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(base).tool(later, deferred=True)

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        return SkillSelector().all()


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.skills().add_skills(
        [Skill("plan", "Plan ahead.", bundle="io.example", body="Write it down.")],
        pack="code",
        distribution=None,
    )
    return hub


async def test_hook_toolpalette_reconcile(hub: ToolHub, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[tuple[str, Any]] = []

    class First:
        @hookimpl
        def toolpalette_reconcile(self, thinker: Thinker, registry: ToolRegistry) -> None:
            calls.append(("first", registry.tool_names()))
            assert registry is not thinker.palette  # a staged copy of this turn's palette
            registry.register(extra)

    class Second:
        @hookimpl
        def toolpalette_reconcile(self, thinker: Thinker) -> None:  # a subset of arguments
            calls.append(("second", thinker.turn_number))

    class Broken:
        @hookimpl
        def toolpalette_reconcile(self) -> None:
            raise RuntimeError("reconcile broke")

    hub.add_plugin(First(), name="first")
    hub.add_plugin(Broken(), name="broken")
    hub.add_plugin(Second(), name="second")
    agent = hub.bind(Agent)
    with caplog.at_level(logging.ERROR, logger="toolpalette.thinker"):
        turn = agent.begin_turn()
    # Runs after the palette is assembled (the declared tools and meta-tools are there),
    # in pluggy's order (last registered first); a raising one is logged and skipped.
    assert calls == [("second", 1), ("first", ["base", "request_skill", "request_tools"])]
    assert "broken" in caplog.text
    # What the hook registers is offered this very turn, and runs.
    assert turn.tool_names == ("base", "request_tools", "request_skill", "extra")
    assert (await agent.call("extra", {})).status == 200
    # Every turn, and an idempotent hook leaves an unchanged palette unchanged.
    again = agent.begin_turn()
    assert [c[0] for c in calls] == ["second", "first", "second", "first"]
    assert (again.version, again.schemas_json()) == (turn.version, turn.schemas_json())


def test_a_tool_a_hook_stops_adding_drops_out_next_turn(hub: ToolHub) -> None:
    adding = [True]

    class Adds:
        @hookimpl
        def toolpalette_reconcile(self, registry: ToolRegistry) -> None:
            if adding[0]:
                registry.register(extra)

    hub.add_plugin(Adds(), name="adds")
    agent = hub.bind(Agent)
    assert "extra" in agent.begin_turn().tool_names
    kept = agent.begin_turn()
    assert "extra" in kept.tool_names
    adding[0] = False
    dropped = agent.begin_turn()
    assert "extra" not in dropped.tool_names
    assert dropped.version > kept.version
    assert not agent.palette.has_tool("extra")


async def test_a_tool_a_hook_removes_once_comes_back_next_turn(hub: ToolHub) -> None:
    removing = [True]

    class RemovesOnce:
        @hookimpl
        def toolpalette_reconcile(self, registry: ToolRegistry) -> None:
            if removing[0]:
                registry.unregister("base")
                removing[0] = False

    hub.add_plugin(RemovesOnce(), name="removes-once")
    agent = hub.bind(Agent)
    first = agent.begin_turn()
    assert "base" not in first.tool_names
    assert (await agent.call("base", {})).status == 404
    second = agent.begin_turn()
    assert "base" in second.tool_names
    assert (await agent.call("base", {})).status == 200
    # And a hook that changes nothing leaves the palette, and its version, alone.
    assert agent.begin_turn().version == second.version


def test_a_reconcile_hook_that_rebuilds_a_meta_tool_replaces_the_stale_one(hub: ToolHub) -> None:
    # Re-registering a provider equal to the one held (a meta-tool is equal to any
    # other of its type) with another description replaces it in place: the hook's
    # catalog is offered, not the stale one.
    catalogs = [[("io.example/plan", "Plan ahead.")]]

    class Rebuilds:
        @hookimpl
        def toolpalette_reconcile(self, registry: ToolRegistry) -> None:
            registry.register(RequestSkillProvider(catalogs[-1]))

    hub.add_plugin(Rebuilds(), name="rebuilds")
    agent = hub.bind(Agent)

    def offered(turn: Any) -> list[str]:
        [meta] = [p for p in turn.tools if p.name == "request_skill"]
        return [m["enum"][0] for m in meta.input_schema["properties"]["skills"]["items"]["anyOf"]]

    first = agent.begin_turn()
    assert offered(first) == ["io.example/plan"]
    catalogs.append([("io.example/plan", "Plan ahead."), ("io.example/later", "Later.")])
    second = agent.begin_turn()
    assert offered(second) == ["io.example/plan", "io.example/later"]
    assert second.tool_names == first.tool_names  # in its place
    assert second.version > first.version


def test_hook_toolpalette_admit(hub: ToolHub) -> None:
    asked: list[tuple[Any, str, str]] = []

    class NoOpinion:
        @hookimpl
        def toolpalette_admit(self, thinker: Thinker, kind: str, name: str) -> None:
            asked.append((thinker, kind, name))

    class Gate:
        @hookimpl
        def toolpalette_admit(self, kind: str, name: str) -> bool | str | None:
            if name == "later":
                return "tools that change things need a ticket"
            return True if kind == "skill" else None

    hub.add_plugin(NoOpinion(), name="no-opinion")
    hub.add_plugin(Gate(), name="gate")  # called first; stops at the first non-None
    agent = hub.bind(Agent)
    agent.begin_turn()
    tools = agent.admit("tool", ["later"])
    skills = agent.admit("skill", ["io.example/plan"])
    assert tools["refused"] == [
        {"name": "later", "reason": "tools that change things need a ticket"}
    ]
    assert skills["granted"] == ["io.example/plan"]
    assert asked == []  # the gate answered both, so the second implementation never ran
    assert agent.admit("skill", ["io.example/plan"])["already_present"] == ["io.example/plan"]


def test_hook_toolpalette_grant(hub: ToolHub) -> None:
    delivered: list[GrantRecord] = []

    class Audit:
        @hookimpl
        def toolpalette_grant(self, record: GrantRecord) -> None:
            delivered.append(record)

    hub.add_plugin(Audit(), name="audit")
    agent = hub.bind(Agent)
    agent.begin_turn()
    agent.admit("tool", ["later", "base", "missing"])
    agent.admit("skill", ["io.example/plan"])
    assert [(r.kind, r.name, r.decision) for r in delivered] == [
        ("tool", "later", "granted"),
        ("tool", "base", "already_present"),
        ("tool", "missing", "refused"),
        ("skill", "io.example/plan", "granted"),
    ]
    assert delivered == hub.grants()
    assert all(isinstance(r, GrantRecord) for r in delivered)
    assert {r.thinker for r in delivered} == {f"{__name__}.Agent"}
    assert {r.conversation for r in delivered} == {agent.conversation.id}
