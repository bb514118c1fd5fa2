"""Failures are recorded somewhere by default, never with what the model sent.

With no hook and no ``on_tool_error`` callback a failed call used to leave no trace.
Each failure report is now logged on the ``toolpalette.failures`` logger: one line
(tool, status, code, call id, the exception's type), WARNING for a failure and INFO for
the model's own mistake (invalid input, an unknown name), and the traceback at DEBUG.
The WARNING line never holds the input or the exception's message (either may quote
the model or a secret). A host turns it off per executor (``log_failures=False``) or
for the process (the logger's level). Reports carry the validated input once the call
got past validation, and the input as it was sent only when it did not.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest
from toolpalette import (
    Executor,
    Thinker,
    ToolContext,
    ToolErrorReport,
    ToolHub,
    ToolRegistry,
    ToolSelector,
    tool,
)
from toolpalette.testing import LeakCheck, ReportQueue, await_until

CANARY = f"CNRY-{uuid.uuid4().hex[:12]}"
SECRET = f"SECRET-{uuid.uuid4().hex[:12]}"


@tool(read_only=True)
def lookup(key: str, limit: int = 10) -> str:
    """Look a key up; the backend refuses, quoting the key and a secret."""
    raise ValueError(f"backend refused {key!r} with token {SECRET}")


@tool(read_only=True)
def fine(n: int) -> int:
    """Return n."""
    return n


class Looker(Thinker):
    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(lookup).tool(fine)


@pytest.fixture(scope="module", autouse=True)
def _report_thread_started() -> None:
    """The process's report queue delivers on one long-lived thread: started before any
    test's leak check, as a host's first failure would start it."""
    executor = Executor(ToolRegistry([fine]), on_tool_error=lambda report: None)
    executor.execute_sync("fine", "{", context=ToolContext(run_id="warm-up"))
    assert executor.reports.join()


@pytest.fixture
def failures(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="toolpalette.failures")
    return caplog


def _records(caplog: pytest.LogCaptureFixture, run_id: str) -> list[logging.LogRecord]:
    """This test's records on the failure log (the report thread is shared)."""
    return [
        r for r in caplog.records if r.name == "toolpalette.failures" and run_id in r.getMessage()
    ]


def _run() -> ToolContext:
    return ToolContext(run_id=f"run-{uuid.uuid4().hex[:8]}")


async def test_a_failure_with_nobody_listening_is_logged_without_input_or_message(
    failures: pytest.LogCaptureFixture, faults_leaks: LeakCheck
) -> None:
    run = _run()
    executor = Executor(ToolRegistry([lookup]), context=run)  # no hook, no callback
    result = await executor.execute("lookup", {"key": CANARY}, call_id="call_7")
    assert (result.status, result.code) == (500, "internal_error")
    assert executor.reports.join()
    records = _records(failures, run.run_id or "")
    warning = [r for r in records if r.levelno == logging.WARNING]
    assert len(warning) == 1, [r.getMessage() for r in records]
    line = warning[0].getMessage()
    for part in ("lookup", "500", "internal_error", "call_7", "builtins.ValueError"):
        assert part in line
    assert warning[0].exc_info is None
    debug = [
        r for r in failures.records if r.levelno == logging.DEBUG and "call_7" in r.getMessage()
    ]
    assert debug  # the traceback, at DEBUG
    assert debug[0].exc_info is not None
    assert isinstance(debug[0].exc_info[1], ValueError)
    for record in failures.records:
        if record.levelno >= logging.INFO:
            assert CANARY not in record.getMessage()
            assert SECRET not in record.getMessage()


async def test_a_thinkers_failures_are_logged_and_a_made_up_name_is_not_repeated(
    failures: pytest.LogCaptureFixture, faults_leaks: LeakCheck
) -> None:
    hub = ToolHub(autoload=False, config={})
    thinker = faults_leaks.watch(hub.bind(Looker, run_id=f"run-{uuid.uuid4().hex[:8]}"))
    thinker.begin_turn()
    assert (await thinker.call("lookup", {"key": CANARY})).status == 500
    assert (await thinker.call(f"drop {CANARY}", {})).status == 404
    assert (await thinker.call("fine", {"n": CANARY})).status == 400

    def logged() -> list[tuple[int, str]]:
        records = _records(failures, thinker.run_id)
        return [(r.levelno, r.getMessage()) for r in records if r.levelno >= logging.INFO]

    lines = await await_until(lambda: len(logged()) == 3 and logged())
    assert [(level, line.split(":")[0]) for level, line in lines] == [
        (logging.WARNING, "tool lookup failed"),  # the tool's failure
        (logging.INFO, "tool (not a tool name) failed"),  # the model's mistakes
        (logging.INFO, "tool fine failed"),
    ]
    assert all(CANARY not in line and SECRET not in line for _, line in lines)


async def test_the_models_mistakes_are_info_and_a_host_at_warning_gets_no_report_made(
    failures: pytest.LogCaptureFixture, faults_leaks: LeakCheck
) -> None:
    # At WARNING (the root logger's default) a model's invalid input or made-up name
    # logs nothing; with no hook and no callback it is then not even queued.
    failures.set_level(logging.WARNING, logger="toolpalette.failures")
    run = _run()
    reports = ReportQueue()
    executor = Executor(ToolRegistry([fine, lookup]), context=run, reports=reports)
    assert (await executor.execute("fine", {"n": "two"})).code == "invalid_input"
    assert (await executor.execute("nope", {})).code == "unknown_tool"
    assert (await executor.execute("lookup", {"key": "k"})).code == "internal_error"
    assert reports.join()
    assert reports.delivered == 1
    levels = [r.levelno for r in _records(failures, run.run_id or "")]
    assert levels == [logging.WARNING]  # the tool's own failure only


async def test_a_host_turns_the_log_off_per_executor_or_for_the_process(
    failures: pytest.LogCaptureFixture, faults_leaks: LeakCheck
) -> None:
    run = _run()
    reports: list[ToolErrorReport] = []
    quiet = Executor(
        ToolRegistry([lookup]), context=run, log_failures=False, on_tool_error=reports.append
    )
    assert (await quiet.execute("lookup", {"key": "k"})).status == 500
    assert quiet.reports.join()
    assert len(reports) == 1  # its own reporter still gets every report
    logging.getLogger("toolpalette.failures").setLevel(logging.ERROR)
    try:
        loud = Executor(ToolRegistry([lookup]), context=run)
        assert (await loud.execute("lookup", {"key": "k"})).status == 500
        assert loud.reports.join()
    finally:
        logging.getLogger("toolpalette.failures").setLevel(logging.DEBUG)
    assert _records(failures, run.run_id or "") == []


# -- what a report carries -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "sent", "code", "carried"),
    [
        # Past validation: the validated input, as JSON data (the default filled in).
        ("lookup", '{"key": "k"}', "internal_error", {"key": "k", "limit": 10}),
        ("fine", '{"n": 2.0}', "denied", {"n": 2}),
        # Refused before it: exactly what was sent.
        ("fine", '{"n": "two"}', "invalid_input", '{"n": "two"}'),
        ("nope", '{"n": 1}', "unknown_tool", '{"n": 1}'),
    ],
)
async def test_a_report_carries_the_validated_input_once_validation_passed(
    name: str, sent: str, code: str, carried: Any, faults_leaks: LeakCheck
) -> None:
    reports: list[ToolErrorReport] = []
    executor = Executor(
        ToolRegistry([lookup, fine]),
        context=_run(),
        policy=lambda provider, value: "deny" if provider.name == "fine" else "allow",
        on_tool_error=reports.append,
    )
    assert (await executor.execute(name, sent)).code == code
    assert executor.reports.join()
    (report,) = reports
    assert report.input == carried
