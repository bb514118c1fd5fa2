"""The pipeline's order and statuses: name, read-only, input, policy, run, output."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pydantic
import pytest
import toolpalette
from toolpalette import Executor, Tool, ToolContext, ToolRegistry, tool
from toolpalette.errors import InvalidInputError
from toolpalette.testing import FakeTool

CANARY = "CNRY-7f3e2a"
RUN = ToolContext(run_id="run-1", thread_id="thread-1", user={"id": "u1"})


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(read_only=True)
async def async_add(a: int, b: int) -> int:
    """Add two integers, asynchronously."""
    await asyncio.sleep(0)
    return a + b


class Point(pydantic.BaseModel):
    x: int
    y: int


@tool(read_only=True)
def origin() -> Point:
    """The origin."""
    return Point(x=0, y=0)


@tool
def delete_all(confirm: bool) -> str:
    """Delete everything (mutating)."""
    return "deleted" if confirm else "kept"


def spy(name: str = "spy", **options: Any) -> FakeTool:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    return FakeTool(name, input_schema=schema, result=lambda value: value["n"], **options)


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([add, async_add, origin, delete_all])


async def test_success_sync_and_async(registry: ToolRegistry):
    executor = Executor(registry)
    for name in ("add", "async_add"):
        result = await executor.execute(name, {"a": 2, "b": 3})
        assert not result.is_error
        assert (result.status, result.code, result.text) == (200, "ok", "5")
        assert result.structured == {"result": 5}  # an int is wrapped for MCP


async def test_json_text_and_bytes_input(registry: ToolRegistry):
    executor = Executor(registry)
    assert (await executor.execute("add", '{"a": 1, "b": 2}')).text == "3"
    assert (await executor.execute("add", b'{"a": 1, "b": 2}')).text == "3"


async def test_composite_output_is_structured(registry: ToolRegistry):
    result = await Executor(registry).execute("origin", {})
    assert result.structured == {"x": 0, "y": 0}
    assert json.loads(result.text) == {"x": 0, "y": 0}


def test_defaults_are_finite():
    defaults = Executor(ToolRegistry())
    assert 0 < defaults.timeout < float("inf")
    assert defaults.output_cap == 65_536  # as the host guide documents
    with pytest.raises(ValueError, match="positive"):
        Executor(ToolRegistry(), timeout=0)


@pytest.mark.parametrize(
    "name", ["nope", "ADD", "Add", " add", "add ", "\uff41\uff44\uff44", "add\n"]
)
async def test_unknown_name_is_404_exact_match_only(registry: ToolRegistry, name: str):
    result = await Executor(registry).execute(name, {"a": 1, "b": 2})
    assert (result.status, result.code) == (404, "unknown_tool")
    assert "Available tools: add, async_add, delete_all, origin." in result.text


@pytest.mark.parametrize("name", [None, 123, [], {}, "", "x" * 200, "../x", "a<b>", CANARY + "\n!"])
async def test_malformed_names_are_404_and_never_echoed(registry: ToolRegistry, name: object):
    result = await Executor(registry).execute(name, {})
    assert (result.status, result.code) == (404, "unknown_tool")
    assert result.text.startswith("The requested tool is not available.")
    assert CANARY not in result.text
    assert "\n" not in result.text
    assert "<" not in result.text


async def test_not_offered_is_403_with_the_unknown_text(registry: ToolRegistry):
    executor = Executor(registry, offered=["add"])
    refused = await executor.execute("delete_all", {"confirm": True})
    unknown = await executor.execute("delete_alll", {"confirm": True})
    assert (refused.status, refused.code) == (403, "not_offered")
    assert (unknown.status, unknown.code) == (404, "unknown_tool")
    assert refused.text.replace("delete_all", "X") == unknown.text.replace("delete_alll", "X")
    assert refused.text.endswith("Available tools: add.")


async def test_read_only_flag_refuses_mutating_tools(registry: ToolRegistry):
    executor = Executor(registry, read_only=True)
    result = await executor.execute("delete_all", {"confirm": True})
    assert (result.status, result.code) == (403, "read_only")
    assert (await executor.execute("add", {"a": 1, "b": 1})).text == "2"


@pytest.mark.parametrize("verdict", ["raise", False])
async def test_require_read_only_hook_point(registry: ToolRegistry, verdict: object):
    seen: list[str] = []

    def require(provider: Any) -> object:
        seen.append(provider.name)
        if verdict == "raise":
            raise PermissionError(f"{provider.name} mutates {CANARY}")
        return verdict

    executor = Executor(registry, require_read_only=require)
    result = await executor.execute("add", {"a": 1, "b": 1})
    assert (result.status, result.code) == (403, "read_only")
    assert CANARY not in result.text
    assert seen == ["add"]


async def test_require_read_only_passing_lets_the_call_run(registry: ToolRegistry):
    executor = Executor(registry, require_read_only=lambda provider: None)
    assert (await executor.execute("add", {"a": 1, "b": 1})).text == "2"


async def test_invalid_input_is_400_naming_path_and_type_never_the_value():
    tool_spy = spy()
    executor = Executor(ToolRegistry([tool_spy]))
    result = await executor.execute("spy", {"n": CANARY})
    assert (result.status, result.code) == (400, "invalid_input")
    assert "n" in result.text
    assert "integer" in result.text
    assert CANARY not in result.text
    extra = await executor.execute("spy", {"n": 1, CANARY: 2})
    assert extra.status == 400
    assert CANARY not in extra.text
    assert tool_spy.call_count == 0


async def test_a_repeated_refusal_names_its_own_problem_and_keeps_pydantics_error():
    reports: list[Any] = []
    executor = Executor(ToolRegistry([add, async_add]), on_tool_error=reports.append, context=RUN)
    cases = [
        ("add", {"a": CANARY, "b": 1}, "at a: expected integer"),
        ("add", {"a": 1}, "at b: expected required field of type integer"),
        ("async_add", {"a": CANARY, "b": 1}, "at a: expected integer"),
        ("add", {"a": 1.5, "b": 1}, "at a: expected integer"),
    ]
    for _ in range(3):
        for name, raw, expected in cases:
            result = await executor.execute(name, raw)
            assert (result.status, result.code) == (400, "invalid_input")
            assert result.text == f"Invalid input for tool '{name}': {expected}"
        assert (await executor.execute("add", {"a": 2.0, "b": 1})).text == "3"
    assert executor.reports.join()
    assert len(reports) == 3 * len(cases)
    for report in reports:
        assert isinstance(report.error, InvalidInputError)
        assert report.error.problems
        assert isinstance(report.error.__cause__, pydantic.ValidationError)  # for logs


@pytest.mark.parametrize(
    "raw", ["", "{", "{'a':1}", '{"n":1,}', "null", "[]", "5", '{"n": NaN}', '{"n":1,"n":2}']
)
async def test_malformed_json_is_400_and_the_tool_never_runs(raw: str):
    tool_spy = spy()
    result = await Executor(ToolRegistry([tool_spy])).execute("spy", raw)
    assert (result.status, result.code) == (400, "invalid_input")
    assert tool_spy.call_count == 0


async def test_order_name_then_read_only_then_input(registry: ToolRegistry):
    executor = Executor(registry, read_only=True, offered=["add", "delete_all"])
    assert (await executor.execute("origin", "garbage")).status == 403  # not offered
    assert (await executor.execute("delete_all", "garbage")).code == "read_only"
    assert (await executor.execute("add", "garbage")).code == "invalid_input"


async def test_policy_deny_is_403_and_sees_the_validated_input(registry: ToolRegistry):
    seen: list[Any] = []

    def policy(provider: Any, value: Any) -> str:
        seen.append((provider.name, value.a))
        return "deny"

    executor = Executor(registry, policy=policy)
    result = await executor.execute("add", {"a": 7, "b": 1})
    assert (result.status, result.code) == (403, "denied")
    assert seen == [("add", 7)]
    invalid = await executor.execute("add", {"a": "x"})
    assert invalid.status == 400
    assert len(seen) == 1


class _Decision:
    def __init__(self, action: str, reason: str | None = None) -> None:
        self.action, self.reason = action, reason


@pytest.mark.parametrize(
    ("decision", "status"),
    [
        ("allow", 200),
        (True, 200),
        (None, 200),
        (_Decision("allow"), 200),
        (False, 403),
        ("deny", 403),
        ("maybe", 403),
        (42, 403),
    ],
)
async def test_policy_decisions(registry: ToolRegistry, decision: object, status: int):
    executor = Executor(registry, policy=lambda provider, value: decision)
    assert (await executor.execute("add", {"a": 1, "b": 1})).status == status


async def test_policy_reason_and_raising_policy(registry: ToolRegistry):
    executor = Executor(registry, policy=lambda p, v: _Decision("deny", "Not on weekends."))
    assert (await executor.execute("add", {"a": 1, "b": 1})).text == "Not on weekends."

    def broken(provider: Any, value: Any) -> str:
        raise RuntimeError(CANARY)

    result = await Executor(registry, policy=broken).execute("add", {"a": 1, "b": 1})
    assert (result.status, result.code) == (403, "denied")
    assert CANARY not in result.text


async def test_ask_without_an_approver_is_refused(registry: ToolRegistry):
    executor = Executor(registry, policy=lambda p, v: "ask")
    result = await executor.execute("delete_all", {"confirm": True})
    assert (result.status, result.code) == (403, "approval_required")


@pytest.mark.parametrize("is_async", [False, True])
async def test_ask_pauses_for_the_approver(registry: ToolRegistry, is_async: bool):
    asked: list[tuple[str, Any]] = []

    def sync_approve(provider: Any, value: Any, context: Any) -> bool:
        asked.append((provider.name, context))
        return bool(value.confirm)

    async def async_approve(provider: Any, value: Any, context: Any) -> bool:
        await asyncio.sleep(0.01)
        return sync_approve(provider, value, context)

    executor = Executor(
        registry,
        policy=lambda p, v: "ask",
        approve=async_approve if is_async else sync_approve,
        context=RUN,
    )
    assert (await executor.execute("delete_all", {"confirm": True})).text == "deleted"
    refused = await executor.execute("delete_all", {"confirm": False})
    assert (refused.status, refused.code) == (403, "denied")
    assert asked == [("delete_all", RUN), ("delete_all", RUN)]


async def test_tool_context_carries_the_caller_context_and_pack_config():
    seen: list[ToolContext] = []
    fake = FakeTool("ctx", result=lambda value, ctx: seen.append(ctx) or "ok")
    executor = Executor(ToolRegistry([fake]), config_for=lambda provider: {"root": "/srv"})
    parent = object()
    context = ToolContext(parent=parent, run_id="r", thread_id="t", user={"id": "u"})
    await executor.execute("ctx", {}, context=context, call_id="c1")
    (ctx,) = seen
    assert (ctx.parent, ctx.run_id, ctx.thread_id, ctx.call_id) == (parent, "r", "t", "c1")
    assert ctx.user == {"id": "u"}
    assert ctx.config == {"root": "/srv"}
    assert isinstance(ctx.abort, threading.Event)
    assert not ctx.abort.is_set()
    assert fake.parents == [parent]


class Counter(Tool):
    """Count calls on one instance."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.count = 0

    def run(self, input: Point) -> int:
        self.count += 1
        return self.count


async def test_a_class_tool_is_built_once_per_parent():
    registry = ToolRegistry([tool(read_only=True)(Counter)])
    executor = Executor(registry)
    texts = [(await executor.execute("counter", {"x": 1, "y": 1})).text for _ in range(3)]
    assert texts == ["1", "2", "3"]
    other = ToolContext(parent="someone else")
    assert (await executor.execute("counter", {"x": 1, "y": 1}, context=other)).text == "1"


async def test_unregistered_mid_call_completes_and_the_next_call_is_unknown():
    started, release = threading.Event(), threading.Event()

    def slow(value: Any) -> str:
        started.set()
        release.wait(5)
        return "finished"

    registry = ToolRegistry([FakeTool("slow", result=slow)])
    executor = Executor(registry)
    call = asyncio.ensure_future(executor.execute("slow", {}))
    await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
    registry.unregister("slow")
    release.set()
    assert (await call).text == "finished"
    assert (await executor.execute("slow", {})).status == 404


async def test_a_foreign_schema_never_retrieves_a_ref(tmp_path: Any):
    target = tmp_path / "ref.json"
    target.write_text('{"type": "string"}')
    schema = {"type": "object", "properties": {"x": {"$ref": target.as_uri()}}}
    fake = FakeTool("foreign", input_schema=schema, result="ran")
    result = await Executor(ToolRegistry([fake])).execute("foreign", {"x": 1})
    # Retrieving the file would make this a 400 (1 is not a string); unresolved, it is
    # the provider's broken schema: a 500 that quotes nothing.
    assert result.is_error
    assert result.status == 500
    assert fake.call_count == 0


def test_execute_sync_runs_sync_and_async_tools(registry: ToolRegistry):
    executor = Executor(registry)
    assert executor.execute_sync("add", {"a": 1, "b": 2}).text == "3"
    assert executor.execute_sync("async_add", {"a": 1, "b": 2}).text == "3"
    assert executor.execute_sync("nope", {}).status == 404
    refused = Executor(registry, policy=lambda p, v: "deny").execute_sync("add", {"a": 1, "b": 2})
    assert refused.status == 403


async def test_module_level_functions(registry: ToolRegistry):
    assert (await toolpalette.execute(registry, "add", {"a": 1, "b": 2})).text == "3"
    results = await toolpalette.execute_many(
        registry, [("add", {"a": 1, "b": 2}), ("nope", {})], offered=["add"]
    )
    assert [r.status for r in results] == [200, 404]


async def test_execute_sync_with_a_policy_works_inside_a_running_loop(registry: ToolRegistry):
    executor = Executor(registry, policy=lambda p, v: "allow")
    assert executor.execute_sync("add", {"a": 1, "b": 2}).text == "3"


async def test_an_async_policy_is_awaited(registry: ToolRegistry):
    async def policy(provider: Any, value: Any) -> str:
        await asyncio.sleep(0)
        return "deny" if provider.name == "delete_all" else "allow"

    executor = Executor(registry, policy=policy)
    assert (await executor.execute("add", {"a": 1, "b": 1})).text == "2"
    assert (await executor.execute("delete_all", {"confirm": True})).status == 403


async def test_a_huge_catalog_is_listed_only_in_part():
    tools = [FakeTool(f"t{i:03d}", result="x") for i in range(150)]
    result = await Executor(ToolRegistry(tools)).execute("nope", {})
    assert result.text.endswith("t099 and 50 more.")
    assert "t100" not in result.text
