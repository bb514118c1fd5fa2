"""A palette in code mode, for the ``run_code`` tests in-process and through ``serve``.

Imported by ``toolpalette serve --thinker code_fixture:Coder``; a person approves each
call of ``approved_pid``. Each tool says which process ran it.
"""

from __future__ import annotations

import os
from typing import Any

import toolpalette
from toolpalette import CodeLimits, Thinker, ToolPolicy, ToolSelector

RAN: list[str] = []
"""The calls run in this process (read by the in-process tests)."""


@toolpalette.tool(read_only=True)
def record_size(name: str) -> dict[str, Any]:
    """The size of one record, and the process that read it."""
    RAN.append(f"size {name}")
    return {"name": name, "size": len(name), "pid": os.getpid()}


@toolpalette.tool(read_only=True)
def add_up(values: list[int]) -> int:
    """Add numbers up."""
    RAN.append("add_up")
    return sum(values)


@toolpalette.tool
def approved_pid(note: str) -> int:
    """The id of the process that ran this call, once a person approved it."""
    RAN.append(f"approved {note}")
    return os.getpid()


class Coder(Thinker):
    """Code mode over the tools above; ``approved_pid`` is asked about at each call."""

    code_mode = True
    code_limits = CodeLimits(wall_time=20.0)

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(record_size).tool(add_up).tool(approved_pid)

    def __init__(self, hub: Any, conversation: Any = None, **options: Any) -> None:
        options.setdefault("policy", ToolPolicy(ask=["approved_pid"]))
        super().__init__(hub, conversation, **options)


FIVE_CALLS = """
sizes = [record_size(name=n)["size"] for n in ["a", "bb", "ccc", "dddd"]]
add_up(values=sizes)
"""

THIRD_ASKS = """
first = record_size(name="one")["pid"]
second = record_size(name="two")["pid"]
try:
    third = approved_pid(note="three")
except PermissionError as error:
    third = str(error)
print("after the third")
[first, second, third]
"""
