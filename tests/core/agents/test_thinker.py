"""Thinkers: binding, the per-turn offer, calls through the pipeline, idempotent reconcile.

Read-only binding and sweep: ``test_palette.py``; admission, policy and approvals:
``test_thinker_admission.py``; the meta-tools' schemas: ``test_meta.py``.
"""

from __future__ import annotations

import gc
import json
import weakref
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel
from toolpalette import (
    Conversation,
    Skill,
    SkillSelector,
    Thinker,
    Tool,
    ToolCollisionError,
    ToolContext,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    Turn,
    tool,
)
from toolpalette.testing import FORMATS, plugin_of


@tool(read_only=True)
def look(query: str) -> str:
    """Look something up."""
    return f"found {query}"


@tool(read_only=True)
def count(n: int) -> int:
    """Count to n."""
    return n


@tool
def poke() -> str:
    """Change something."""
    return "poked"


@tool(read_only=True)
def whoami(ctx: ToolContext) -> dict[str, Any]:
    """Say who is calling."""
    return {
        "parent": type(ctx.parent).__name__,
        "run_id": ctx.run_id,
        "thread_id": ctx.thread_id,
        "user": dict(ctx.user),
    }


@tool(read_only=True)
def late() -> str:
    """Registered late."""
    return "late"


@pytest.fixture
def hub() -> ToolHub:
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(plugin_of(look, count, poke, whoami), name="basic")
    return hub


class Worker(Thinker):
    """Offered look, count, poke and whoami; no deferred tools, no skills."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(look).tool(count).tool(poke).tool(whoami)


# -- binding and the first turn -------------------------------------------------------


def test_bind_gives_a_thinker_of_the_class_on_the_hub(hub: ToolHub) -> None:
    conversation = Conversation("Be brief.", id="c-1")
    worker = hub.bind(Worker, conversation, run_id="r-1", user={"id": 7})
    assert isinstance(worker, Worker)
    assert worker.hub is hub
    assert worker.conversation is conversation
    assert (worker.run_id, dict(worker.user), worker.turn_number) == ("r-1", {"id": 7}, 0)
    assert not worker.is_read_only
    assert hub.bind(Worker).conversation is not hub.bind(Worker).conversation


def test_the_first_turn_offers_the_declared_tools_in_declaration_order(hub: ToolHub) -> None:
    turn = hub.bind(Worker).begin_turn()
    assert isinstance(turn, Turn)
    assert turn.number == 1
    assert turn.tool_names == ("look", "count", "poke", "whoami")
    assert [p.name for p in turn.tools] == list(turn.tool_names)
    assert turn.preamble == ""


def test_schemas_come_in_every_format_with_the_offered_names(hub: ToolHub) -> None:
    turn = hub.bind(Worker).begin_turn()
    for fmt in FORMATS:
        schemas = turn.schemas(fmt)  # type: ignore[arg-type]
        names = [s["function"]["name"] if fmt == "openai_chat" else s["name"] for s in schemas]
        assert names == list(turn.tool_names), fmt
        assert json.loads(turn.schemas_json(fmt)) == schemas  # type: ignore[arg-type]


def test_system_tools_come_first_and_reach_every_thinker(hub: ToolHub) -> None:
    hub.register_system_tool(late)
    assert hub.bind(Worker).begin_turn().tool_names[0] == "late"
    assert hub.bind(Thinker).begin_turn().tool_names == ("late",)


def test_a_thinker_without_declarations_is_offered_nothing(hub: ToolHub) -> None:
    turn = hub.bind(Thinker).begin_turn()
    assert turn.tool_names == ()
    assert turn.schemas("anthropic") == []


def test_the_policy_keeps_denied_tools_out_of_the_offer(hub: ToolHub) -> None:
    worker = hub.bind(Worker, policy=ToolPolicy(deny=["poke"]))
    assert "poke" not in worker.begin_turn().tool_names


def test_turns_are_numbered(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    assert [worker.begin_turn().number for _ in range(3)] == [1, 2, 3]
    assert worker.turn_number == 3


# -- calls ------------------------------------------------------------------------------


async def test_a_valid_call_succeeds(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    result = await worker.call("look", {"query": "cats"})
    assert (result.is_error, result.status, result.code) == (False, 200, "ok")
    assert "found cats" in result.text


async def test_json_text_input_is_accepted(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    result = await worker.call("count", '{"n": 3}')
    assert (result.status, result.text) == (200, "3")


async def test_invalid_input_is_a_400_that_names_the_field(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    result = await worker.call("count", {"n": "seventeen-apples"})
    assert (result.is_error, result.status, result.code) == (True, 400, "invalid_input")
    assert "n" in result.text
    assert "seventeen-apples" not in result.text


async def test_an_unknown_name_is_a_404(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    for name in ("nope", None, 42, "LOOK"):
        result = await worker.call(name, {})
        assert (result.status, result.code) == (404, "unknown_tool"), name


async def test_a_registered_but_unoffered_name_is_a_403_not_offered(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    worker.palette.register(late)  # widened after the offer was made
    result = await worker.call("late", {})
    assert (result.status, result.code) == (403, "not_offered")
    # The refusal reads like an unknown name: it does not reveal the registered tool.
    assert "late" not in result.text.split("Available tools:")[-1]


async def test_a_call_before_any_turn_begins_the_first(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    result = await worker.call("count", {"n": 1})
    assert result.status == 200
    assert worker.turn_number == 1


async def test_tools_get_the_thinker_as_parent_and_the_run_identity(hub: ToolHub) -> None:
    conversation = Conversation(id="thread-9")
    worker = hub.bind(Worker, conversation, run_id="run-3", user={"name": "ada"})
    worker.begin_turn()
    result = await worker.call("whoami", {})
    assert result.status == 200, result.text
    assert json.loads(result.text) == {
        "parent": "Worker",
        "run_id": "run-3",
        "thread_id": "thread-9",
        "user": {"name": "ada"},
    }


async def test_a_tool_removed_from_the_palette_is_unknown_on_the_next_call(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    worker.begin_turn()
    worker.palette.unregister("count")
    result = await worker.call("count", {"n": 1})
    assert (result.status, result.code) == (404, "unknown_tool")


class TallyInput(BaseModel):
    pass


@tool(read_only=True)
class Tally(Tool):
    """Count the calls made on this instance."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.calls = 0

    def run(self, input: TallyInput) -> int:
        self.calls += 1
        return self.calls


class Counter(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(Tally)


async def test_a_class_tool_keeps_its_instance_for_the_thinkers_life(hub: ToolHub) -> None:
    counter = hub.bind(Counter)
    counts = []
    for _ in range(3):
        counter.begin_turn()  # nothing changed: the same instance serves every turn
        counts.append(int((await counter.call("tally", {})).text))
    assert counts == [1, 2, 3]
    other = hub.bind(Counter)  # another thinker: an instance of its own
    other.begin_turn()
    assert (await other.call("tally", {})).text == "1"


async def test_a_thinker_is_freed_with_its_tools_once_the_host_lets_go(hub: ToolHub) -> None:
    counter = hub.bind(Counter)
    counter.begin_turn()
    assert (await counter.call("tally", {})).text == "1"
    freed = weakref.ref(counter)
    del counter
    gc.collect()
    assert freed() is None  # and with it its palette, its executor and its Tally


# -- idempotent reconcile ----------------------------------------------------------------


def test_an_unchanged_palette_keeps_its_version_and_bytes(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    first = worker.begin_turn()
    for _ in range(3):
        turn = worker.begin_turn()
        assert turn.version == first.version
        assert turn.tools == first.tools
        for fmt in FORMATS:
            assert turn.schemas_json(fmt) == first.schemas_json(fmt)  # type: ignore[arg-type]


def test_two_thinkers_of_one_class_get_byte_identical_schemas(hub: ToolHub) -> None:
    one, two = hub.bind(Worker).begin_turn(), hub.bind(Worker).begin_turn()
    assert one.schemas_json("openai_responses") == two.schemas_json("openai_responses")


def test_an_unrelated_hub_change_leaves_the_palette_alone(hub: ToolHub) -> None:
    worker = hub.bind(Worker)
    first = worker.begin_turn()
    hub.add_plugin(plugin_of(late), name="unrelated")
    turn = worker.begin_turn()
    assert (turn.version, turn.schemas_json()) == (first.version, first.schemas_json())


class Counting(Thinker):
    """Counts how often its selectors are built."""

    calls: ClassVar[list[str]] = []

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        cls.calls.append("tools")
        return ToolSelector().tool(look)

    @classmethod
    def declare_skills(cls) -> SkillSelector:
        cls.calls.append("skills")
        return SkillSelector()


@pytest.fixture
def counting() -> type[Counting]:
    Counting.calls = []
    return Counting


def test_the_class_resolution_is_cached_across_turns_and_instances(
    hub: ToolHub, counting: type[Counting]
) -> None:
    first = hub.bind(counting)
    for _ in range(3):
        first.begin_turn()
    second = hub.bind(counting)
    second.begin_turn()
    assert counting.calls == ["tools", "skills"]
    assert hub.resolve_thinker(counting) is hub.resolve_thinker(counting)


def test_add_plugin_invalidates_the_class_resolution(
    hub: ToolHub, counting: type[Counting]
) -> None:
    worker = hub.bind(counting)
    worker.begin_turn()
    hub.add_plugin(plugin_of(late), name="more")
    worker.begin_turn()
    assert counting.calls.count("tools") == 2


def test_a_system_tool_invalidates_the_resolution_and_joins_the_next_turn(
    hub: ToolHub, counting: type[Counting]
) -> None:
    worker = hub.bind(counting)
    before = worker.begin_turn()
    hub.register_system_tool(late)
    turn = worker.begin_turn()
    assert counting.calls.count("tools") == 2
    # What stays keeps its position (a prompt cache stays warm); newcomers are appended.
    assert turn.tool_names == ("look", "late")
    assert turn.version > before.version


def test_every_system_tool_registered_between_turns_is_offered(hub: ToolHub) -> None:
    # Regression: the reconcile key held the resolved palette's id() only; after the hub
    # dropped its cache the next palette could reuse that id, and the turn kept the old
    # offer (a system tool missing until something else changed).
    worker = hub.bind(Worker)
    worker.begin_turn()
    for i in range(30):
        fn = tool(name=f"system_{i}", read_only=True)(_make_fn(i))
        hub.register_system_tool(fn)
        assert f"system_{i}" in worker.begin_turn().tool_names, i


def _make_fn(i: int) -> Any:
    def fn() -> str:
        """A system-wide tool."""
        return str(i)

    return fn


def test_a_declaration_error_surfaces_at_bind_time(hub: ToolHub) -> None:
    @tool(name="look")
    def impostor() -> str:
        """Another tool named look."""
        return ""

    class Clashing(Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool(look).tool(impostor)

    from toolpalette import ToolCollisionError

    with pytest.raises(ToolCollisionError):
        hub.bind(Clashing)


def test_skills_declared_reach_the_request_skill_catalog(hub: ToolHub) -> None:
    hub.skills().add_skills(
        [Skill("tidy", "Tidy up.", bundle="io.example", body="Sort things.")],
        pack="code",
        distribution=None,
    )

    class Reader(Thinker):
        @classmethod
        def declare_skills(cls) -> SkillSelector:
            return SkillSelector().all()

    turn = hub.bind(Reader).begin_turn()
    assert turn.tool_names == ("request_skill",)
    assert turn.preamble == ""


def test_a_palette_changed_directly_is_reconciled_at_the_next_turn(hub: ToolHub) -> None:
    # Regression: the reconcile was skipped whenever the hub, the grants and the
    # attached skills were unchanged, so a declared tool removed (or an extra one
    # registered) directly on the palette stayed that way until something else moved.
    worker = hub.bind(Worker)
    first = worker.begin_turn()
    worker.palette.unregister("count")
    worker.palette.register(late)
    turn = worker.begin_turn()
    assert sorted(turn.tool_names) == sorted(first.tool_names)  # count rejoins at the end
    assert turn.version > first.version
    again = worker.begin_turn()
    assert (again.version, again.schemas_json()) == (turn.version, turn.schemas_json())


def test_a_model_dependent_tool_without_a_grade_takes_the_thinkers(hub: ToolHub) -> None:
    @tool(read_only=True, model_dependent=True)
    def summarize() -> str:
        """Summarize with a model."""
        return ""

    @tool(read_only=True, model_dependent=True, grade="large")
    def translate() -> str:
        """Translate with a model."""
        return ""

    class Fast(Thinker):
        grade = "small"

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            return ToolSelector().tool(summarize).tool(translate).tool(look)

    fast = hub.bind(Fast)
    grades = {p.name: p.grade_for(fast) for p in fast.begin_turn().tools}
    assert grades == {"summarize": "small", "translate": "large", "look": None}


def test_a_system_tool_and_a_declared_tool_with_one_name_collide(hub: ToolHub) -> None:
    @tool(name="look", read_only=True)
    def other_look(query: str) -> str:
        """Another tool that calls itself look."""
        return query

    hub.register_system_tool(other_look)
    worker = hub.bind(Worker)
    with pytest.raises(ToolCollisionError) as caught:
        worker.begin_turn()
    assert caught.value.tool_name == "look"
    assert "other_look" in str(caught.value)
