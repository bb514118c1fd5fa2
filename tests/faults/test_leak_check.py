"""The leak check itself: it sees each kind of leftover, and lets what is ending end.

It tells a pool's idle thread from a busy one by the mark the thread sets itself, never by
reading the thread's frames: those tests make any such read fail.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import NoReturn

import pytest
import toolpalette
from toolpalette import ToolContext
from toolpalette.testing import (
    LeakCheck,
    LeakError,
    ReportQueue,
    WorkerPool,
    fake_tool,
    leak_check,
    make_registry,
    wait_until,
)


def test_a_thread_left_running_is_a_leak() -> None:
    stop = threading.Event()
    check = leak_check(deadline=0.2)
    check.start()
    thread = threading.Thread(target=stop.wait, name="stray")
    thread.start()
    try:
        with pytest.raises(LeakError, match="thread 'stray'"):
            check.check()
    finally:
        stop.set()
        thread.join()
    check.check()  # once it ended, nothing is left


def test_a_thread_that_is_ending_is_waited_for() -> None:
    release = threading.Event()
    with leak_check(deadline=10):
        thread = threading.Thread(target=release.wait, name="ending")
        thread.start()
        # Released as the check starts waiting: it must wait, not fail at once.
        threading.Timer(0.05, release.set).start()


def test_an_open_file_is_a_leak(tmp_path) -> None:
    check = leak_check(deadline=0.1)
    check.start()
    fd = os.open(tmp_path / "f", os.O_CREAT | os.O_WRONLY)
    try:
        with pytest.raises(LeakError, match=f"file descriptor {fd} open"):
            check.check()
    finally:
        os.close(fd)
    check.check()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="child processes are read from /proc")
def test_a_child_process_is_a_leak() -> None:
    check = leak_check(deadline=0.1)
    check.start()
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        with pytest.raises(LeakError, match=f"child process {child.pid}"):
            check.check()
    finally:
        child.communicate(b"")
    check.check()


async def test_a_pending_task_is_a_leak(faults_leaks: LeakCheck) -> None:
    gate = asyncio.Event()
    check = LeakCheck(deadline=0.1)
    await check.__aenter__()
    task = asyncio.create_task(gate.wait(), name="stray-task")
    with pytest.raises(LeakError, match="asyncio task 'stray-task'"):
        await check.__aexit__(None, None, None)
    gate.set()
    await task


async def test_a_pending_approval_is_a_leak(faults_leaks: LeakCheck) -> None:
    class Waiting:
        def __init__(self) -> None:
            self.pending = ["approval"]

        def pending_approvals(self) -> list[str]:
            return self.pending

    thinker = Waiting()
    check = LeakCheck(deadline=0.05)
    with pytest.raises(LeakError, match="1 pending approval"):
        async with check:
            check.watch(thinker)
    thinker.pending = []
    async with LeakCheck() as again:
        assert again.watch(thinker) is thinker


async def test_idle_pool_workers_are_not_leaks() -> None:
    def slow() -> str:
        """Answer from a worker thread."""
        return "ok"

    registry = make_registry(toolpalette.tool(slow))
    async with LeakCheck():
        result = await toolpalette.execute(registry, "slow", {})
        assert result.text == "ok"
        await asyncio.to_thread(lambda: None)  # the loop's default executor, idle after


async def test_a_hung_tool_is_a_leak() -> None:
    release = threading.Event()

    def hangs() -> str:
        """Wait for the test."""
        release.wait()
        return "late"

    registry = make_registry(toolpalette.tool(timeout=0.05)(hangs))
    check = LeakCheck(deadline=0.1)
    await check.__aenter__()
    try:
        result = await toolpalette.execute(registry, "hangs", {})
        assert result.status == 504
        with pytest.raises(LeakError, match="thread 'toolpalette-worker'"):
            await check.__aexit__(None, None, None)
    finally:
        release.set()
    await check.__aexit__(None, None, None)  # released: the worker goes back to idle


@pytest.fixture
def no_frame_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make reading another thread's stack fail the test, as it can crash CPython 3.11."""

    def read(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("the leak check read another thread's frames")

    monkeypatch.setattr(sys, "_current_frames", read)
    monkeypatch.setattr(faulthandler, "dump_traceback", read)


async def test_the_check_tells_an_idle_worker_from_a_busy_one_without_reading_frames(
    no_frame_reading: None,
) -> None:
    release = threading.Event()

    def quick() -> str:
        """Answer at once."""
        return "ok"

    def hangs() -> str:
        """Wait for the test."""
        release.wait()
        return "late"

    registry = make_registry(toolpalette.tool(quick), toolpalette.tool(timeout=0.05)(hangs))
    executor = toolpalette.Executor(registry, pool=WorkerPool(max_workers=2))
    check, on_loop = leak_check(deadline=0.2), LeakCheck(deadline=0.2)
    check.start()
    await on_loop.__aenter__()
    assert (await executor.execute("quick", {})).text == "ok"
    await asyncio.to_thread(lambda: None)  # the loop's default executor: the loop's threads
    check.check()  # the worker that ran `quick` waits for the next call: idle
    assert (await executor.execute("hangs", {})).status == 504
    try:
        # The same worker, or a second one, still runs `hangs`: busy, whichever way the
        # check is used.
        with pytest.raises(LeakError, match="thread 'toolpalette-worker'") as info:
            check.check()
        assert len(info.value.leaks) == 1
        with pytest.raises(LeakError, match="thread 'toolpalette-worker'"):
            await on_loop.__aexit__(None, None, None)
    finally:
        release.set()
    check.deadline = on_loop.deadline = 5.0
    check.check()  # released: its worker ends or goes back to idle
    await on_loop.__aexit__(None, None, None)


async def test_a_reporter_that_never_returns_is_a_leak_and_the_idle_report_thread_is_not(
    no_frame_reading: None,
) -> None:
    entered, release = threading.Event(), threading.Event()

    def blocking_reporter(report: object) -> None:
        entered.set()
        release.wait()

    reports = ReportQueue()
    registry = make_registry(fake_tool("fails", raises=RuntimeError("boom")))
    executor = toolpalette.Executor(
        registry, context=ToolContext(), reports=reports, on_tool_error=blocking_reporter
    )
    check = leak_check(deadline=0.2)
    check.start()
    assert (await executor.execute("fails", {})).status == 500
    wait_until(entered.is_set)
    try:
        with pytest.raises(LeakError, match="thread 'toolpalette-reports'"):
            check.check()
    finally:
        release.set()
    assert reports.join()
    check.check()  # delivered: the report thread waits for the next report


def test_the_watchdog_started_during_a_check_is_not_a_leak(tmp_path: Path) -> None:
    # A fresh interpreter, so the loop-stall watchdog starts inside the check (in this
    # process an earlier test started it long ago).
    script = tmp_path / "watchdog_in_check.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio, faulthandler, sys, threading

            import toolpalette
            from toolpalette.testing import leak_check, make_registry

            def read(*args, **kwargs):
                raise AssertionError("the leak check read another thread's frames")

            @toolpalette.tool
            async def step() -> str:
                \"\"\"Suspend once, then answer.\"\"\"
                await asyncio.sleep(0)
                return "ok"

            sys._current_frames = read
            faulthandler.dump_traceback = read
            with leak_check() as check:
                result = asyncio.run(toolpalette.execute(make_registry(step), "step", {}))
                assert result.text == "ok", result.text
            names = [t.name for t in threading.enumerate()]
            assert "toolpalette-watchdog" in names, names
            print("clean")
            """
        )
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "clean"
