"""An executor is made once with its rules; what a turn or a call carries is a `CallScope`."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from toolpalette import (
    CallScope,
    Executor,
    Rules,
    ToolContext,
    ToolErrorReport,
    ToolRegistry,
)
from toolpalette.testing import FakeTool


def _registry() -> ToolRegistry:
    return ToolRegistry([FakeTool("one", result="1"), FakeTool("two", result="2")])


def test_an_executor_is_not_changed_once_made() -> None:
    executor = Executor(_registry(), offered=["one"])
    for name, value in [("offered", None), ("timeout", 60.0), ("context", ToolContext())]:
        with pytest.raises(AttributeError, match="not changed once made"):
            setattr(executor, name, value)
    assert executor.offered == frozenset({"one"})
    assert executor.timeout == 30.0


def test_rules_are_frozen_and_a_variant_is_a_replace() -> None:
    rules = Rules(read_only=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.read_only = False  # type: ignore[misc]
    assert dataclasses.replace(rules, read_only=False) == Rules()


def test_rules_or_the_keywords_that_make_them_not_both() -> None:
    with pytest.raises(TypeError, match="not both"):
        Executor(_registry(), rules=Rules(), read_only=True)


async def test_another_executor_shares_the_rules_of_one() -> None:
    ro = Executor(_registry(), read_only=True)
    other = Executor(ToolRegistry([FakeTool("three", read_only=True, result="3")]), rules=ro.rules)
    assert (await ro.execute("one", {})).code == "read_only"
    assert (await other.execute("three", {})).text == "3"


async def test_a_scope_decides_what_is_offered_for_its_calls() -> None:
    executor = Executor(_registry(), offered=["one"])
    assert (await executor.execute("two", {})).code == "not_offered"  # the default scope
    wider = CallScope(offered=frozenset({"one", "two"}))
    assert (await executor.execute("two", {}, scope=wider)).text == "2"
    narrower = CallScope(offered=frozenset())
    assert (await executor.execute("one", {}, scope=narrower)).code == "not_offered"
    assert executor.execute_sync("two", {}, scope=wider).text == "2"
    [one, two] = await executor.execute_many([("one", {}), ("two", {})], scope=wider)
    assert (one.text, two.text) == ("1", "2")


async def test_a_scope_brings_the_context_and_the_reporters_of_its_calls() -> None:
    seen: list[ToolContext] = []
    reports: list[ToolErrorReport] = []
    registry = ToolRegistry(
        [
            FakeTool("ctx", result=lambda value, ctx: seen.append(ctx) or "ok"),
            FakeTool("boom", raises=RuntimeError("no")),
        ]
    )
    executor = Executor(registry, log_failures=False)
    scope = CallScope(context=ToolContext(run_id="run-1"), reporters=(reports.append,))
    assert (await executor.execute("ctx", {}, scope=scope)).text == "ok"
    assert seen[0].run_id == "run-1"
    assert (await executor.execute("boom", {}, scope=scope)).status == 500
    assert executor.reports.join()
    assert [(r.tool, r.context.run_id) for r in reports] == [("boom", "run-1")]
    # The executor's own scope has neither: a call outside a run is not reported.
    assert (await executor.execute("boom", {})).status == 500
    assert executor.reports.join()
    assert len(reports) == 1


async def test_a_scope_approver_answers_an_ask_instead_of_the_rules() -> None:
    asked: list[str] = []

    def rules_approver(provider: Any, value: Any, ctx: Any) -> bool:
        asked.append("rules")
        return False

    executor = Executor(_registry(), policy=lambda p, v: "ask", approve=rules_approver)
    assert (await executor.execute("one", {})).code == "denied"
    yes = CallScope(approver=lambda provider, value, ctx: asked.append("scope") or True)
    assert (await executor.execute("one", {}, scope=yes)).text == "1"
    assert asked == ["rules", "scope"]
