"""A palette that says which process ran a call, for ``serve --workers`` tests.

Imported by ``toolpalette serve --thinker worker_fixture:Workers`` in each worker. Its
deferred tools are reached through ``search_tools`` (or called by name, or through
``call_tool``); a person approves each call of ``approved_pid``.
"""

from __future__ import annotations

import os
from typing import Any

import toolpalette
from toolpalette import Thinker, ToolPolicy, ToolSelector


@toolpalette.tool(read_only=True)
def worker_pid() -> int:
    """The id of the process that ran this call."""
    return os.getpid()


@toolpalette.tool(read_only=True)
def deferred_pid() -> int:
    """The id of the worker process that ran this deferred call."""
    return os.getpid()


@toolpalette.tool
def approved_pid(note: str) -> int:
    """The id of the worker process that ran this call, once a person approved it."""
    return os.getpid()


class Workers(Thinker):
    """Offers ``worker_pid``; ``deferred_pid`` and ``approved_pid`` are deferred."""

    tool_search = "search"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        selector = ToolSelector().tool(worker_pid)
        return selector.tool(deferred_pid, deferred=True).tool(approved_pid, deferred=True)

    def __init__(self, hub: Any, conversation: Any = None, **options: Any) -> None:
        options.setdefault("policy", ToolPolicy(ask=["approved_pid"]))
        super().__init__(hub, conversation, **options)
