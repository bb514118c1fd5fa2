"""Task-supporting tools for the tasks extension's tests (``--thinker tasks_fixture:Tasks``)."""

from __future__ import annotations

import asyncio
import os

import toolpalette
from toolpalette import Thinker, ToolContext, ToolSelector


@toolpalette.tool(read_only=True, task_support="required", timeout=300)
async def slow_pid(seconds: float) -> str:
    """Sleep ``seconds`` seconds, then say which process ran the call."""
    await asyncio.sleep(seconds)
    return str(os.getpid())


@toolpalette.tool(read_only=True)
def worker_pid() -> int:
    """The id of the process that answers (never a task)."""
    return os.getpid()


NAME_FORM = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


@toolpalette.tool(read_only=True, task_support="required", timeout=300)
async def staged_greet(ctx: ToolContext) -> str:
    """Report progress once a task, ask the user's name, and greet them."""
    await asyncio.sleep(0.5)  # outlasts `immediate`: a task by then
    ctx.report_progress(1, 2, "warming up")
    answer = await ctx.elicit("What is your name?", NAME_FORM)
    name = (answer.content or {}).get("name", "nobody")
    return f"hello {name} from {os.getpid()}"


class Tasks(Thinker):
    """Offers ``slow_pid`` and ``staged_greet`` (tasks only), and ``worker_pid``."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(slow_pid).tool(staged_greet).tool(worker_pid)
