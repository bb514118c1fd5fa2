"""Task-supporting tools for the tasks extension's tests (``--thinker tasks_fixture:Tasks``)."""

from __future__ import annotations

import asyncio
import os

import toolpalette
from toolpalette import Thinker, ToolSelector


@toolpalette.tool(read_only=True, task_support="required", timeout=300)
async def slow_pid(seconds: float) -> str:
    """Sleep ``seconds`` seconds, then say which process ran the call."""
    await asyncio.sleep(seconds)
    return str(os.getpid())


@toolpalette.tool(read_only=True)
def worker_pid() -> int:
    """The id of the process that answers (never a task)."""
    return os.getpid()


class Tasks(Thinker):
    """Offers ``slow_pid`` (tasks only) and ``worker_pid``."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(slow_pid).tool(worker_pid)
