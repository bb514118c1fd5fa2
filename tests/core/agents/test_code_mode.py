"""Code mode: run_code's script calls the palette's tools, each through the pipeline."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from toolpalette import (
    Approval,
    CodeLimits,
    Thinker,
    ToolError,
    ToolHub,
    ToolPolicy,
    ToolSelector,
    tool,
)
from toolpalette.testing import LeakCheck

pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")

RAN: list[str] = []


@tool(read_only=True)
def read_record(name: str) -> dict[str, Any]:
    """Read one record by name.

    Args:
        name: the record's name.
    """
    RAN.append(f"read {name}")
    return {"name": name, "size": len(name)}


@tool(read_only=True)
def total(values: list[int], offset: int = 0) -> int:
    """Add numbers up."""
    RAN.append("total")
    return sum(values) + offset


@tool(read_only=True)
def fragile() -> str:
    """Always fails."""
    raise ToolError("The archive is closed today.", code="closed", status=409)


@tool
def write_record(name: str) -> str:
    """Write a record (mutating)."""
    RAN.append(f"write {name}")
    return f"wrote {name}"


class Coder(Thinker):
    code_mode = True
    code_limits = CodeLimits(wall_time=5.0)

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(read_record).tool(total).tool(fragile).tool(write_record)


class ReadOnlyCoder(Coder):
    read_only = True


class Plain(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(read_record)


FIVE_CALLS = """
sizes = [read_record(name=n)["size"] for n in ["a", "bb", "ccc", "dddd"]]
print("sizes", sizes)
total(values=sizes, offset=1)
"""


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _result(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    return data


async def test_code_mode_is_off_by_default() -> None:
    turn = ToolHub(autoload=False, config={}).bind(Plain).begin_turn()
    assert "run_code" not in turn.surface.name_set


async def test_the_api_is_generated_from_the_schemas() -> None:
    turn = ToolHub(autoload=False, config={}).bind(Coder).begin_turn()
    run_code = next(p for p in turn.surface.providers if p.name == "run_code")
    description = run_code.description
    assert "def read_record(*, name: str) -> dict:" in description
    assert "name: the record's name." in description
    assert "def total(*, values: list[int], offset: int = 0) -> int:" in description
    assert run_code.input_schema["required"] == ["code"]
    # the tools offered directly stay offered
    assert {"read_record", "total", "write_record"} <= turn.surface.name_set


async def test_a_five_call_job_runs_in_one_script_each_call_on_the_ledger() -> None:
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Coder)
    result = await thinker.call("run_code", {"code": FIVE_CALLS}, call_id="script-1")
    assert not result.is_error, result.text
    assert result.structured == {"result": 11, "printed": "sizes [1, 2, 3, 4]\n", "calls": 5}
    assert RAN == ["read a", "read bb", "read ccc", "read dddd", "total"]
    inner = [r for r in hub.grants() if r.parent == "script-1"]
    assert [r.name for r in inner] == ["read_record"] * 4 + ["total"]
    assert [r.call_id for r in inner] == [f"script-1.{i}" for i in range(1, 6)]
    assert {r.decision for r in inner} == {"granted"}


async def test_a_tool_error_is_an_exception_the_script_catches() -> None:
    code = """
try:
    fragile()
    seen = None
except Exception as error:
    seen = str(error)
seen
"""
    thinker = ToolHub(autoload=False, config={}).bind(Coder)
    result = await thinker.call("run_code", {"code": code})
    assert result.structured is not None
    assert result.structured["result"] == "409 closed: The archive is closed today."


async def test_bad_input_to_a_tool_is_the_pipelines_400_as_a_value_error() -> None:
    code = """
try:
    total(values="not a list")
except ValueError as error:
    message = str(error)
message
"""
    thinker = ToolHub(autoload=False, config={}).bind(Coder)
    result = await thinker.call("run_code", {"code": code})
    assert result.structured is not None
    assert result.structured["result"].startswith("400 invalid_input")
    assert RAN == []


async def test_a_read_only_thinkers_script_cannot_reach_a_mutating_tool() -> None:
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(ReadOnlyCoder)
    turn = thinker.begin_turn()
    run_code = next(p for p in turn.surface.providers if p.name == "run_code")
    assert run_code.read_only
    assert "write_record" not in run_code.description
    for spelling in ("write_record(name='x')", "write-record(name='x')"):
        result = await thinker.call("run_code", {"code": spelling})
        assert result.is_error
        assert result.status == 400
    code = "try:\n    write_record(name='x')\nexcept NameError as e:\n    r = str(e)\nr"
    result = await thinker.call("run_code", {"code": code})
    assert result.structured is not None
    assert "not defined" in result.structured["result"]
    assert RAN == []


async def test_approving_the_script_approves_none_of_its_calls() -> None:
    asked: list[Approval] = []

    def approver(approval: Approval) -> None:
        asked.append(approval)
        thinker.resolve_approval(approval.token, approve=False)

    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Coder, policy=ToolPolicy(ask=["write_record"]), approver=approver)
    code = "try:\n    write_record(name='x')\nexcept PermissionError as e:\n    r = str(e)\nr"
    result = await thinker.call("run_code", {"code": code}, approved=True)
    assert [a.name for a in asked] == ["write_record"]
    assert result.structured is not None
    assert result.structured["result"].startswith("403 denied")
    assert RAN == []


async def test_an_approval_pauses_the_script_and_covers_one_call() -> None:
    asked: list[Approval] = []
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Coder, policy=ToolPolicy(ask=["write_record"]), approver=asked.append)
    code = """
read_record(name="a")
read_record(name="b")
first = write_record(name="one")
try:
    second = write_record(name="two")
except PermissionError as error:
    second = str(error)
[first, second]
"""
    task = asyncio.ensure_future(thinker.call("run_code", {"code": code}, call_id="s"))
    for answer in (True, False):
        while len(asked) < (1 if answer else 2):
            await asyncio.sleep(0.01)
        assert RAN[-1] == ("read b" if answer else "write one")  # paused before the call
        thinker.resolve_approval(asked[-1].token, approve=answer)
    result = await asyncio.wait_for(task, 10)
    assert result.structured is not None
    first, second = result.structured["result"]
    assert first == "wrote one"
    assert second.startswith("403 denied")
    assert RAN == ["read a", "read b", "write one"]
    assert [(a.call_id, a.parent) for a in asked] == [("s.3", "s"), ("s.4", "s")]
    decisions = [
        (r.call_id, r.decision, r.reason) for r in hub.grants() if r.name == "write_record"
    ]
    assert decisions == [
        ("s.3", "granted", "a person's decision"),
        ("s.3", "granted", "run_code: ok"),
        ("s.4", "refused", "a person's decision"),
        ("s.4", "refused", "run_code: 403 denied"),
    ]
    assert {r.parent for r in hub.grants()} == {"s"}


async def test_a_bound_ends_the_script_with_a_4xx() -> None:
    class Tight(Coder):
        code_limits = CodeLimits(wall_time=1.0, tool_calls=3, output_bytes=200)

    thinker = ToolHub(autoload=False, config={}).bind(Tight)
    cases = {
        "for i in range(5):\n    read_record(name='a')": (429, "too_many_calls"),
        "print('x' * 1000)": (413, "output_too_large"),
        "'y' * 1000": (413, "output_too_large"),
        "while True:\n    pass": (408, "script_timeout"),
    }
    for code, (status, error) in cases.items():
        result = await thinker.call("run_code", {"code": code})
        assert (result.status, result.code) == (status, error), code
    assert RAN == ["read a"] * 3


async def test_the_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="positive"):
        CodeLimits(tool_calls=0)


async def test_a_script_leaves_nothing_behind() -> None:
    thinker = ToolHub(autoload=False, config={}).bind(Coder)
    await thinker.call("run_code", {"code": "1"})  # the sandbox's runtime starts once
    async with LeakCheck():
        result = await thinker.call("run_code", {"code": FIVE_CALLS})
    assert result.structured is not None
    assert result.structured["result"] == 11


async def test_each_inner_call_is_a_span_under_the_scripts() -> None:
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="needs opentelemetry-sdk")
    import toolpalette
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    toolpalette.configure_telemetry(tracer_provider=provider)
    try:
        thinker = ToolHub(autoload=False, config={}).bind(Coder)
        result = await thinker.call("run_code", {"code": FIVE_CALLS}, call_id="script-9")
    finally:
        toolpalette.configure_telemetry()
    assert not result.is_error, result.text
    spans = {s.attributes["gen_ai.tool.call.id"]: s for s in exporter.get_finished_spans()}
    outer = spans["script-9"]
    inner = [spans[f"script-9.{i}"] for i in range(1, 6)]
    assert all(s.parent is not None and s.parent.span_id == outer.context.span_id for s in inner)
    assert [s.attributes["gen_ai.tool.name"] for s in inner] == ["read_record"] * 4 + ["total"]


@tool(read_only=True, name="rare-lookup")
def rare_lookup(key: str) -> str:
    """Look a rare key up (deferred)."""
    RAN.append(f"rare {key}")
    return f"value of {key}"


class Searching(Coder):
    tool_search = "search"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(read_record).tool(rare_lookup, deferred=True)


async def test_with_a_searched_catalog_deferred_tools_are_called_by_name_not_listed() -> None:
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Searching)
    turn = thinker.begin_turn()
    run_code = next(p for p in turn.surface.providers if p.name == "run_code")
    assert "rare" not in run_code.description
    assert "search_tools" in run_code.description
    assert "search_tools" in turn.surface.name_set
    result = await thinker.call("run_code", {"code": "rare_lookup(key='k')"}, call_id="s")
    assert result.structured is not None
    assert result.structured["result"] == "value of k"
    # its function is its name made an identifier (rare-lookup is rare_lookup)
    assert [(r.name, r.parent) for r in hub.grants() if r.name == "rare-lookup"][-1] == (
        "rare-lookup",
        "s",
    )


class Line:
    """A caller's channel: what the approval of a script's call must name."""

    def log(self, level: str, message: str, data: Any = None) -> None:
        return None


async def test_a_scripts_calls_are_made_for_its_caller() -> None:
    asked: list[Approval] = []
    hub = ToolHub(autoload=False, config={})
    thinker = hub.bind(Coder, policy=ToolPolicy(ask=["write_record"]), approver=asked.append)
    line = Line()
    code = 'read_record(name="a")\nwrite_record(name="w")'
    task = asyncio.ensure_future(
        thinker.call(
            "run_code",
            {"code": code},
            call_id="p",
            channel=line,  # type: ignore[arg-type]  # logs only: all the script needs
            principal="user:erin",
        )
    )
    while not asked:
        await asyncio.sleep(0.01)
    # The approval names the script's caller: its principal, and its channel to ask on.
    assert (asked[0].principal, asked[0].channel, asked[0].call_id) == ("user:erin", line, "p.2")
    thinker.resolve_approval(asked[0].token, approve=True)
    result = await asyncio.wait_for(task, 10)
    assert not result.is_error, result.text
    inner = [(r.call_id, r.principal) for r in hub.grants() if r.parent == "p"]
    assert inner
    assert set(inner) == {("p.1", "user:erin"), ("p.2", "user:erin")}
