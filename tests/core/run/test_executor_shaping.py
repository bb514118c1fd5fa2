"""Error shaping: a ToolError keeps its fields; anything else is a generic text."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from toolpalette import Executor, ToolContext, ToolError, ToolRegistry
from toolpalette.testing import FakeTool

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup, ExceptionGroup
else:
    from builtins import BaseExceptionGroup, ExceptionGroup

CANARY = "CNRY-41c0d9e2"
RUN = ToolContext(run_id="run")


def chained() -> Exception:
    try:
        try:
            raise KeyError(f"inner {CANARY}")
        except KeyError as inner:
            raise RuntimeError(f"outer {CANARY}") from inner
    except RuntimeError as exc:
        return exc


class LeakyStr(Exception):
    def __str__(self) -> str:
        return f"leak {CANARY}"


class BrokenStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError(CANARY)


FAILURES = [
    ValueError(f"db password={CANARY}"),
    chained(),
    ExceptionGroup("many", [ValueError(CANARY), TypeError(CANARY)]),
    ExceptionGroup("two tool errors", [ToolError(CANARY), ToolError(CANARY)]),
    BaseExceptionGroup("base", [SystemExit(CANARY)]),
    LeakyStr(),
    BrokenStr(),
    OSError(2, CANARY, f"/secret/{CANARY}"),
    SystemExit(CANARY),
    asyncio.CancelledError(CANARY),
    GeneratorExit(CANARY),
]


async def _run(error: BaseException, *, is_async: bool) -> tuple[Any, list[Any]]:
    reports: list[Any] = []

    def fail(value: Any) -> str:
        raise error

    async def afail(value: Any) -> str:
        await asyncio.sleep(0)
        raise error

    tool = FakeTool("leaky", result=afail if is_async else fail, is_async=is_async)
    executor = Executor(ToolRegistry([tool]), on_tool_error=reports.append, context=RUN)
    result = await executor.execute("leaky", {})
    assert executor.reports.join()
    return result, reports


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("error", FAILURES, ids=lambda e: type(e).__name__)
async def test_other_exceptions_become_generic_text(error: BaseException, is_async: bool):
    result, reports = await _run(error, is_async=is_async)
    assert (result.status, result.code) == (500, "internal_error")
    assert result.text.startswith("Tool 'leaky' failed with an internal error.")
    assert CANARY not in result.to_json()
    (report,) = reports
    assert report.error is error  # the whole picture goes to the report
    assert report.code == "internal_error"


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_tool_error_keeps_its_fields(is_async: bool):
    error = ToolError("Try again in a minute.", code="quota", status=429)
    result, reports = await _run(error, is_async=is_async)
    assert (result.status, result.code, result.text) == (429, "quota", "Try again in a minute.")
    assert reports[0].error is error


async def test_a_single_tool_error_inside_a_group_is_unwrapped():
    error = ExceptionGroup("task group", [ToolError("Not found.", code="not_found", status=404)])
    result, _ = await _run(error, is_async=True)
    assert (result.status, result.code, result.text) == (404, "not_found", "Not found.")


MAX_MESSAGE = 2000  # the host guide: a ToolError message is cut to 2,000 characters


async def test_a_long_tool_error_message_is_cut():
    result, _ = await _run(ToolError("x" * (MAX_MESSAGE * 3)), is_async=False)
    assert len(result.text) == MAX_MESSAGE
    assert result.text.endswith("…")


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        (200, "fine", (422, "fine")),
        (True, "x", (422, "x")),
        ("500", "x", (422, "x")),
        (503, "has space", (503, "tool_error")),
        (418, None, (418, "tool_error")),
        (404, "a" * 65, (404, "tool_error")),
    ],
)
async def test_tool_error_fields_are_sanitized(status: Any, code: Any, expected: Any):
    result, _ = await _run(ToolError("Nope.", code=code, status=status), is_async=False)
    assert (result.status, result.code) == expected
    assert result.is_error


async def test_an_empty_tool_error_message_gets_a_neutral_text():
    result, _ = await _run(ToolError(""), is_async=False)
    assert result.text == "Tool 'leaky' reported an error."


async def test_a_tool_that_cannot_be_built_is_a_500():
    class Unbuildable(FakeTool):
        def create(self, parent: Any = None) -> Any:
            raise RuntimeError(CANARY)

    result = await Executor(ToolRegistry([Unbuildable("u")])).execute("u", {})
    assert (result.status, result.code) == (500, "internal_error")
    assert CANARY not in result.text


async def test_canaries_in_input_never_reach_the_text_but_reach_the_report():
    reports: list[Any] = []

    def fail(value: Any) -> str:
        raise ValueError(f"bad value {value['q']}")

    tool = FakeTool("search", result=fail)
    executor = Executor(ToolRegistry([tool]), on_tool_error=reports.append, context=RUN)
    result = await executor.execute("search", {"q": CANARY})
    assert CANARY not in result.to_json()
    assert executor.reports.join()
    assert reports[0].input == {"q": CANARY}
    assert CANARY in str(reports[0].error)
