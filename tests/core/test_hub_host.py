"""The hub's host side: skills, system-wide tools, thinker resolution and binding, records."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from toolpalette import (
    GrantRecord,
    Skill,
    SkillRegistry,
    Thinker,
    ToolCollisionError,
    ToolContext,
    ToolError,
    ToolErrorReport,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    hookimpl,
    tool,
)


@tool(read_only=True)
def clock() -> str:
    """The time."""
    return "noon"


@tool(name="clock")
def other_clock() -> str:
    """Another clock."""
    return "midnight"


@tool(read_only=True)
def calendar() -> str:
    """The date."""
    return "monday"


@tool(read_only=True)
def settings(ctx: ToolContext) -> dict[str, Any]:
    """The pack's settings."""
    return dict(ctx.config)


@tool
def fail() -> str:
    """Always fails."""
    raise ToolError("the printer is on fire", code="printer", status=409)


class Pack:
    @hookimpl
    def toolpalette_register_tools(self) -> list[object]:
        return [settings, fail]

    @hookimpl
    def toolpalette_register_skills(self) -> list[Skill]:
        return [Skill("print", "Print things.", bundle="io.example.office", body="Use paper.")]


class Office(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(settings).tool(fail)


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False, config={"packs": {"office": {"tray": 2}}})
    hub.add_plugin(Pack(), name="office")
    return hub


# -- skills --------------------------------------------------------------------------------


def test_skills_is_one_registry_holding_the_skills_packs_build(hub: ToolHub) -> None:
    registry = hub.skills()
    assert isinstance(registry, SkillRegistry)
    assert hub.skills() is registry
    skill = registry.skill("io.example.office/print")
    assert skill.origin.pack == "office"


def test_an_empty_hub_has_no_skills() -> None:
    assert ToolHub(autoload=False, config={}).skills().ids() == []


# -- system-wide tools ------------------------------------------------------------------------


def test_system_tools_keep_registration_order_and_are_idempotent(hub: ToolHub) -> None:
    first = hub.register_system_tool(clock)
    hub.register_system_tool(calendar)
    assert hub.register_system_tool(clock) is first
    assert [p.name for p in hub.system_tools()] == ["clock", "calendar"]


def test_a_different_system_tool_under_a_taken_name_collides(hub: ToolHub) -> None:
    hub.register_system_tool(clock)
    with pytest.raises(ToolCollisionError):
        hub.register_system_tool(other_clock)
    assert [p.name for p in hub.system_tools()] == ["clock"]


# -- resolution and binding ------------------------------------------------------------------


def test_resolve_is_the_selectors_resolution(hub: ToolHub) -> None:
    selector = ToolSelector().tool(settings).tool(fail, deferred=True)
    assert hub.resolve(selector) == selector.resolve(hub)


def test_each_thinker_class_is_resolved_and_cached_on_its_own(hub: ToolHub) -> None:
    class Sub(Office):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool(settings)

    office, sub = hub.resolve_thinker(Office), hub.resolve_thinker(Sub)
    assert [p.name for p in office.tools.offered] == ["settings", "fail"]
    assert [p.name for p in sub.tools.offered] == ["settings"]
    assert hub.resolve_thinker(Office) is office
    assert hub.resolve_thinker(Sub) is sub


def test_the_cache_is_per_hub(hub: ToolHub) -> None:
    other = ToolHub(autoload=False, config={})
    other.add_plugin(Pack(), name="office")
    assert hub.resolve_thinker(Office) is not other.resolve_thinker(Office)


def test_resolution_is_consistent_under_threads(hub: ToolHub) -> None:
    start = threading.Barrier(8)
    seen: list[object] = []

    def resolve() -> None:
        start.wait()
        seen.append(hub.resolve_thinker(Office))

    threads = [threading.Thread(target=resolve) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(p) for p in seen}) == 1


def test_bind_passes_options_to_the_thinker(hub: ToolHub) -> None:
    policy = ToolPolicy(deny=["fail"])
    office = hub.bind(Office, policy=policy, run_id="r", user={"u": 1}, approver=print)
    assert (office.policy, office.run_id, dict(office.user)) == (policy, "r", {"u": 1})
    with pytest.raises(TypeError):
        hub.bind(Office, colour="blue")


async def test_the_packs_host_configuration_reaches_its_tools(hub: ToolHub) -> None:
    office = hub.bind(Office)
    office.begin_turn()
    result = await office.call("settings", {})
    assert result.text == '{"tray":2}'


# -- records and reports ---------------------------------------------------------------------


def _record(name: str) -> GrantRecord:
    return GrantRecord("m.T", "c", 1, "tool", name, "granted")


def test_record_grant_keeps_and_delivers_each_record(hub: ToolHub) -> None:
    with_arg: list[GrantRecord] = []
    without_arg: list[str] = []

    class Listeners:
        @hookimpl
        def toolpalette_grant(self, record: GrantRecord) -> None:
            with_arg.append(record)

    class Counter:
        @hookimpl
        def toolpalette_grant(self) -> None:
            without_arg.append("heard")

    hub.add_plugin(Listeners(), name="listeners")
    hub.add_plugin(Counter(), name="counter")
    hub.record_grant(_record("a"))
    hub.record_grant(_record("b"))
    assert [r.name for r in hub.grants()] == ["a", "b"]
    assert with_arg == hub.grants()
    assert without_arg == ["heard", "heard"]
    hub.grants().clear()
    assert len(hub.grants()) == 2


async def test_on_tool_error_hears_failed_calls_until_removed(hub: ToolHub) -> None:
    heard: list[ToolErrorReport] = []
    arrived = threading.Event()

    def listener(report: ToolErrorReport) -> None:
        heard.append(report)
        arrived.set()

    remove = hub.on_tool_error(listener)
    office = hub.bind(Office, run_id="run-7")
    office.begin_turn()
    result = await office.call("fail", {})
    assert (result.status, result.code) == (409, "printer")
    assert arrived.wait(10)
    [report] = heard
    assert (report.tool, report.status, report.code) == ("fail", 409, "printer")
    assert report.context is not None
    assert report.context.run_id == "run-7"
    remove()
    remove()  # removing twice is harmless
    assert hub.tool_error_reporters() == ()


async def test_a_pack_tool_selected_by_object_is_the_packs_provider(hub: ToolHub) -> None:
    # Regression: a tool selected with .tool(fn) was matched against the catalog only
    # when catalog() had been built; otherwise it had no origin and ran without the
    # host's configuration for its pack (the call above would see {}).
    [provider] = hub.resolve(ToolSelector().tool(settings)).offered
    assert provider.origin is not None
    assert provider.origin.pack == "office"


def test_a_renamed_pack_tool_selected_by_object_keeps_the_hosts_name() -> None:
    hub = ToolHub(autoload=False, config={}, prefix={"office": "office_"})
    hub.add_plugin(Pack(), name="office")
    resolved = hub.resolve(ToolSelector().tool(settings).tool(fail, deferred=True))
    assert [p.name for p in resolved.offered] == ["office_settings"]
    assert [p.name for p in resolved.deferred] == ["office_fail"]


def test_a_skill_added_after_bind_joins_the_next_turns_catalog(hub: ToolHub) -> None:
    # Regression: the per-class resolution was keyed on the tool catalog only, so a
    # skill the host added to hub.skills() after bind was never offered (served stale).
    from toolpalette import SkillSelector

    class Reader(Thinker):
        @classmethod
        def declare_skills(cls) -> SkillSelector:
            return SkillSelector().prefix("io.example.later")

    reader = hub.bind(Reader)
    assert reader.begin_turn().tool_names == ()
    hub.skills().add_skills(
        [Skill("late", "Arrived late.", bundle="io.example.later", body="Hello.")],
        pack="code",
        distribution=None,
    )
    turn = reader.begin_turn()
    assert turn.tool_names == ("request_skill",)
    schema = turn.tools[0].input_schema
    assert [m["enum"][0] for m in schema["properties"]["skills"]["items"]["anyOf"]] == [
        "io.example.later/late"
    ]
    again = reader.begin_turn()
    assert (again.version, again.schemas_json()) == (turn.version, turn.schemas_json())
