"""The leak check itself: it sees each kind of leftover, and lets what is ending end."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

import pytest
import toolpalette
from toolpalette.testing import LeakCheck, LeakError, leak_check, make_registry


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
