"""Hooks of a test pack that leaves a trace when imported (for blocking tests)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import toolpalette

_SENTINEL = os.environ.get("TP_TESTPACK_SENTINEL")
if _SENTINEL:
    Path(_SENTINEL).write_text("imported", encoding="utf-8")


@toolpalette.tool(read_only=True)
def side_tool() -> str:
    """A tool of the side-effect pack."""
    return "side"


@toolpalette.hookimpl
def toolpalette_register_tools() -> Any:
    return [side_tool]
