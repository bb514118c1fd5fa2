"""Hooks of the twice test pack: two entry points name this one module."""

from __future__ import annotations

from typing import Any

import toolpalette


@toolpalette.tool(read_only=True)
def twice_tool() -> str:
    """Say that this tool is offered once."""
    return "once"


@toolpalette.hookimpl
def toolpalette_register_tools() -> Any:
    return twice_tool
