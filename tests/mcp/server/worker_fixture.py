"""A palette that says which process ran a call, for ``serve --workers`` tests.

Imported by ``toolpalette serve --thinker worker_fixture:Workers`` in each worker.
"""

from __future__ import annotations

import os

import toolpalette
from toolpalette import Thinker, ToolSelector


@toolpalette.tool(read_only=True)
def worker_pid() -> int:
    """The id of the process that ran this call."""
    return os.getpid()


class Workers(Thinker):
    """Offers ``worker_pid``."""

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(worker_pid)
